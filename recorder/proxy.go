package recorder

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"log/slog"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tasksim/tasksim/clock"
	"github.com/tasksim/tasksim/internal/httplimit"
	"github.com/tasksim/tasksim/traces"
)

// DefaultMaxBody is the most bytes of a non-SSE body a Proxy gathers to
// record as one message; the bytes of a longer body are recorded as they
// pass, one body-chunk record per write.
const DefaultMaxBody = 16 << 20

// ProxyOptions configure a Proxy. The zero value (or nil) gives every
// default.
type ProxyOptions struct {
	// Transport sends requests upstream. nil means NewTransport().
	Transport http.RoundTripper
	// MaxBody caps a non-SSE body gathered into one record; 0 means
	// DefaultMaxBody.
	MaxBody int
	// MaxPending caps the bytes passed to the client but not yet recorded.
	// Recording runs behind the traffic, on a goroutine of its own; a burst
	// faster than recording is queued, and a stream that stays faster is
	// slowed to the recording's pace once this much waits. It is also the
	// most a recorder killed with SIGKILL loses beyond the writer's
	// buffer. 0 means DefaultMaxPending (1 MiB).
	MaxPending int
	// KeepHost forwards the client's Host header. By default the upstream
	// URL's host is sent, so that virtual hosts and Host checks upstream
	// see their own name; the trace keeps the client's Host either way.
	KeepHost bool
	// Logger receives the proxy's own failures (a failed trace write);
	// nil discards them.
	Logger *slog.Logger
	// Clock stamps the records; nil means the wall clock. A Proxy on a
	// simulated clock (an in-process run, whose Transport serves the
	// upstream in memory) records on it, and its pipeline does not
	// settle (PipelineOptions.Settle): nothing waits on the wall clock.
	// Give the traces.Writer the same clock (WriterOptions.Now). In
	// process, where a write reaches the client before it returns, the
	// bytes of an event stream are handed to the recording before they
	// are written (an event the client could act on is recorded before
	// what it does next), not after they were flushed. Every step of a
	// request runs on its handler's goroutine (no httputil.ReverseProxy,
	// which flushes from a wall-clock timer's goroutine), so that a
	// clock.Confine scope holds all of the proxy's work.
	Clock clock.Clock
}

// ErrStopped is the cause given to the requests still open when Serve's
// context ends; their streams are recorded as cut by the recorder.
var ErrStopped = errors.New("recorder stopped")

// Proxy is a recording HTTP reverse proxy: an http.Handler that forwards
// every request to one upstream and writes what passes, both ways, to a
// traces.Writer. See the package documentation for the records it writes.
//
// It is safe for concurrent use; every request is recorded as its own
// exchange. To record connections opening and closing, serve it with Serve,
// or set an http.Server's ConnState to the Proxy's ConnState; otherwise a
// connection is recorded as opening with its first request.
//
// Records are written behind the traffic by a goroutine of the Proxy's
// own, started with the first record; Close, which Serve calls, waits for
// them and stops it. Close the Writer after that.
type Proxy struct {
	upstream *url.URL
	opts     ProxyOptions
	rp       *httputil.ReverseProxy
	pipe     *Pipeline
	clock    clock.Clock

	exchanges atomic.Uint64

	mu     sync.Mutex        // guards conns, next, closed
	conns  map[string]uint64 // remote address -> connection id
	next   uint64            // last connection id given
	closed bool              // Close ran: no more connection records
}

// NewProxy returns a Proxy that forwards to upstream and records into w.
// Requests keep their own path; upstream gives the scheme, host, user and
// query (see Rewrite). The caller keeps
// ownership of w: close it after the Proxy's last request (after Serve
// returns, or after the http.Server serving the Proxy shut down and Close
// was called).
func NewProxy(upstream *url.URL, w *traces.Writer, opts *ProxyOptions) (*Proxy, error) {
	if upstream == nil || (upstream.Scheme != "http" && upstream.Scheme != "https") || upstream.Host == "" {
		return nil, fmt.Errorf("recorder: upstream %q: want an http:// or https:// URL with a host", upstream.String())
	}
	if w == nil {
		return nil, errors.New("recorder: no trace writer")
	}
	p := &Proxy{upstream: upstream, conns: make(map[string]uint64)}
	if opts != nil {
		p.opts = *opts
	}
	if p.opts.Transport == nil {
		p.opts.Transport = NewTransport()
	}
	if p.opts.MaxBody <= 0 {
		p.opts.MaxBody = DefaultMaxBody
	}
	if p.opts.MaxPending <= 0 {
		p.opts.MaxPending = DefaultMaxPending
	}
	settle := proxySettle
	if p.opts.Clock != nil {
		settle = 0
	}
	p.clock = clock.Or(p.opts.Clock)
	p.pipe = NewPipeline(w, &PipelineOptions{Clock: p.opts.Clock, MaxPending: p.opts.MaxPending, Settle: settle, Logger: p.opts.Logger})
	p.rp = &httputil.ReverseProxy{
		Rewrite:        p.rewrite,
		Transport:      p.opts.Transport,
		FlushInterval:  -1, // every write goes out at once
		ErrorLog:       log.New(io.Discard, "", 0),
		ModifyResponse: p.modifyResponse,
		ErrorHandler:   p.errorHandler,
	}
	return p, nil
}

