// Package streamhttp is the Streamable HTTP transport of MCP 2025-11-25
// (2025-11-25 Transports, "Streamable HTTP"): the server side, [Handler],
// an http.Handler serving an [mcp.Endpoint] at one path, and the client
// side, [ClientTransport].
//
// # Server
//
//	srv := &http.Server{Addr: "127.0.0.1:7070", Handler: streamhttp.NewHandler(endpoint, nil)}
//	log.Fatal(srv.ListenAndServe())
//
// One endpoint path (default /mcp) takes POST (a JSON-RPC message), GET
// (an SSE stream) and DELETE (end the session); other methods get 405.
// Every request passes the DNS-rebinding checks first (Origin, and Host on
// loopback listeners; 403). Sessions are created by an initialize request
// without MCP-Session-Id and named by 130 random bits.
//
// A request's answer is shaped by its first reply: a final message becomes
// an application/json body, anything else an SSE stream. Every SSE answer
// is a logical stream with its own replay buffer; so is the session's
// standalone stream, fed by the mcp.Outbox. A stream outlives the HTTP
// connection carrying it: replies keep going to its buffer, and the client
// resumes with GET and Last-Event-ID, getting exactly the events of that
// stream after that id. Buffers are bounded in events and bytes (per
// stream, per session, in all); a finished stream can be resumed for
// Options.StreamRetention, then its events are released. Sessions,
// requests per session and resumes are capped: past a cap, 503.
//
//	POST ─▶ Session.Handle(ctx=session's, msg, replier)
//	          replier.Reply ─┬─ first final ──────────────▶ 200 application/json
//	                         └─ otherwise ─▶ stream N ─────▶ 200 text/event-stream (POST)
//	          Outbox.Send ────────────────▶ stream 0 ─────▶ 200 text/event-stream (GET)
//	                                           │
//	                  GET + Last-Event-ID "N_E" └─ replay after E, then live
//
// Event ids are "N_E" (event E of stream N; see eventid.go), unique in the
// session, so a Last-Event-ID names its stream.
//
// Process state enters through Options: Clock times keep-alives,
// MaxStreamDuration and session idleness (a clock.Sim in simulations; the
// wall clock by default), Rand draws session ids (crypto/rand by default,
// a seeded reader to replay a run).
//
// # In memory
//
// [NewMemoryTransport] is an http.RoundTripper that serves requests with
// an http.Handler in-process, and [Pipe] a ClientTransport over it: the
// whole protocol (JSON and SSE answers, the standalone GET, resumption
// with Last-Event-ID after the server ends a connection, DELETE) with no
// socket, using only channels, io.Pipe and sync, so that it runs inside
// testing/synctest bubbles and on a simulated clock:
//
//	h := streamhttp.NewHandler(endpoint, &streamhttp.Options{Clock: sim})
//	sess, err := client.New(nil).Connect(ctx, streamhttp.Pipe(h))
//
// # Concurrency
//
// Handler, its sessions, repliers and the Outbox are safe for concurrent
// use. Session.Handle runs on the request's goroutine; Reply and Send may
// come from any goroutine and never wait for the network: they encode the
// message once into the stream's buffer and wake the connection attached
// to it, if any. Each SSE response is written by the goroutine net/http
// gave it (pump), which copies pending events under the stream's lock and
// writes them without it. A JSON answer uses no goroutine beyond
// net/http's own.
//
// Locks, always taken in this order and never held across network I/O or
// calls into the endpoint: replier.mu (one request's answer), session.mu
// (the session's stream table and retention), stream.mu (one stream's
// buffer and attached connection). Handler.mu guards the session table
// alone.
//
// # Choices where the specification leaves room
//
//   - Accept: media ranges count, so "*/*" or "application/*, text/*"
//     satisfy POST; an absent Accept header gets 406.
//   - Content-Type: application/json with any parameters; a charset, if
//     given, must be UTF-8 (else 415).
//   - An initialize carrying the MCP-Session-Id of a live session is
//     handled in that session like any request.
//   - A second GET without Last-Event-ID while the standalone stream is
//     connected gets 409; with Last-Event-ID a GET replaces the older
//     connection of its stream.
//   - Resuming: 400 for a malformed id or one never sent, 409 when the
//     events after it are no longer stored, 404 only for an ended session.
//   - DELETE answers 200 with no body.
//   - Transport errors carry a JSON-RPC error body, code -32000, id null.
//
// # The stateless era (2026-07-28)
//
// When the endpoint is an mcp.StatelessEndpoint, the same path serves the
// stateless revision beside sessions (era.go decides per POST: initialize
// and a live MCP-Session-Id are the session era; per-request _meta, or an
// MCP-Protocol-Version naming 2026-07-28, the stateless one). A stateless
// request is read once where its era is chosen (rev20260728.ReadRequest),
// checked (_meta: -32602; routing headers, and the Mcp-Param headers of a
// tools/call whose tool marks arguments x-mcp-header when the endpoint is
// a rev20260728.ToolHeaders: -32020; both 400), handed to HandleStateless
// with the read request in its context (rev20260728.WithRequest) and a
// context that ends when its client goes
// away, and answered as JSON or as an SSE stream without event ids; it
// makes no session and no stream store. GET and DELETE of a stateless
// client get 405.
package streamhttp
