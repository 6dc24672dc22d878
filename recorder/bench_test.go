package recorder_test

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/tasksim/tasksim/internal/ssebench"
	"github.com/tasksim/tasksim/recorder"
	"github.com/tasksim/tasksim/traces"
)

// Benchmark settings.
const (
	benchMinEvents = 3000  // events per path in the latency run, at least
	benchBlock     = 500   // events per block of the latency run
	benchBurst     = 50000 // events per throughput run
)

// BenchmarkProxySSE measures, in one run, an SSE stream read directly and
// through the recording proxy (recording to a file):
//
//   - latency: at 1,000 events/s, blocks of 500 events direct and through
//     the proxy in turn, 3,000 each; the percentiles of event latency
//     (written -> read) both ways, and added = proxy - direct;
//   - throughput: bursts of 50,000 events written as fast as the server
//     can, events/s at the client both ways and their ratio, and the rate
//     at which the proxy recorded them (until its backlog was written).
//
// The metrics are the result; ns/op means nothing here.
func BenchmarkProxySSE(b *testing.B) {
	src := &http.Server{Handler: ssebench.Source()}
	srcLn, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	go src.Serve(srcLn)
	defer src.Close()
	direct := "http://" + srcLn.Addr().String()

	w, err := traces.Create(filepath.Join(b.TempDir(), "bench.trace"), traces.Header{}, nil)
	if err != nil {
		b.Fatal(err)
	}
	u, _ := url.Parse(direct)
	p, err := recorder.NewProxy(u, w, nil)
	if err != nil {
		b.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() { p.Serve(ctx, ln) })
	defer func() {
		cancel()
		wg.Wait()
		if err := w.Close(); err != nil {
			b.Error(err)
		}
	}()
	proxied := "http://" + ln.Addr().String()
	c := &http.Client{Transport: &http.Transport{DisableCompression: true}}

	b.Run("latency", func(b *testing.B) {
		// Warm both paths up.
		ssebench.Read(b, c, direct+"/burst?n=100")
		ssebench.Read(b, c, proxied+"/burst?n=100")
		// Blocks of events direct and through the proxy, one after the
		// other, so that both see the machine's load of the moment.
		blocks := max(b.N, benchMinEvents) / benchBlock
		q := fmt.Sprintf("/paced?n=%d", benchBlock)
		b.ResetTimer()
		var d, pr []time.Duration
		for range blocks {
			lat, _ := ssebench.Read(b, c, direct+q)
			d = append(d, lat...)
			lat, _ = ssebench.Read(b, c, proxied+q)
			pr = append(pr, lat...)
		}
		b.StopTimer()
		if n := blocks * benchBlock; len(d) != n || len(pr) != n {
			b.Fatalf("%d and %d events, want %d", len(d), len(pr), n)
		}
		b.ReportMetric(ssebench.Micros(ssebench.Percentile(d, 0.5)), "direct-p50-µs")
		b.ReportMetric(ssebench.Micros(ssebench.Percentile(d, 0.99)), "direct-p99-µs")
		b.ReportMetric(ssebench.Micros(ssebench.Percentile(pr, 0.5)), "proxy-p50-µs")
		b.ReportMetric(ssebench.Micros(ssebench.Percentile(pr, 0.99)), "proxy-p99-µs")
		b.ReportMetric(ssebench.Micros(ssebench.Percentile(pr, 0.5)-ssebench.Percentile(d, 0.5)), "added-p50-µs")
		b.ReportMetric(ssebench.Micros(ssebench.Percentile(pr, 0.99)-ssebench.Percentile(d, 0.99)), "added-p99-µs")
	})

	b.Run("throughput", func(b *testing.B) {
		q := fmt.Sprintf("/burst?n=%d", benchBurst)
		ssebench.Read(b, c, direct+"/burst?n=1000")
		ssebench.Read(b, c, proxied+"/burst?n=1000")
		drain(p)
		b.ResetTimer()
		var dt, pt, rt time.Duration
		for range b.N {
			_, d := ssebench.Read(b, c, direct+q)
			start := time.Now()
			_, pd := ssebench.Read(b, c, proxied+q)
			drain(p) // recording catches up before the next direct run
			dt += d
			pt += pd
			rt += time.Since(start)
		}
		b.StopTimer()
		events := float64(benchBurst * b.N)
		b.ReportMetric(events/dt.Seconds(), "direct-events/s")
		b.ReportMetric(events/pt.Seconds(), "proxy-events/s")
		b.ReportMetric(events/rt.Seconds(), "recorded-events/s")
		b.ReportMetric(dt.Seconds()/pt.Seconds(), "throughput-ratio")
		b.ReportMetric(dt.Seconds()/rt.Seconds(), "recorded-ratio")
	})
}

// drain waits until the proxy recorded everything that passed.
func drain(p *recorder.Proxy) {
	for p.Pending() > 0 {
		time.Sleep(time.Millisecond)
	}
}
