package recorder_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/tasksim/tasksim/mcp/sse"
	"github.com/tasksim/tasksim/recorder"
	"github.com/tasksim/tasksim/traces"
)

// Benchmark settings.
const (
	benchRate       = 1000  // events per second in the latency runs
	benchMinEvents  = 3000  // events per path in the latency run, at least
	benchBlock      = 500   // events per block of the latency run
	benchBurst      = 50000 // events per throughput run
	benchPayloadPad = 120   // bytes of padding in each event's data
)

// benchEpoch is the clock both ends of a benchmark read: event stamps are
// monotonic offsets from it.
var benchEpoch = time.Now()

// sseSource is a minimal SSE server. GET /paced?n=N sends N events at
// benchRate per second, each stamped with the time it was written; the
// pacer wakes up, writes every event that is due (one write and flush
// each), and sleeps until the next is due, so a late wake-up does not
// lower the rate. GET /burst?n=N writes N events as fast as it can.
func sseSource() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n, _ := strconv.Atoi(r.URL.Query().Get("n"))
		w.Header().Set("Content-Type", "text/event-stream")
		w.Header().Set("Cache-Control", "no-cache")
		w.WriteHeader(http.StatusOK)
		rc := http.NewResponseController(w)
		_ = rc.Flush()
		pad := bytes.Repeat([]byte("x"), benchPayloadPad)
		var buf []byte
		send := func(i int) error {
			buf = fmt.Appendf(buf[:0], "id: %d\nevent: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"progressToken\":%d,\"t\":%d,\"pad\":\"%s\"}}\n\n",
				i, i, time.Since(benchEpoch), pad)
			if _, err := w.Write(buf); err != nil {
				return err
			}
			return rc.Flush()
		}
		if r.URL.Path == "/burst" {
			for i := range n {
				if send(i) != nil {
					return
				}
			}
			return
		}
		start := time.Now()
		interval := time.Second / benchRate
		for sent := 0; sent < n; {
			due := min(n, int(time.Since(start)/interval)+1)
			for ; sent < due; sent++ {
				if send(sent) != nil {
					return
				}
			}
			if sent < n {
				time.Sleep(time.Until(start.Add(time.Duration(sent) * interval)))
			}
		}
	})
}

// readStream GETs url and returns, for each event, how long it took from
// its stamp to its arrival, and how long the whole stream took.
func readStream(tb testing.TB, c *http.Client, url string) ([]time.Duration, time.Duration) {
	start := time.Now()
	resp, err := c.Get(url)
	if err != nil {
		tb.Fatal(err)
	}
	defer resp.Body.Close()
	rd := sse.NewReader(resp.Body)
	var lat []time.Duration
	for {
		ev, err := rd.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			tb.Fatal(err)
		}
		now := time.Since(benchEpoch)
		i := bytes.Index([]byte(ev.Data), []byte(`"t":`))
		j := bytes.IndexByte([]byte(ev.Data[i+4:]), ',')
		stamp, err := strconv.ParseInt(ev.Data[i+4:i+4+j], 10, 64)
		if err != nil {
			tb.Fatal(err)
		}
		lat = append(lat, now-time.Duration(stamp))
	}
	return lat, time.Since(start)
}

func percentile(d []time.Duration, p float64) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	return s[min(len(s)-1, int(float64(len(s))*p))]
}

func micros(d time.Duration) float64 { return float64(d) / float64(time.Microsecond) }

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
	src := &http.Server{Handler: sseSource()}
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
		readStream(b, c, direct+"/burst?n=100")
		readStream(b, c, proxied+"/burst?n=100")
		// Blocks of events direct and through the proxy, one after the
		// other, so that both see the machine's load of the moment.
		blocks := max(b.N, benchMinEvents) / benchBlock
		q := fmt.Sprintf("/paced?n=%d", benchBlock)
		b.ResetTimer()
		var d, pr []time.Duration
		for range blocks {
			lat, _ := readStream(b, c, direct+q)
			d = append(d, lat...)
			lat, _ = readStream(b, c, proxied+q)
			pr = append(pr, lat...)
		}
		b.StopTimer()
		if n := blocks * benchBlock; len(d) != n || len(pr) != n {
			b.Fatalf("%d and %d events, want %d", len(d), len(pr), n)
		}
		b.ReportMetric(micros(percentile(d, 0.5)), "direct-p50-µs")
		b.ReportMetric(micros(percentile(d, 0.99)), "direct-p99-µs")
		b.ReportMetric(micros(percentile(pr, 0.5)), "proxy-p50-µs")
		b.ReportMetric(micros(percentile(pr, 0.99)), "proxy-p99-µs")
		b.ReportMetric(micros(percentile(pr, 0.5)-percentile(d, 0.5)), "added-p50-µs")
		b.ReportMetric(micros(percentile(pr, 0.99)-percentile(d, 0.99)), "added-p99-µs")
	})

	b.Run("throughput", func(b *testing.B) {
		q := fmt.Sprintf("/burst?n=%d", benchBurst)
		readStream(b, c, direct+"/burst?n=1000")
		readStream(b, c, proxied+"/burst?n=1000")
		drain(p)
		b.ResetTimer()
		var dt, pt, rt time.Duration
		for range b.N {
			_, d := readStream(b, c, direct+q)
			start := time.Now()
			_, pd := readStream(b, c, proxied+q)
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
