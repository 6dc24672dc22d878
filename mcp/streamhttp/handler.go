package streamhttp

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gorilla/mux"

	"github.com/tasksim/tasksim/clock"
	"github.com/tasksim/tasksim/mcp"
	"github.com/tasksim/tasksim/mcp/sse"
)

// Defaults of Options.
const (
	DefaultPath             = "/mcp"
	DefaultMaxBodyBytes     = 4 << 20
	DefaultEventStoreEvents = 4096
	DefaultRetry            = time.Second
	DefaultKeepAlive        = 15 * time.Second
	DefaultSessionIdle      = 30 * time.Minute
	// Byte budgets of the replay buffers: per stream, per session (all its
	// streams) and per handler (all sessions).
	DefaultMaxStreamBytes        = 8 << 20
	DefaultMaxSessionReplayBytes = 32 << 20
	DefaultMaxReplayBytes        = 512 << 20
	// DefaultStreamRetention is how long a finished POST stream can be
	// resumed.
	DefaultStreamRetention = 5 * time.Minute
	// Caps on what clients may open (2025-11-25 Tasks, "Security
	// Considerations": receivers SHOULD rate-limit task operations and
	// bound what a requestor may consume). Past one, the request gets 503
	// with a Retry-After header and a JSON-RPC error body.
	DefaultMaxSessions         = 10_000
	DefaultMaxSessionRequests  = 1024
	DefaultMaxResumesPerMinute = 600
	// DefaultBodyReadTimeout bounds the reading of a POST body.
	DefaultBodyReadTimeout = 30 * time.Second
	// retryAfterSeconds is the Retry-After of a 503 past a cap.
	retryAfterSeconds = "1"
)

// codeTransport is the JSON-RPC error code of the bodies of HTTP errors the
// transport itself answers (wrong headers, unknown session): -32000, the
// first of the range JSON-RPC 2.0 leaves to implementations.
const codeTransport = -32000

// replaceStandaloneGET says what a GET without Last-Event-ID gets while
// another connection carries the session's standalone stream: false answers
// 409 Conflict (and leaves the first connection alone); true makes the new
// connection take the stream over. The spec allows either (2025-11-25
// Transports, "Multiple Connections"); the conformance suite's
// server-sse-multiple-streams scenario opens concurrent POST streams only.
const replaceStandaloneGET = false

