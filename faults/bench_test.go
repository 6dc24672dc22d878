package faults

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/tasksim/tasksim/internal/ssebench"
)

// Benchmark settings, as recorder's BenchmarkProxySSE.
const (
	benchMinEvents = 3000 // events per path, at least
	benchBlock     = 500  // events per block
)

// BenchmarkHandlerSSE measures what the fault middleware adds to each SSE
// event of a stream paced at 1,000 events/s: the same server read
// directly and through Handler, in blocks of 500 events in turn (3,000
// each), with a fault that looks at every event and acts on none
// ("unmatched": with no fault at all Handler is next itself) and with
// drop-sse-event:p=0.1 ("drop", latency of the events delivered). Latency is from the event's write by
// the server to its arrival at the client; added = through - direct, at
// p50 and p99. The metrics are the result; ns/op means nothing here.
func BenchmarkHandlerSSE(b *testing.B) {
	direct := ssebench.Serve(b, ssebench.Source())
	c := &http.Client{Transport: &http.Transport{DisableCompression: true}}
	for _, tc := range []struct{ name, spec string }{{"unmatched", "drop-sse-event:method=tasks/get"}, {"drop", "drop-sse-event:p=0.1"}} {
		b.Run(tc.name, func(b *testing.B) {
			through := ssebench.Serve(b, Handler(ssebench.Source(), setOf(b, tc.spec), nil))
			ssebench.Read(b, c, direct+"/?n=100")
			ssebench.Read(b, c, through+"/?n=100")
			blocks := max(b.N, benchMinEvents) / benchBlock
			q := fmt.Sprintf("/?n=%d", benchBlock)
			b.ResetTimer()
			var d, f []time.Duration
			for range blocks {
				lat, _ := ssebench.Read(b, c, direct+q)
				d = append(d, lat...)
				lat, _ = ssebench.Read(b, c, through+q)
				f = append(f, lat...)
			}
			b.StopTimer()
			b.ReportMetric(ssebench.Micros(ssebench.Percentile(d, 0.5)), "direct-p50-µs")
			b.ReportMetric(ssebench.Micros(ssebench.Percentile(d, 0.99)), "direct-p99-µs")
			b.ReportMetric(ssebench.Micros(ssebench.Percentile(f, 0.5)), "faults-p50-µs")
			b.ReportMetric(ssebench.Micros(ssebench.Percentile(f, 0.99)), "faults-p99-µs")
			b.ReportMetric(ssebench.Micros(ssebench.Percentile(f, 0.5)-ssebench.Percentile(d, 0.5)), "added-p50-µs")
			b.ReportMetric(ssebench.Micros(ssebench.Percentile(f, 0.99)-ssebench.Percentile(d, 0.99)), "added-p99-µs")
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
	ev := fmt.Appendf(nil, "id: 1_7\nevent: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{\"partial-content\":[{\"seqNr\":7,\"content\":[{\"type\":\"text\",\"text\":\"%s\"}]}],\"isComplete\":false}}\n\n", bytes.Repeat([]byte("x"), ssebench.Pad))
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
				h = Handler(h, setOf(b, tc.spec), nil)
			}
			body := `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"slow_text"}}`
			r := req.Clone(req.Context())
			r.Body = io.NopCloser(bytes.NewReader([]byte(body)))
			b.ResetTimer()
			h.ServeHTTP(&discardWriter{h: http.Header{}}, r)
		})
	}
}
