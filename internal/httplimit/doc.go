// Package httplimit holds the limits every HTTP side of tasksim that
// accepts connections shares (tasksim serve, record and proxy): a cap on
// connections open at once, timeouts on reading a request's head and
// body and on idle keep-alive connections, and the loop that serves a
// handler with them until a context ends.
//
//	listener ─▶ Listener (≤ MaxConns open; one more: 503, closed)
//	         ─▶ Server (ReadHeaderTimeout, IdleTimeout; its Shutdown closes
//	            connections that never began a request at once)
//	         ─▶ CutSlowBody (BodyTimeout: 408, connection closed) ─▶ handler
//
// A server that reads a body whole (the reference server's transport)
// applies the body timeout itself; a proxy, which streams the body on,
// wraps its handler in CutSlowBody.
//
// Example:
//
//	lim := &httplimit.Limits{MaxConns: 100}
//	err := httplimit.Serve(ctx, ln, handler, &httplimit.ServeOptions{Limits: lim})
package httplimit