// Options configures a Handler. The zero value of every field means its
// documented default; a nil *Options means all defaults.
type Options struct {
	// Path is the MCP endpoint's path; "" means DefaultPath, "/mcp".
	Path string
	// AllowedOrigins lists the Origin header values accepted besides the
	// loopback ones (http or https on localhost, 127.0.0.1 or [::1], any
	// port), which are always accepted, e.g. "https://app.example.com".
	// Matching ignores case and a trailing slash; "*" accepts any Origin.
	// A request without an Origin header is accepted. Any other Origin gets
	// 403 (2025-11-25 Transports, "Security Warning").
	AllowedOrigins []string
	// AllowedHosts lists the Host header values accepted besides the
	// loopback names (localhost, 127.0.0.1, [::1]) and the IP address the
	// connection arrived on, any port, e.g. "myhost" or "myhost:8080"
	// ("myhost" matches any port). Any other Host gets 403, on every
	// address the server listens on: that is what a DNS-rebinding page
	// sends. "*" turns the Host check off.
	AllowedHosts []string
	// MaxBodyBytes caps a POST body; 0 means DefaultMaxBodyBytes (4 MiB).
	// A larger body gets 413.
	MaxBodyBytes int64
	// BodyReadTimeout bounds the time to read a POST body, from when the
	// handler starts reading it; a slower body gets 408 and its
	// connection is closed. 0 means DefaultBodyReadTimeout (30 s);
	// negative, no limit. Wall time whatever Clock is: the kernel enforces
	// it (a ResponseWriter without deadlines, the in-memory transport's,
	// ignores it).
	BodyReadTimeout time.Duration
	// EventStoreEvents is the replay buffer of each logical stream, in
	// events; 0 means DefaultEventStoreEvents. It also bounds the messages
	// the Outbox queues while no GET is connected (oldest dropped first).
	EventStoreEvents int
	// MaxStreamBytes bounds each stream's replay buffer in bytes (encoded
	// events); 0 means DefaultMaxStreamBytes (8 MiB). MaxSessionReplayBytes
	// bounds the buffers of one session's streams together (0: 32 MiB) and
	// MaxReplayBytes those of every session (0: 512 MiB). Past a bound the
	// stream that appends drops its oldest events, never its newest one,
	// so the bounds hold to within one event per stream. A connection that
	// falls behind the events kept is closed, and resuming it gets 409: the
	// client then asks tasks/result, which has the whole result.
	MaxStreamBytes        int64
	MaxSessionReplayBytes int64
	MaxReplayBytes        int64
	// StreamRetention is how long a finished POST stream (its final
	// response stored) can still be resumed with Last-Event-ID; its events
	// are released after, and a GET naming it gets 409. 0 means
	// DefaultStreamRetention (5 min); negative keeps finished streams
	// until the session ends (still at most 64 per session).
	StreamRetention time.Duration
	// MaxSessions caps the sessions open at once; an initialize past it
	// gets 503. 0 means DefaultMaxSessions (10,000); negative, no cap.
	MaxSessions int
	// MaxSessionRequests caps the HTTP requests of one session served at
	// once, open SSE connections (POST answers and GETs) included; one
	// more gets 503. 0 means DefaultMaxSessionRequests (1,024); negative,
	// no cap.
	MaxSessionRequests int
	// MaxResumesPerMinute caps the GETs with Last-Event-ID of one session:
	// a bucket of this many that refills at this rate per minute; a GET
	// finding it empty gets 503. 0 means DefaultMaxResumesPerMinute (600);
	// negative, no cap.
	MaxResumesPerMinute int
	// Retry is the reconnection time sent in the retry field of every
	// priming event; 0 means DefaultRetry (1s); negative sends none. A
	// connection the server closes on purpose always ends with a retry
	// field: Retry, or DefaultRetry when Retry is negative.
	Retry time.Duration
	// MaxStreamDuration, if positive, is how long an SSE connection (POST
	// or GET) may last: the server then sends a retry field and closes the
	// connection, not the stream, and the client resumes with GET and
	// Last-Event-ID (2025-11-25 Transports, "Sending Messages to the
	// Server"). 0 means no limit.
	MaxStreamDuration time.Duration
	// SessionIdleTimeout ends a session that has had no request, and no
	// open SSE connection, for this long (the server MAY terminate a
	// session at any time; its client gets 404 and starts a new one:
	// 2025-11-25 Transports, "Session Management"). It bounds the memory
	// of clients that never send DELETE. 0 means DefaultSessionIdle
	// (30 min); negative keeps idle sessions forever.
	SessionIdleTimeout time.Duration
	// KeepAlive is the interval of comment pings on idle SSE connections;
	// 0 means DefaultKeepAlive (15s); negative sends none.
	KeepAlive time.Duration
	// Logger receives the handler's logs; nil means slog.Default().
	Logger *slog.Logger
	// Clock times keep-alive pings, MaxStreamDuration and session idleness;
	// nil means the wall clock. Write deadlines on sockets stay on the wall
	// clock whatever Clock is: the kernel enforces them (see pump).
	Clock clock.Clock
	// Rand is where session ids are drawn from; nil means crypto/rand. An
	// id is 26 characters of the base32 alphabet (A-Z, 2-7), one per byte
	// read, as crypto/rand.Text makes them: 130 bits from a uniform source.
	// A seeded reader (math/rand/v2's ChaCha8) makes the ids of a run
	// repeatable; it must never be one in production, where ids are the
	// session's only credential against hijacking (2025-11-25 Transports,
	// "Session Management": the id SHOULD be globally unique and
	// cryptographically secure). Reads are serialised by the handler.
	Rand io.Reader
}