// NewTransport returns the transport a Proxy uses by default: no
// environment proxy, no compression negotiated on the client's behalf (so
// bodies pass as the upstream encoded them), bodies handed over as they
// arrive, and enough idle connections for many sessions at once.
func NewTransport() *http.Transport {
	return &http.Transport{
		Proxy:                 nil,
		DialContext:           (&net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		DisableCompression:    true,
		MaxIdleConns:          1000,
		MaxIdleConnsPerHost:   1000,
		IdleConnTimeout:       90 * time.Second,
		TLSHandshakeTimeout:   10 * time.Second,
		ExpectContinueTimeout: time.Second,
	}
}

// rewrite points the outbound request at the upstream (see Rewrite).
func (p *Proxy) rewrite(pr *httputil.ProxyRequest) { Rewrite(p.upstream, p.opts.KeepHost)(pr) }

// Rewrite returns the httputil.ReverseProxy Rewrite function of a Proxy:
// it points the outbound request at upstream and undoes what
// ReverseProxy changes on its own, so that the upstream gets what the
// client sent. The request keeps its path; upstream gives the scheme, the
// host, the Host header (unless keepHost) and its user and password, if
// any (sent as basic authentication when the client sends no
// Authorization). Upstream's query comes first, then the client's, as
// httputil.NewSingleHostReverseProxy joins them. The client's forwarding
// headers stay.
func Rewrite(upstream *url.URL, keepHost bool) func(*httputil.ProxyRequest) {
	return func(pr *httputil.ProxyRequest) {
		pr.Out.URL.Scheme = upstream.Scheme
		pr.Out.URL.Host = upstream.Host
		if u := upstream.User; u != nil && pr.Out.Header.Get("Authorization") == "" {
			pass, _ := u.Password()
			pr.Out.SetBasicAuth(u.Username(), pass)
		}
		switch q := pr.In.URL.RawQuery; {
		case upstream.RawQuery == "":
			pr.Out.URL.RawQuery = q
		case q == "":
			pr.Out.URL.RawQuery = upstream.RawQuery
		default:
			pr.Out.URL.RawQuery = upstream.RawQuery + "&" + q
		}
		if !keepHost {
			pr.Out.Host = upstream.Host
		}
		for _, k := range []string{"Forwarded", "X-Forwarded-For", "X-Forwarded-Host", "X-Forwarded-Proto"} {
			if v, ok := pr.In.Header[k]; ok {
				pr.Out.Header[k] = v
			}
		}
	}
}

// ServeHTTP forwards one request and records it as an exchange.
func (p *Proxy) ServeHTTP(rw http.ResponseWriter, r *http.Request) {
	ex := p.newExchange(r)
	ex.recordRequestHead()
	r2 := r.WithContext(context.WithValue(r.Context(), exchangeKey{}, ex))
	if r.Body != nil && r.Body != http.NoBody {
		ex.reqBody = &requestBody{ex: ex, rc: r.Body}
		r2.Body = ex.reqBody
	}
	// The upstream request reads the client's body on the transport's
	// goroutine, and reads once more after its last byte, for the end,
	// while the upstream may answer already. By default an HTTP/1 server
	// consumes and closes a request body that is not at its end when the
	// handler starts its response; that last read then fails, and the
	// transport drops the upstream connection, breaking the response it
	// is still copying. Full duplex leaves the body to the transport.
	_ = http.NewResponseController(rw).EnableFullDuplex()
	tw := &teeWriter{rw: rw, ex: ex}
	// ReverseProxy ends a broken copy with panic(http.ErrAbortHandler):
	// finish runs on the way out all the same.
	defer ex.finish()
	if p.opts.Clock != nil {
		p.forward(tw, r2)
		return
	}
	p.rp.ServeHTTP(tw, r2)
}

type exchangeKey struct{}

func exchangeOf(r *http.Request) *exchange {
	ex, _ := r.Context().Value(exchangeKey{}).(*exchange)
	return ex
}

func (p *Proxy) modifyResponse(resp *http.Response) error {
	if ex := exchangeOf(resp.Request); ex != nil {
		ex.onResponse(resp)
	}
	return nil
}

// errorHandler answers 502 when the upstream could not be asked or did not
// answer, and records why; 408 when that is because the client's body did
// not arrive in time (httplimit.CutSlowBody).
func (p *Proxy) errorHandler(rw http.ResponseWriter, r *http.Request, err error) {
	status := http.StatusBadGateway
	if ex := exchangeOf(r); ex != nil {
		status = ex.onRoundTripError(err)
	} else if httplimit.BodyTimedOut(r.Context()) {
		status = http.StatusRequestTimeout
	}
	rw.WriteHeader(status)
}

// now is the time on the Proxy's clock.
func (p *Proxy) now() time.Time { return p.clock.Now() }

// ConnState records connections opening and closing; set it as the
// http.Server's ConnState (Serve does).
func (p *Proxy) ConnState(c net.Conn, s http.ConnState) {
	addr := c.RemoteAddr().String()
	switch s {
	case http.StateNew:
		p.connID(addr)
	case http.StateClosed:
		p.connClosed(addr, "")
	case http.StateHijacked:
		p.connClosed(addr, "hijacked (protocol upgrade)")
	}
}

// connID returns the id of the client connection from addr, recording its
// opening the first time.
func (p *Proxy) connID(addr string) uint64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	if id, ok := p.conns[addr]; ok {
		return id
	}
	p.next++
	id := p.next
	if p.closed {
		return id
	}
	p.conns[addr] = id
	p.record(traces.Record{Wall: p.now(), Conn: id, Kind: traces.KindConnOpen, Note: "client " + addr})
	return id
}

