package mcp

import (
	"errors"
	"fmt"
	"time"
)

// The contract between the reference client (or any user of a [Conn]) and
// the transports, kept here so that users know transports only through it:
// one closed-connection error, one lost-stream error, one terminated-session
// error, and the optional request observer.

// ErrClosed is returned by a Conn's Read and Write after Close, whatever the
// transport, and by a client session after it was closed. Transports wrap it
// with their own context; test with errors.Is.
var ErrClosed = errors.New("connection closed")

// ErrSessionGone means the server ended the session: over Streamable HTTP
// it answered 404 to a request carrying the session id (2025-11-25
// Transports, "Session Management"). The client must start a new session by
// sending a new initialize request on the same Conn; until then every other
// message fails with this error.
var ErrSessionGone = errors.New("session terminated by the server (404): start a new session with initialize")

// StreamError is returned by Read when the answer to a request can no
// longer arrive: its stream broke before the response and could not be
// resumed (no event id, the resume was refused, too many attempts), or it
// carried something that is not a JSON-RPC message. It concerns that
// request only; the Conn stays usable.
type StreamError struct {
	// ID and Method are those of the request whose answer was lost.
	ID     ID
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
	RPCID ID
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

// RequestObserver is implemented by a client Conn that makes HTTP requests.
// ObserveRequests sets a function called once per HTTP request, from the
// goroutine that made it; it must not block. A nil f stops the calls.
type RequestObserver interface {
	ObserveRequests(f func(RequestInfo))
}