// Handler serves the Streamable HTTP transport (2025-11-25 Transports,
// "Streamable HTTP") for an mcp.Endpoint at one path: POST carries
// messages, GET opens or resumes SSE streams, DELETE ends a session. It is
// an http.Handler and safe for concurrent use.
type Handler struct {
	ep           mcp.Endpoint
	eras         eras    // which eras ep serves (era.go)
	opts         Options // defaults filled in
	log          *slog.Logger
	guard        *guard
	router       *mux.Router
	ctx          context.Context // parent of every session's context
	cancel       context.CancelFunc
	primingRetry time.Duration // retry of priming events; < 0: none
	closeRetry   []byte        // the retry field ending a closed connection
	clock        clock.Clock   // never nil
	sweepDone    chan struct{} // closed when sweep returns; nil: no sweep

	randMu sync.Mutex // serialises reads of opts.Rand

	replayBytes atomic.Int64 // held by every stream's replay buffer

	mu              sync.RWMutex
	sessions        map[string]*session
	closed          bool
	refusedSessions int // initializes refused past MaxSessions
}

// NewHandler returns a Handler serving ep. opts may be nil.
func NewHandler(ep mcp.Endpoint, opts *Options) *Handler {
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.Path == "" {
		o.Path = DefaultPath
	}
	if o.MaxBodyBytes <= 0 {
		o.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if o.EventStoreEvents <= 0 {
		o.EventStoreEvents = DefaultEventStoreEvents
	}
	if o.Retry == 0 {
		o.Retry = DefaultRetry
	}
	if o.BodyReadTimeout == 0 {
		o.BodyReadTimeout = DefaultBodyReadTimeout
	}
	if o.MaxStreamBytes <= 0 {
		o.MaxStreamBytes = DefaultMaxStreamBytes
	}
	if o.MaxSessionReplayBytes <= 0 {
		o.MaxSessionReplayBytes = DefaultMaxSessionReplayBytes
	}
	if o.MaxReplayBytes <= 0 {
		o.MaxReplayBytes = DefaultMaxReplayBytes
	}
	if o.StreamRetention == 0 {
		o.StreamRetention = DefaultStreamRetention
	}
	if o.MaxSessions == 0 {
		o.MaxSessions = DefaultMaxSessions
	}
	if o.MaxSessionRequests == 0 {
		o.MaxSessionRequests = DefaultMaxSessionRequests
	}
	if o.MaxResumesPerMinute == 0 {
		o.MaxResumesPerMinute = DefaultMaxResumesPerMinute
	}
	if o.SessionIdleTimeout == 0 {
		o.SessionIdleTimeout = DefaultSessionIdle
	}
	if o.KeepAlive == 0 {
		o.KeepAlive = DefaultKeepAlive
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	ctx, cancel := context.WithCancel(context.Background())
	h := &Handler{
		ep:           ep,
		eras:         newEras(ep),
		opts:         o,
		log:          o.Logger,
		guard:        newGuard(o.AllowedOrigins, o.AllowedHosts),
		ctx:          ctx,
		cancel:       cancel,
		primingRetry: o.Retry,
		clock:        clock.Or(o.Clock),
		sessions:     make(map[string]*session),
	}
	closeRetry := o.Retry
	if closeRetry < 0 {
		closeRetry = DefaultRetry
	}
	h.closeRetry = fmt.Appendf(nil, "retry: %d\n\n", closeRetry.Milliseconds())

	r := mux.NewRouter()
	r.HandleFunc(o.Path, h.servePOST).Methods(http.MethodPost)
	r.HandleFunc(o.Path, h.serveGET).Methods(http.MethodGet)
	r.HandleFunc(o.Path, h.serveDELETE).Methods(http.MethodDelete)
	r.MethodNotAllowedHandler = http.HandlerFunc(h.methodNotAllowed)
	h.router = r
	if o.SessionIdleTimeout > 0 || o.StreamRetention > 0 {
		h.sweepDone = make(chan struct{})
		go func() {
			defer close(h.sweepDone)
			h.sweep()
		}()
	}
	return h
}

// sweep, until Close, ends sessions idle for longer than
// SessionIdleTimeout and releases finished streams older than
// StreamRetention. It looks every quarter of the shorter of the two
// (within 1 ms and 1 min) on the handler's clock, with one timer re-armed
// after each round rather than a ticker, which a simulated clock has not.
// The sessions are ended on this goroutine, not in the timer's function:
// ending one calls into the endpoint (Session.Close), and a clock.Sim runs
// timer functions in the goroutine that advances it. Ended sessions are
// logged as one line per round, not one per session.
func (h *Handler) sweep() {
	idle, keep := h.opts.SessionIdleTimeout, h.opts.StreamRetention
	period := time.Minute
	for _, d := range []time.Duration{idle, keep} {
		if d > 0 {
			period = min(period, max(d/4, time.Millisecond))
		}
	}
	t := clock.NewTimer(h.clock, period)
	defer t.Stop()
	for {
		select {
		case <-h.ctx.Done():
			return
		case now := <-t.C():
			var idleOnes, all []*session
			h.mu.RLock()
			for _, s := range h.sessions {
				if idle > 0 && s.idleSince(now.Add(-idle)) {
					idleOnes = append(idleOnes, s)
				} else if keep > 0 {
					all = append(all, s)
				}
			}
			h.mu.RUnlock()
			for _, s := range idleOnes {
				h.endSession(s)
			}
			if len(idleOnes) > 0 {
				h.log.Info("streamhttp: ended idle sessions", "count", len(idleOnes), "idle", idle)
			}
			for _, s := range all {
				s.retireFinished(now.Add(-keep))
			}
			t.Reset(period)
		}
	}
}

// ServeHTTP implements http.Handler. Every request first passes the Origin
// and Host checks (403), then is routed by method; other methods get 405
// with an Allow header.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	defer func() {
		// The last line of defence: no input is meant to get here.
		if v := recover(); v != nil {
			if v == http.ErrAbortHandler {
				panic(v)
			}
			h.log.Error("streamhttp: panic serving request", "method", r.Method, "panic", v, "stack", string(debug.Stack()))
			h.fail(w, http.StatusInternalServerError, mcp.CodeInternalError, mcp.ID{}, "internal error")
		}
	}()
	if why := h.guard.check(r); why != "" {
		h.fail(w, http.StatusForbidden, codeTransport, mcp.ID{}, "Forbidden: "+why)
		return
	}
	h.router.ServeHTTP(w, r)
}

