package streamhttp

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"time"

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
	// stream is given up; 0 means DefaultMaxReconnects. A resumed
	// connection that the server ends is resumed again, without limit:
	// that is how a server makes the client poll a stream.
	MaxReconnects int
	// MaxMessage caps one JSON body or SSE event in bytes; 0 means
	// DefaultMaxClientMessage.
	MaxMessage int
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
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return newClientConn(*t), nil
}

// ErrSessionGone means the server answered 404 to a request carrying the
// session id: the session was terminated (2025-11-25 Transports, "Session
// Management"). The client must start a new session by sending a new
// initialize request on the same Conn; until then every other message
// fails with this error.
var ErrSessionGone = errors.New("session terminated by the server (404): start a new session with initialize")

// ErrClosed is returned by Read and Write after Close.
var ErrClosed = errors.New("streamhttp: connection closed")

// StreamError is returned by Read when the answer to a request can no
// longer arrive: its SSE stream broke before the response and could not be
// resumed (no event id, the resume was refused, too many attempts), or it
// carried something that is not a JSON-RPC message. It concerns that
// request only; the Conn stays usable.
type StreamError struct {
	// ID and Method are those of the request whose answer was lost.
	ID     mcp.ID
	Method string
	// LastEventID is the last event id received on the stream, "" if none.
	LastEventID string
	Err         error
}

func (e *StreamError) Error() string {
	return fmt.Sprintf("stream answering request %s (%s) lost: %v", e.ID, e.Method, e.Err)
}

func (e *StreamError) Unwrap() error { return e.Err }

// RequestInfo describes one HTTP request a client Conn made, once its
// response headers arrived or it failed.
type RequestInfo struct {
	// At is when the request was sent.
	At time.Time
	// Method is POST, GET or DELETE.
	Method string
	// Status is the HTTP status code, 0 when there was no response.
	Status int
	// RPCID is, for a POST, the id of the request it carries (zero for a
	// notification); for a resuming GET, the id of the request whose
	// stream it resumes; zero for the standalone GET stream and DELETE.
	RPCID mcp.ID
	// RPCMethod is the JSON-RPC method the POST carries, or of the request
	// whose stream a GET resumes.
	RPCMethod string
	// LastEventID is the Last-Event-ID header of a resuming GET.
	LastEventID string
	// Resume marks a GET that resumes a broken stream.
	Resume bool
	// Standalone marks the GET that opens the standalone stream.
	Standalone bool
	// BytesSent approximates the request's size on the wire.
	BytesSent int64
	// Err is the failure, if the request failed (transport error or
	// unexpected status).
	Err error
}

// RequestObserver is implemented by the client Conn. ObserveRequests sets
// a function called once per HTTP request, from the goroutine that made
// it; it must not block. A nil f stops the calls.
type RequestObserver interface {
	ObserveRequests(f func(RequestInfo))
}