func (p *Proxy) connClosed(addr, note string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	id, ok := p.conns[addr]
	if !ok {
		return
	}
	delete(p.conns, addr)
	p.record(traces.Record{Wall: p.now(), Conn: id, Kind: traces.KindConnClose, Note: note, End: traces.EndEOF})
}

// record hands a finished record to the pipeline. Its Raw must not change
// afterwards.
func (p *Proxy) record(r traces.Record) { p.pipe.add(r, nil) }

// later hands work to the pipeline, counting size bytes.
func (p *Proxy) later(size int, run func()) { p.pipe.later(size, run) }

// write writes one record at once: only on the pipeline's goroutine.
func (p *Proxy) write(r traces.Record) { p.pipe.write(r) }

// Pipeline returns the pipeline the Proxy records through. Records added
// to it (faults, annotations) land in the trace in order with the
// Proxy's own: after the records of everything that passed before the
// Add.
func (p *Proxy) Pipeline() *Pipeline { return p.pipe }

// Pending returns the bytes that passed the proxy and are not recorded
// yet.
func (p *Proxy) Pending() int { return p.pipe.Pending() }

// Err returns the first error writing the trace, if any.
func (p *Proxy) Err() error { return p.pipe.Err() }

// Close records the end of the connections still open, as closed by the
// recorder, waits until everything that passed is recorded, and returns
// Err. Call it once no request is in flight (Serve does); it does not
// close the Writer.
func (p *Proxy) Close() error {
	p.mu.Lock()
	if !p.closed {
		p.closed = true
		for addr, id := range p.conns {
			delete(p.conns, addr)
			p.record(traces.Record{Wall: p.now(), Conn: id, Kind: traces.KindConnClose, Note: ErrStopped.Error(), End: traces.EndStopped})
		}
	}
	p.mu.Unlock()
	return p.pipe.Close()
}

// Serve accepts connections on ln and serves the Proxy on them until ctx
// ends, within httplimit's default limits (a slow request body gets 408,
// connections are capped). Then it cuts the requests still open (their
// streams are recorded as cut by the recorder, ErrStopped), waits up to
// five seconds for their handlers, calls Close and returns its error. It
// returns early with an error if ln fails.
func (p *Proxy) Serve(ctx context.Context, ln net.Listener) error {
	err := httplimit.Serve(ctx, ln, p, &httplimit.ServeOptions{ConnState: p.ConnState, StopCause: ErrStopped})
	cerr := p.Close()
	if err != nil {
		return fmt.Errorf("recorder: %w", err)
	}
	return cerr
}