// Close ends every session (Session.Close is called, their SSE connections
// end) and makes the handler refuse new ones with 503.
func (h *Handler) Close() {
	h.mu.Lock()
	h.closed = true
	sessions := h.sessions
	h.sessions = make(map[string]*session)
	h.mu.Unlock()
	h.cancel()
	for _, s := range sessions {
		s.close()
	}
	if h.sweepDone != nil {
		<-h.sweepDone // a closed handler leaves no goroutine behind
	}
}

// register makes s reachable by its id. It fails after Close, and when
// MaxSessions are open; the message says which.
func (h *Handler) register(s *session) (ok bool, why string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return false, "Service Unavailable: the server is shutting down"
	}
	if max := h.opts.MaxSessions; max > 0 && len(h.sessions) >= max {
		h.refusedSessions++
		return false, fmt.Sprintf("Service Unavailable: the server has %d sessions open, its limit; end unused ones with DELETE", max)
	}
	h.sessions[s.id] = s
	return true, ""
}

// busy answers 503 with a Retry-After header: a cap was reached.
func (h *Handler) busy(w http.ResponseWriter, id mcp.ID, why string) {
	w.Header()["Retry-After"] = []string{retryAfterSeconds}
	h.fail(w, http.StatusServiceUnavailable, codeTransport, id, why)
}

// endSession unregisters s and closes it.
func (h *Handler) endSession(s *session) {
	h.mu.Lock()
	if h.sessions[s.id] == s {
		delete(h.sessions, s.id)
	}
	h.mu.Unlock()
	s.close()
}

