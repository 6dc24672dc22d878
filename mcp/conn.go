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
