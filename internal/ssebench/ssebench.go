// Package ssebench is the harness of the benchmarks that measure what a
// layer between an SSE server and its client (the fault middleware, the
// recording proxy) adds to each event: a paced event source whose events
// carry the time they were written, and a reader that turns their arrival
// into latencies.
package ssebench

import (
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/tasksim/tasksim/mcp/sse"
)

// Rate is the pace of a paced stream, in events per second; Pad is the
// bytes of padding in each event's data.
const (
	Rate = 1000
	Pad  = 120
)

// epoch is the clock both ends read: event stamps are monotonic offsets
// from it.
var epoch = time.Now()

// Source is a minimal SSE server. GET /paced?n=N (or any path but /burst)
// sends N events at Rate per second, each stamped with the time it was
// written; the pacer wakes up, writes every event that is due (one write
// and flush each), and sleeps until the next is due, so a late wake-up
// does not lower the rate. GET /burst?n=N writes N events as fast as it
// can.
func Source() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n, _ := strconv.Atoi(r.URL.Query().Get("n"))
		w.Header().Set("Content-Type", "text/event-stream")
		w.Header().Set("Cache-Control", "no-cache")
		w.WriteHeader(http.StatusOK)
		rc := http.NewResponseController(w)
		_ = rc.Flush()
		pad := bytes.Repeat([]byte("x"), Pad)
		var buf []byte
		send := func(i int) error {
			buf = fmt.Appendf(buf[:0], "id: %d\nevent: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"progressToken\":%d,\"t\":%d,\"pad\":\"%s\"}}\n\n",
				i, i, time.Since(epoch), pad)
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
		interval := time.Second / Rate
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

// Read GETs url and returns, for each event, how long it took from its
// stamp to its arrival, and how long the whole stream took.
func Read(tb testing.TB, c *http.Client, url string) ([]time.Duration, time.Duration) {
	tb.Helper()
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
		now := time.Since(epoch)
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

// Serve serves h on a loopback port until the benchmark ends and returns
// its base URL.
func Serve(tb testing.TB, h http.Handler) string {
	tb.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	srv := &http.Server{Handler: h}
	go srv.Serve(ln)
	tb.Cleanup(func() { srv.Close() })
	return "http://" + ln.Addr().String()
}

// Percentile returns the p-quantile (0..1) of d.
func Percentile(d []time.Duration, p float64) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	return s[min(len(s)-1, int(float64(len(s))*p))]
}

// Micros is d in microseconds, for b.ReportMetric.
func Micros(d time.Duration) float64 { return float64(d) / float64(time.Microsecond) }