// sessionOf finds the session a request names in MCP-Session-Id. On
// failure it has answered: 400 without the header, 404 for an unknown or
// ended session (2025-11-25 Transports, "Session Management").
func (h *Handler) sessionOf(w http.ResponseWriter, r *http.Request) *session {
	ids := r.Header[headerSession]
	if len(ids) == 0 || ids[0] == "" {
		h.fail(w, http.StatusBadRequest, codeTransport, mcp.ID{}, "Bad Request: missing MCP-Session-Id header")
		return nil
	}
	h.mu.RLock()
	s := h.sessions[ids[0]]
	h.mu.RUnlock()
	if s == nil {
		h.fail(w, http.StatusNotFound, codeTransport, mcp.ID{}, "Not Found: unknown or terminated session")
		return nil
	}
	return s
}

// checkProtocolVersion answers 400 and returns false when the request's
// MCP-Protocol-Version is unsupported.
func (h *Handler) checkProtocolVersion(w http.ResponseWriter, r *http.Request) bool {
	if v := r.Header[headerProtocol]; !protocolVersionOK(v) {
		h.fail(w, http.StatusBadRequest, codeTransport, mcp.ID{},
			"Bad Request: unsupported MCP-Protocol-Version "+quoteHeader(v[0]))
		return false
	}
	return true
}

// serveDELETE ends the session (2025-11-25 Transports, "Session
// Management": clients SHOULD send DELETE to terminate a session). It
// answers 200 with no body.
func (h *Handler) serveDELETE(w http.ResponseWriter, r *http.Request) {
	if h.refuseStateless(w, r) {
		return
	}
	if !h.checkProtocolVersion(w, r) {
		return
	}
	s := h.sessionOf(w, r)
	if s == nil {
		return
	}
	h.endSession(s)
	w.WriteHeader(http.StatusOK)
}

func (h *Handler) methodNotAllowed(w http.ResponseWriter, r *http.Request) {
	w.Header()["Allow"] = valueAllow
	h.fail(w, http.StatusMethodNotAllowed, codeTransport, mcp.ID{}, "Method Not Allowed: "+quoteHeader(r.Method))
}

// fail answers an HTTP error whose body is a JSON-RPC error response; its
// id is null unless the failing request's id is known (2025-11-25
// Transports: the body "MAY comprise a JSON-RPC error response that has no
// id").
func (h *Handler) fail(w http.ResponseWriter, status, code int, id mcp.ID, message string) {
	writeError(w, status, code, id, message)
}

// writeError answers status with a JSON-RPC error body.
func writeError(w http.ResponseWriter, status, code int, id mcp.ID, message string) {
	body, err := mcp.NewError(id, &mcp.Error{Code: code, Message: message}).AppendJSON(nil)
	if err != nil { // unreachable: the error carries no data
		body = nil
	}
	w.Header()["Content-Type"] = valueJSON
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

// sseHeaders sets the headers of an SSE response.
func (h *Handler) sseHeaders(w http.ResponseWriter, s *session) {
	hdr := w.Header()
	hdr["Content-Type"] = valueEventStream
	hdr["Cache-Control"] = valueNoCache
	hdr["X-Accel-Buffering"] = valueNoBuffering // asks reverse proxies not to buffer the stream
	hdr[headerSession] = s.idHeader
}

// primingEvent encodes the priming event with the given id: an id, empty
// data, and the retry field unless Options.Retry is negative (2025-11-25
// Transports, "Sending Messages to the Server": the server SHOULD
// immediately send an event with an id and an empty data field).
func (h *Handler) primingEvent(id string) []byte {
	ev := sse.Event{ID: id, HasID: true}
	if h.primingRetry >= 0 {
		ev.Retry, ev.HasRetry = h.primingRetry, true
	}
	b, err := sse.AppendEvent(nil, ev)
	if err != nil { // unreachable: ids are digits and underscores
		h.log.Error("streamhttp: encode priming event", "id", id, "err", err)
	}
	return b
}

// Stats is what a Handler holds at one moment.
type Stats struct {
	Sessions    int   // sessions registered
	ReplayBytes int64 // bytes in every stream's replay buffer
}

// Stats returns what the handler holds now.
func (h *Handler) Stats() Stats {
	h.mu.RLock()
	n := len(h.sessions)
	h.mu.RUnlock()
	return Stats{Sessions: n, ReplayBytes: h.replayBytes.Load()}
}
