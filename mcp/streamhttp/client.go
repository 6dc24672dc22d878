package streamhttp

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"time"

	"github.com/tasksim/tasksim/clock"
	"github.com/tasksim/tasksim/mcp"
)

// Defaults of ClientTransport.
const (
	// DefaultReconnectDelay is how long a client waits before resuming a
	// broken stream when the server sent no retry field.
	DefaultReconnectDelay = time.Second
	// DefaultMaxReconnects is how many resume attempts in a row may fail
	// (no stream in answer) before a stream is given up.
	DefaultMaxReconnects = 5
	// DefaultMaxClientMessage caps one JSON body or one SSE event a client
	// accepts, in bytes.
	DefaultMaxClientMessage = 16 << 20
	// clientCloseTimeout bounds the DELETE that ends a session on Close.
	clientCloseTimeout = 5 * time.Second
)

// ClientTransport is the client side of Streamable HTTP (2025-11-25
// Transports, "Streamable HTTP"). It implements mcp.Transport; Connect does
// no I/O, the session begins with the initialize request written to the
// Conn.
//
// The Conn it returns sends every message as a POST to URL and reads the
// answer, a JSON body or an SSE stream, delivering every message of it to
// Read:
//
//	Write ─POST─▶ 202 (nothing) | application/json (one message) | text/event-stream ─┐
//	after notifications/initialized: GET (standalone stream, optional) ───────────────┤
//	a stream broken before its response: wait retry, GET + Last-Event-ID ─────────────┤
//	                                                              Read ◀── messages ◀─┘
//
// Concurrency: Write may be called from several goroutines at once and
// concurrently with Read; Read from one goroutine at a time; Close from any.
//
// Beyond messages, the Conn tells of the HTTP layer through optional
// interfaces: Stats (request and byte counts) and RequestObserver (one call
// per HTTP request). A stream that fails for good before its response
// arrived makes Read return a *StreamError for that request; the Conn stays
// usable.
type ClientTransport struct {
	// URL is the MCP endpoint, e.g. http://127.0.0.1:7070/mcp.
	URL string
	// HTTPClient sends the requests; nil means http.DefaultClient. Its
	// Timeout, if any, bounds whole streams, so leave it zero.
	HTTPClient *http.Client
	// Header holds extra headers for every request (authorization,
	// tracing). The transport's own headers win over these.
	Header http.Header
	// NoStandaloneStream turns off the GET stream the Conn otherwise opens
	// after initialization (2025-11-25 Transports, "Listening for Messages
	// from the Server"). With the stream on, the Write of
	// notifications/initialized returns once the server answered the GET
	// (at most 2 s later), so the stream is open before the next request.
	NoStandaloneStream bool
	// ReconnectDelay is the wait before resuming a broken stream when the
	// server set no retry field; 0 means DefaultReconnectDelay. A retry
	// field always wins (the client MUST respect it).
	ReconnectDelay time.Duration
	// MaxReconnects is how many resume attempts in a row may fail (a
	// transport error or a 5xx; a 4xx ends the stream at once) before a
	// stream is given up; 0 means DefaultMaxReconnects, and a negative
	// value gives a broken stream up at once, with no resume (a client
	// that does not resume, as a peer may be). A resumed connection that
	// the server ends is resumed again, without limit: that is how a
	// server makes the client poll a stream.
	MaxReconnects int
	// MaxMessage caps one JSON body or SSE event in bytes; 0 means
	// DefaultMaxClientMessage.
	MaxMessage int
	// Revision is the protocol revision the Conn speaks. The zero value
	// and mcp.Revision20251125 are the session era, as described above. A
	// stateless revision (mcp.Revision20260728) sends every message as a
	// POST of its own with the routing headers MCP-Protocol-Version,
	// Mcp-Method and Mcp-Name, no session and no standalone stream, reads
	// a JSON-RPC error answered with a 4xx as the answer, never resumes a
	// broken stream (Read returns a *StreamError: the request is lost and
	// may be re-issued with a new id), and closes a request's stream when
	// the ctx given to its Write ends, which cancels the request
	// (2026-07-28 Streamable HTTP, "Request Metadata", "Cancellation").
	Revision mcp.Revision
	// Clock times every wait of the Conn (the retry before a resume, the
	// wait for the standalone GET, the drain after a final response, the
	// bound on the closing DELETE) and RequestInfo.At; nil means the wall
	// clock. On a clock.Sim these waits end only as simulated time
	// passes; the HTTP exchanges themselves stay real.
	Clock clock.Clock
}

// Connect implements mcp.Transport. It checks the URL and prepares the
// connection; nothing is sent until the first Write.
func (t *ClientTransport) Connect(ctx context.Context) (mcp.Conn, error) {
	u, err := url.Parse(t.URL)
	if err != nil {
		return nil, fmt.Errorf("streamhttp: server URL: %w", err)
	}
	if u.Scheme != "http" && u.Scheme != "https" || u.Host == "" {
		return nil, fmt.Errorf("streamhttp: server URL %q: want http:// or https:// and a host", t.URL)
	}
	if t.Revision != "" && !t.Revision.IsKnown() {
		return nil, fmt.Errorf("streamhttp: %w %q", mcp.ErrUnknownRevision, t.Revision)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return newClientConn(*t), nil
}

// The client-side contract is mcp's; these names stay for callers of
// this package.
var (
	// ErrSessionGone is mcp.ErrSessionGone.
	ErrSessionGone = mcp.ErrSessionGone
	// ErrClosed is mcp.ErrClosed: Read and Write after Close.
	ErrClosed = mcp.ErrClosed
)

type (
	// StreamError is mcp.StreamError.
	StreamError = mcp.StreamError
	// RequestInfo is mcp.RequestInfo.
	RequestInfo = mcp.RequestInfo
	// RequestObserver is mcp.RequestObserver.
	RequestObserver = mcp.RequestObserver
)
