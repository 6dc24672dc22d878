package mcp

import "context"

// Transport is the client side of a transport: it connects to a server.
type Transport interface {
	// Connect opens a connection. Over stdio that starts the server
	// process; over Streamable HTTP it prepares the endpoint (the session
	// begins with the initialize request).
	Connect(ctx context.Context) (Conn, error)
}

// Conn is a client's connection to a server: whole JSON-RPC messages both
// ways. Read is called from one goroutine at a time; Write may be called
// from several at once, and concurrently with Read. Close unblocks a
// pending Read, which then returns an error. A Conn tells the client of
// nothing but messages; what else it knows (HTTP requests, bytes, events)
// it reports through optional interfaces found by type assertion.
type Conn interface {
	Read(ctx context.Context) (*Message, error)
	Write(ctx context.Context, msg *Message) error
	Close() error
}

// WireStats counts what a client connection sent and received. Each
// transport fills what it knows: HTTP request counts over Streamable HTTP,
// message counts over stdio, bytes over both.
type WireStats struct {
	// HTTPRequests is POST + GET + DELETE.
	HTTPRequests      int64
	POST, GET, DELETE int64
	// Reconnects counts the GET requests that resumed a broken stream with
	// Last-Event-ID (they are also counted in GET).
	Reconnects int64
	// MessagesSent and MessagesReceived count JSON-RPC messages (stdio).
	MessagesSent, MessagesReceived int64
	// BytesSent and BytesReceived count the bytes on the wire. Over HTTP,
	// request heads are approximated from the headers the transport set;
	// bodies and response bodies are exact. Over stdio they count whole
	// lines, newline included.
	BytesSent, BytesReceived int64
}

// Sub returns s minus before: the traffic between two readings.
func (s WireStats) Sub(before WireStats) WireStats {
	return WireStats{
		HTTPRequests:     s.HTTPRequests - before.HTTPRequests,
		POST:             s.POST - before.POST,
		GET:              s.GET - before.GET,
		DELETE:           s.DELETE - before.DELETE,
		Reconnects:       s.Reconnects - before.Reconnects,
		MessagesSent:     s.MessagesSent - before.MessagesSent,
		MessagesReceived: s.MessagesReceived - before.MessagesReceived,
		BytesSent:        s.BytesSent - before.BytesSent,
		BytesReceived:    s.BytesReceived - before.BytesReceived,
	}
}

// Add returns s plus o: the traffic of two connections together.
func (s WireStats) Add(o WireStats) WireStats {
	return WireStats{
		HTTPRequests:     s.HTTPRequests + o.HTTPRequests,
		POST:             s.POST + o.POST,
		GET:              s.GET + o.GET,
		DELETE:           s.DELETE + o.DELETE,
		Reconnects:       s.Reconnects + o.Reconnects,
		MessagesSent:     s.MessagesSent + o.MessagesSent,
		MessagesReceived: s.MessagesReceived + o.MessagesReceived,
		BytesSent:        s.BytesSent + o.BytesSent,
		BytesReceived:    s.BytesReceived + o.BytesReceived,
	}
}

// StatsReporter is implemented by a Conn that counts its traffic since it
// was made. A decorating Conn (recording, fault injection) forwards it.
type StatsReporter interface {
	Stats() WireStats
}

// RevisionReporter is implemented by a Conn that knows the protocol
// revision it speaks: a Streamable HTTP client Conn always (its
// transport's Revision), a stdio client Conn when its transport was told.
// A decorating Conn forwards it (see Decorate).
type RevisionReporter interface {
	// Revision returns the revision the Conn speaks, or the zero Revision
	// when it does not say.
	Revision() Revision
}

// RevisionOfConn returns the revision c speaks, as the first Conn of its
// chain of decorators that implements RevisionReporter says (ConnAs). The
// zero Revision, when none does or it does not say, means that the Conn
// carries either era, told apart per message: a stdio pipe to a dual-era
// server, where a request that carries the per-request _meta is of
// 2026-07-28 and initialize opens a 2025-11-25 session (2026-07-28
// Versioning, "Backward Compatibility with Initialization-Based
// Versions"; package mcp/rev20260728, ClaimedRevision and Eras).
func RevisionOfConn(c Conn) Revision {
	if r, ok := ConnAs[RevisionReporter](c); ok {
		return r.Revision()
	}
	return ""
}
