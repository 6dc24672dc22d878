package faults

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

// Benchmark settings, as recorder's BenchmarkProxySSE.
const (
	benchRate      = 1000 // events per second
	benchMinEvents = 3000 // events per path, at least
	benchBlock     = 500  // events per block
	benchPad       = 120  // bytes of padding in each event's data
)

var benchEpoch = time.Now()

// pacedSSE sends n events (?n=N) at benchRate per second, each stamped
// with the time it was written; the pacer writes every event that is due
// and sleeps until the next is due, so a late wake-up does not lower the
// rate.
func pacedSSE() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n, _ := strconv.Atoi(r.URL.Query().Get("n"))
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		rc := http.NewResponseController(w)
		_ = rc.Flush()
		pad := bytes.Repeat([]byte("x"), benchPad)
		var buf []byte
		start := time.Now()
		interval := time.Second / benchRate
		for sent := 0; sent < n; {
			due := min(n, int(time.Since(start)/interval)+1)
			for ; sent < due; sent++ {
				buf = fmt.Appendf(buf[:0], "id: %d\nevent: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"progressToken\":%d,\"t\":%d,\"pad\":\"%s\"}}\n\n",
					sent, sent, time.Since(benchEpoch), pad)
				if _, err := w.Write(buf); err != nil {
					return
				}
				if rc.Flush() != nil {
					return
				}
			}
			if sent < n {
				time.Sleep(time.Until(start.Add(time.Duration(sent) * interval)))
			}
		}
	})
}

// readLatencies GETs url and returns each event's time from its stamp to
// its arrival.
func readLatencies(tb testing.TB, c *http.Client, url string) []time.Duration {
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
			return lat
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
}

func serveBench(tb testing.TB, h http.Handler) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	srv := &http.Server{Handler: h}
	go srv.Serve(ln)
	tb.Cleanup(func() { srv.Close() })
	return "http://" + ln.Addr().String()
}

func pct(d []time.Duration, p float64) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	return s[min(len(s)-1, int(float64(len(s))*p))]
}

func µs(d time.Duration) float64 { return float64(d) / float64(time.Microsecond) }

// BenchmarkHandlerSSE measures what the fault middleware adds to each SSE
// event of a stream paced at 1,000 events/s: the same server read
// directly and through Handler, in blocks of 500 events in turn (3,000
// each), with a fault that looks at every event and acts on none
// ("unmatched": with no fault at all Handler is next itself) and with
// drop-sse-event:p=0.1 ("drop", latency of the events delivered). Latency is from the event's write by
// the server to its arrival at the client; added = through - direct, at
// p50 and p99. The metrics are the result; ns/op means nothing here.
func BenchmarkHandlerSSE(b *testing.B) {
	direct := serveBench(b, pacedSSE())
	c := &http.Client{Transport: &http.Transport{DisableCompression: true}}
	for _, tc := range []struct{ name, spec string }{{"unmatched", "drop-sse-event:method=tasks/get"}, {"drop", "drop-sse-event:p=0.1"}} {
		b.Run(tc.name, func(b *testing.B) {
			var bs []*Bound
			if tc.spec != "" {
				f, err := Builtin().Parse(tc.spec)
				if err != nil {
					b.Fatal(err)
				}
				bs = append(bs, f)
			}
			through := serveBench(b, Handler(pacedSSE(), NewSet(1, bs...), nil))
			readLatencies(b, c, direct+"/?n=100")
			readLatencies(b, c, through+"/?n=100")
			blocks := max(b.N, benchMinEvents) / benchBlock
			q := fmt.Sprintf("/?n=%d", benchBlock)
			b.ResetTimer()
			var d, f []time.Duration
			for range blocks {
				d = append(d, readLatencies(b, c, direct+q)...)
				f = append(f, readLatencies(b, c, through+q)...)
			}
			b.StopTimer()
			b.ReportMetric(µs(pct(d, 0.5)), "direct-p50-µs")
			b.ReportMetric(µs(pct(d, 0.99)), "direct-p99-µs")
			b.ReportMetric(µs(pct(f, 0.5)), "faults-p50-µs")
			b.ReportMetric(µs(pct(f, 0.99)), "faults-p99-µs")
			b.ReportMetric(µs(pct(f, 0.5)-pct(d, 0.5)), "added-p50-µs")
			b.ReportMetric(µs(pct(f, 0.99)-pct(d, 0.99)), "added-p99-µs")
			b.ReportMetric(float64(len(f))/float64(len(d)), "delivered-ratio")
		})
	}
}

// discardWriter is a ResponseWriter that keeps nothing and can flush.
type discardWriter struct{ h http.Header }

func (d *discardWriter) Header() http.Header         { return d.h }
func (d *discardWriter) Write(p []byte) (int, error) { return len(p), nil }
func (d *discardWriter) WriteHeader(int)             {}
func (d *discardWriter) Flush()                      {}

// BenchmarkHandlerEvent measures the middleware's own CPU cost per SSE
// event, without a network: one op is one event written by the server
// through Handler to a ResponseWriter that discards it ("direct": the
// same writes without Handler). Unlike the latency of BenchmarkHandlerSSE
// it holds still on a busy machine.
func BenchmarkHandlerEvent(b *testing.B) {
	ev := fmt.Appendf(nil, "id: 1_7\nevent: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{\"partial-content\":[{\"seqNr\":7,\"content\":[{\"type\":\"text\",\"text\":\"%s\"}]}],\"isComplete\":false}}\n\n", bytes.Repeat([]byte("x"), benchPad))
	next := func(n int) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/event-stream")
			w.WriteHeader(http.StatusOK)
			rc := http.NewResponseController(w)
			for range n {
				w.Write(ev)
				rc.Flush()
			}
		})
	}
	req, _ := http.NewRequest(http.MethodPost, "/mcp", bytes.NewReader([]byte(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"slow_text"}}`)))
	for _, tc := range []struct{ name, spec string }{{"direct", "-"}, {"none", ""}, {"drop", "drop-sse-event:p=0.1"}, {"unmatched", "drop-sse-event:method=tasks/get"}} {
		b.Run(tc.name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(ev)))
			h := next(b.N)
			if tc.spec != "-" {
				var bs []*Bound
				if tc.spec != "" {
					f, err := Builtin().Parse(tc.spec)
					if err != nil {
						b.Fatal(err)
					}
					bs = append(bs, f)
				}
				h = Handler(h, NewSet(1, bs...), nil)
			}
			body := `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"slow_text"}}`
			r := req.Clone(req.Context())
			r.Body = io.NopCloser(bytes.NewReader([]byte(body)))
			b.ResetTimer()
			h.ServeHTTP(&discardWriter{h: http.Header{}}, r)
		})
	}
}
