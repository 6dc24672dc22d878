package mcp

import "context"

// The server side of every transport (stdio, Streamable HTTP) talks to the
// protocol through three small interfaces. The transport owns the wire:
// framing, streams, sessions ids, resumability. The Endpoint owns the
// protocol: what each message means and what to answer.
//
//	transport ──NewSession(outbox)──▶ Endpoint
//	transport ──Handle(msg, replier)─▶ Session ──Reply(msg, final)─▶ transport
//	                                   Session ──Send(msg)──────────▶ transport (outbox)
//
// A request is answered through its Replier: zero or more non-final
// messages (notifications related to the request, and under SEP-1905
// streaming, responses carrying the request's id), then exactly one final
// message, after which the transport ends the request's stream. Messages
// not tied to a request being answered (task status and partial
// notifications after the request was answered, for example) go to the
// session's Outbox; over Streamable HTTP that is the session's standalone
// GET stream.

// Endpoint makes sessions. A server implements it.
type Endpoint interface {
	// NewSession starts a session whose unsolicited messages go to out.
	// Over stdio there is one session for the life of the process; over
	// Streamable HTTP there is one per MCP-Session-Id.
	NewSession(out Outbox) Session
}

// Session is one client's conversation with the server.
type Session interface {
	// Handle processes one message from the peer. It may be called from
	// several goroutines at once (one per HTTP request); over stdio it is
	// called in arrival order from the read loop. It must return promptly:
	// work that blocks (a tool, tasks/result) runs on and answers through r
	// later, from any goroutine.
	//
	// For a request, r is where the answer goes; for a notification or a
	// response r is nil. ctx carries the session's lifetime, not the
	// connection's: a client that disconnects does not end it (the
	// transport keeps the stream for resumption); closing the session does.
	Handle(ctx context.Context, msg *Message, r Replier)
	// Close ends the session: its work stops and its tasks are released.
	// It is idempotent.
	Close()
}

// Replier carries the answer to one request.
type Replier interface {
	// Reply sends msg as part of the answer. final marks the last message;
	// Reply after the final one returns ErrReplied. A transport may choose
	// the shape of the answer from the first call: over Streamable HTTP a
	// first message that is final becomes an application/json body, and
	// anything else opens an SSE stream.
	//
	// A nil msg with final set ends the answer without a response: the
	// request was cancelled (notifications/cancelled), and a receiver
	// SHOULD NOT answer a cancelled request. Over Streamable HTTP the
	// request's stream ends (a 202 if nothing was sent yet); over stdio
	// nothing is written.
	Reply(ctx context.Context, msg *Message, final bool) error
}

// Outbox carries messages that answer no request being handled.
type Outbox interface {
	// Send queues msg for the peer. It does not wait for delivery.
	Send(ctx context.Context, msg *Message) error
}

// ErrReplied is returned by Replier.Reply after the final message.
var ErrReplied = errorString("request already answered")

type errorString string

func (e errorString) Error() string { return string(e) }

// ConnectionCloser is implemented by a Replier whose transport can end the
// connection carrying an answer without ending the answer itself: over
// Streamable HTTP "the server MAY close the connection (without terminating
// the SSE stream) at any time", having sent a retry field, and the client
// resumes with GET and Last-Event-ID (2025-11-25 Transports, "Sending
// Messages to the Server"). Later replies go to the stream's event store and
// reach the client when it resumes. Called before any reply, it first opens
// the stream (a priming event).
type ConnectionCloser interface {
	CloseConnection()
}
