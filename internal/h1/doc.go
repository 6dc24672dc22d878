// Package h1 is an HTTP/1.1 client transport (an http.RoundTripper) that
// starts no goroutine per connection, for the load generator, which holds
// thousands of SSE streams open at once.
//
// net/http's Transport keeps two goroutines on every connection (readLoop
// and writeLoop), each with its stack: at 10,000 streams that is 20,000
// goroutines and most of the generator's memory per stream. Transport
// instead writes the request and reads the response head on the caller's
// goroutine, and the body is read from the connection by whoever reads
// resp.Body:
//
//	RoundTrip ── idle conn from the pool, or dial ──▶ req.Write ──▶ http.ReadResponse ──▶ resp
//	resp.Body.Read … io.EOF, reusable ──▶ back to the pool
//	resp.Body.Close before EOF, a read error, ctx done ──▶ the connection is closed
//
// What goes on the wire is what net/http's Transport sends with
// DisableCompression: req.Write's request line and headers (Host,
// User-Agent, Content-Length or chunked), one request at a time on a
// connection, keep-alive unless either side says Connection: close.
//
// Requests it does not handle go to Fallback (net/http's Transport): https
// (TLS), a request a proxy from the environment (HTTP_PROXY, NO_PROXY)
// would carry, and protocol upgrades.
//
// Cancellation: a request's ctx ending closes its connection (by
// context.AfterFunc, which starts a goroutine only when ctx ends), so a
// blocked write, response read or body read returns at once.
//
// Example:
//
//	rt := &h1.Transport{MaxIdleConns: 100, Fallback: http.DefaultTransport}
//	client := &http.Client{Transport: rt}
//	defer rt.CloseIdleConnections()
package h1
