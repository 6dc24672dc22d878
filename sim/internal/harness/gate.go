package harness

import (
	"context"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/tasksim/tasksim/recorder"
	"github.com/tasksim/tasksim/traces"
)

// RecordGate keeps the recording proxy's trace in causal order. The proxy
// records the bytes of an answer just after it passed them to the client
// (recorder: an SSE event once flushed, a JSON body once the exchange
// ends). A client that sends its next request at once, on another
// connection, could have that request recorded before the answer that
// caused it; the checker would then see a task id used before it was
// given out. The gate holds each new request until every answer byte the
// proxy already passed to a client has been handed to the recording:
//
//	request ──▶ gate: wait until no exchange is "passed, not recorded" ──▶ proxy
//	proxy ──write──▶ gateWriter (marks the exchange) ──▶ client
//	proxy ──Read──▶ gateBody (an SSE event's hand-over is done: unmark)
//	proxy.ServeHTTP returns (the exchange's last records queued: unmark)
//
// The unmark points are causal: the proxy's ReverseProxy hands an SSE
// event to the recording on the goroutine that wrote it, before it reads
// the upstream body again; a non-SSE body is handed over when the
// exchange ends, before ServeHTTP returns. Nothing waits on a timer.
type RecordGate struct {
	mu      sync.Mutex
	pending int           // exchanges that passed bytes not yet handed over
	clear   chan struct{} // closed while pending is 0
}

func NewRecordGate() *RecordGate {
	g := &RecordGate{clear: make(chan struct{})}
	close(g.clear)
	return g
}

func (g *RecordGate) mark() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.pending == 0 {
		g.clear = make(chan struct{})
	}
	g.pending++
}

func (g *RecordGate) unmark() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.pending--
	if g.pending == 0 {
		close(g.clear)
	}
}

// wait returns once nothing passed is left unrecorded, or ctx ended.
func (g *RecordGate) wait(ctx context.Context) {
	g.mu.Lock()
	c := g.clear
	g.mu.Unlock()
	select {
	case <-c:
	case <-ctx.Done():
	}
}

// settleBound bounds settle: an exchange that stays marked (a client
// that stopped reading mid-event) cannot hold a stop longer.
const settleBound = 2 * time.Second

// Settle waits, before the proxy stops, until every answer byte it passed
// to a client was handed to the recording, or settleBound passed. A
// client that read its last event and ended at once would otherwise have
// the recorder stopped before that event is recorded: the trace lacks an
// answer the client saw (a resumed stream "never" completes).
func (g *RecordGate) Settle() {
	ctx, cancel := context.WithTimeout(context.Background(), settleBound)
	defer cancel()
	g.wait(ctx)
}

type gateKey struct{}

// gateExchange is one request's passage through the gate.
type gateExchange struct {
	g      *RecordGate
	mu     sync.Mutex
	marked bool
	sse    bool
}

func (x *gateExchange) set(marked bool) {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.marked == marked {
		return
	}
	x.marked = marked
	if marked {
		x.g.mark()
	} else {
		x.g.unmark()
	}
}

// Handler wraps the recording proxy h.
func (g *RecordGate) Handler(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		g.wait(r.Context())
		x := &gateExchange{g: g}
		defer x.set(false)
		h.ServeHTTP(&gateWriter{ResponseWriter: w, x: x}, r.WithContext(context.WithValue(r.Context(), gateKey{}, x)))
	})
}

// Transport wraps the proxy's upstream transport: the bodies it returns
// tell the gate when the proxy comes back for more.
func (*RecordGate) Transport(inner http.RoundTripper) http.RoundTripper {
	return gateTransport{inner: inner}
}

type gateTransport struct{ inner http.RoundTripper }

func (t gateTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := t.inner.RoundTrip(r)
	if err != nil {
		return nil, err
	}
	if x, ok := r.Context().Value(gateKey{}).(*gateExchange); ok {
		resp.Body = &gateBody{ReadCloser: resp.Body, x: x}
	}
	return resp, nil
}

// gateBody is the upstream body the proxy copies from: a Read after an
// SSE event was written means the proxy handed that event over.
type gateBody struct {
	io.ReadCloser
	x *gateExchange
}

func (b *gateBody) Read(p []byte) (int, error) {
	b.x.mu.Lock()
	sse := b.x.sse
	b.x.mu.Unlock()
	if sse {
		b.x.set(false)
	}
	return b.ReadCloser.Read(p)
}

// gateWriter marks the exchange before any byte of the answer's body
// goes to the client.
type gateWriter struct {
	http.ResponseWriter
	x *gateExchange
}

func (w *gateWriter) WriteHeader(code int) {
	w.x.mu.Lock()
	w.x.sse = strings.HasPrefix(w.Header().Get("Content-Type"), "text/event-stream")
	w.x.mu.Unlock()
	w.ResponseWriter.WriteHeader(code)
}

func (w *gateWriter) Write(p []byte) (int, error) {
	if len(p) > 0 {
		w.x.set(true)
	}
	return w.ResponseWriter.Write(p)
}

// FlushError is what http.ResponseController calls.
func (w *gateWriter) FlushError() error {
	return http.NewResponseController(w.ResponseWriter).Flush()
}

// Flush implements http.Flusher.
func (w *gateWriter) Flush() { _ = w.FlushError() }

// Unwrap lets http.ResponseController reach the server's ResponseWriter.
func (w *gateWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// StartRecordingProxy serves a recording proxy to upstream, writing to w,
// on a loopback port behind a RecordGate. base is its "http://host:port";
// stop shuts the server down, then closes the proxy (the caller closes w).
func StartRecordingProxy(upstream *url.URL, w *traces.Writer) (base string, proxy *recorder.Proxy, stop func(), err error) {
	g := NewRecordGate()
	proxy, err = recorder.NewProxy(upstream, w, &recorder.ProxyOptions{Transport: g.Transport(recorder.NewTransport())})
	if err != nil {
		return "", nil, nil, err
	}
	base, stopServer, err := ServeLoopback(g.Handler(proxy), proxy.ConnState)
	if err != nil {
		proxy.Close()
		return "", nil, nil, err
	}
	return base, proxy, func() { g.Settle(); stopServer(); proxy.Close() }, nil
}
