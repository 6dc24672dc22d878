// Package stdio is the stdio transport of MCP: newline-delimited JSON-RPC
// messages on a child process's stdin and stdout, logs on stderr only
// (2025-11-25 Transports, "stdio").
//
// The server side, [Serve], runs one session of an mcp.Endpoint over a
// reader and a writer:
//
//	stdin ──lines──▶ DecodeMessage ──▶ Session.Handle ──Reply/Send──▶ lines ──▶ stdout
//
// Requests are handed to the session in arrival order; their answers, and
// every notification the session sends, are written whole, one per line,
// from whichever goroutine produces them. When the endpoint is an
// mcp.StatelessEndpoint, a request carrying the 2026-07-28 per-request
// _meta goes to HandleStateless instead of the session (stateless.go).
//
// The client side, [CommandTransport], starts the server as a child
// process, writes messages to its stdin and reads them from its stdout,
// passing its stderr through; [IOTransport] does the same over any reader
// and writer (pipes in tests). A line that is not JSON is reported by Read
// as a *LineError naming it, and the connection goes on. [Pipe] serves an
// endpoint in-process instead, over io.Pipes, for tests and simulations.
package stdio
