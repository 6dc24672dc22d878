// Package recorder records MCP traffic into traces without changing it:
// [Proxy], an HTTP reverse proxy that keeps every SSE event whole,
// [RunStdio], which runs a stdio server and records each line, and
// [Conn], an mcp.Conn decorator that records each message of an
// in-process run. A [Pipeline] writes their records in order, together
// with the faults and annotations others add to it.
//
// # HTTP
//
// A Proxy is an http.Handler built on httputil.ReverseProxy with
// FlushInterval -1: every read from the upstream is written and flushed to
// the client at once, so the client sees each event when it would without
// the proxy. (On a simulated clock, ProxyOptions.Clock, the Proxy forwards
// by itself instead, every step on the handler's goroutine: ReverseProxy
// also flushes from a wall-clock timer's goroutine, which a simulation's
// clock cannot see.) The bytes pass unchanged; what passed is copied and handed to
// a recording pipeline, a goroutine of the Proxy's own, that cuts event
// streams into events, describes JSON-RPC messages and writes records:
//
//	        request                                        request
//	client ─────────▶ Proxy.ServeHTTP ── ReverseProxy ───────────────▶ upstream
//	       ◀───────── teeWriter: write + flush first ◀──────────────── response
//	                       │ then copy          (head, JSON body, SSE bytes)
//	  heads, request body  │
//	  ─────────────────────▼
//	          pipeline: one goroutine, in the order things passed:
//	          SSE bytes -> events, JSON-RPC fields -> records
//	                       │
//	                       ▼
//	          traces.Writer ──▶ run.trace
//
// Each request is an exchange (Record.Exchange, from 1) on a client
// connection (Record.Conn, from 1). Its records, in order:
//
//	request-head   "req:N"  c>s  method, path and query as sent, headers
//	message        "req:N"  c>s  the JSON-RPC body (one per element of a batch);
//	                             a body that is not JSON-RPC: body-chunk
//	body-end       "req:N"  c>s  End eof, or how the body ended early (Note: why)
//	response-head  "M:N"    s>c  status and headers; M is the method in lower case:
//	                             "post:N", "get:N" (standalone or resumed with
//	                             Last-Event-ID), "delete:N"
//	sse-event      "M:N"    s>c  one per event of a text/event-stream answer
//	message        "M:N"    s>c  a JSON answer
//	body-end       "M:N"    s>c  End eof, or who cut the body (Note: the error)
//	conn-error     "M:N"    -    how the exchange was cut: End client, server,
//	                             stopped (the recorder's own stop) or error;
//	                             Note the details ("client: disconnected",
//	                             "upstream: <error>", "recorder: stopped")
//
// Every record of an exchange has the exchange's MCP revision (Revision):
// that of its request message when it claims one (2026-07-28 by its
// per-request _meta, 2025-11-25 for initialize), else of its head
// (MCP-Protocol-Version, or 2025-11-25 for a session's Mcp-Session-Id);
// recorder.Conn and the stdio recorder follow it per message
// (docs/trace-format.md, "Revisions"). The rules are package
// rev20260728's (ClaimedRevision, HeadRevision, Eras), which the fault
// layer shares; recorder.Conn takes the connection's revision from the
// Conn it wraps when that one says (mcp.RevisionOfConn). The routing headers of 2026-07-28
// (MCP-Protocol-Version, Mcp-Method, Mcp-Name) are in the request head
// like every other header.
//
// conn-open and conn-close records frame each client connection; to have
// them when the connection opens and closes, serve the Proxy with Serve or
// set http.Server.ConnState to Proxy.ConnState. An upstream that cannot be
// reached gets conn-error "upstream: ..." and the 502 the client got, as a
// response-head noted as answered by the recorder.
//
// Choices:
//
//   - An SSE event is one record: its exact bytes on the wire (Raw), its
//     fields as the project's SSE reader decodes them (SSE: id, event,
//     data, retry, with HasID and HasRetry) and, when its data is a
//     JSON-RPC message, that message's fields (RPC) on the same record; no
//     separate message record follows. The Raw of a stream's sse-event and
//     body-chunk records, in order, are exactly the bytes the client was
//     sent. A block with fields but no data line (a lone "retry: 1000",
//     which a server sends before closing a connection) is an sse-event
//     noted "no data: not dispatched", with the id and retry it sets; a
//     block of comments (keep-alive pings) is a body-chunk noted "sse
//     comment"; an event the stream's end cut short is a body-chunk noted
//     "partial SSE event: the stream ended inside it".
//   - A record's time is when its bytes passed (for an event: when its
//     last byte was flushed to the client), taken on the traffic's
//     goroutine; the record is written later by the pipeline, which leaves
//     the CPU to the traffic first (it starts 300 µs after an idle spell,
//     PipelineOptions.Settle, and yields between records). That wait is
//     wall time: it changes when records reach the file, not what they
//     say nor their order. The file is in the order the traffic
//     passed. A burst faster than recording (see the numbers below) is
//     queued up to ProxyOptions.MaxPending bytes (1 MiB); past that the
//     stream is slowed to the recording's pace rather than lose records.
//     MaxPending is also what bounds the loss of a recorder killed with
//     SIGKILL (docs/trace-format.md, "Writing"; TestKilledRecorderLossIsBounded).
//   - In process (ProxyOptions.Clock, with a Transport that serves the
//     upstream in memory, as the simulator's HTTP record does), records
//     are stamped on that clock, the pipeline never waits on the wall
//     clock, and an event stream's bytes are handed to the recording
//     before they are written, since a write in memory may reach the
//     client before it returns: an event is recorded before anything the
//     client does on reading it (TestProxyInProcess).
//   - A client gone before its response ended is recorded as such
//     ("client: disconnected") even when the upstream finished the body:
//     the end of a response goes out only when the proxy's handler returns.
//   - Headers: Go's net/http keeps neither the order of header fields nor
//     the case of their names, so a head lists Host first, then the fields
//     by canonical name, the values of one name in wire order.
//   - Unchanged means: the body bytes, status and end-to-end headers. As
//     any HTTP/1.1 proxy, the Proxy drops hop-by-hop headers (Connection,
//     Keep-Alive, Transfer-Encoding, ...) and frames the body itself. It
//     adds no X-Forwarded-* headers, asks for no compression the client
//     did not ask for, keeps the client's path and query, and sends the
//     upstream's Host unless ProxyOptions.KeepHost; the trace keeps the
//     client's Host.
//
// # stdio
//
// RunStdio runs the server command with pipes on all three streams,
// passes stdin to it and its stdout and stderr back as the bytes arrive,
// and records each line as a stdio-line: "stdin" (c>s) and "stdout" (s>c)
// with the RPC fields of JSON-RPC lines, "stderr" (direction none: not part
// of the protocol). Output lines are recorded after they were passed on,
// stdin lines just before, so that no answer precedes its request in the
// trace. The child is a connection: conn-open (pid and command line), then
// conn-close "exit status 0", or conn-error with the exit status or the
// signal. Its exit code is returned, 128+n when signal n killed it.
// `tasksim record -o FILE -- CMD ARGS` is RunStdio, and tasksim exits with
// the server's code.
// RunStdioPipeline does the same into a Pipeline that others (a line
// fault layer, annotations) add to as well.
//
// # In-process runs
//
// Conn decorates an mcp.Conn (built on mcp.Decorate, so optional
// interfaces stay reachable with mcp.ConnAs) and records every message
// read and written as a message record: direction, the JSON-RPC fields of
// traces.DescribeMessage, times from the pipeline's clock (a clock.Sim in
// a simulation). A run of the reference client over an in-memory transport
// thus writes the same kind of trace as the proxy, with no socket. With a
// fault layer, put one decorator on each side of it; the trace then holds
// both views (traces.Side), and the fault layer adds its fault records to
// the same pipeline, naming the message's record with Pipeline.IndexOf:
//
//	client ─ Conn(side client) ─ fault layer ─ Conn(side server) ─ transport
//	            │                    │                │
//	            └──── Add ───────────┴─ AddFault ─────┴──▶ Pipeline ──▶ traces.Writer
//
//	w, _ := traces.NewWriter(f, h, &traces.WriterOptions{Now: clk.Now})
//	p := recorder.NewPipeline(w, &recorder.PipelineOptions{Clock: clk})
//	conn = recorder.Conn(conn, p, &recorder.ConnOptions{Note: "in-process server"})
//	... run ...
//	conn.Close(); p.Close(); w.Close()
//
// # Cost
//
// BenchmarkProxySSE (go test -run '^$' -bench ProxySSE ./recorder)
// measures, in one run, a minimal SSE server read directly and through the
// Proxy recording to a file, on this project's 2-core machine:
//
//	latency at 1,000 events/s, 500-event blocks direct and proxied in turn,
//	3,000 events each way (added = proxied - direct):
//	  added per event   p50 16-18 µs    p99 43-50 µs
//	  direct            p50 about 20 µs p99 55-59 µs
//	throughput, 50,000-event bursts written as fast as the server can:
//	  at the client     1.4-1.7 × direct: the proxy passes what it reads
//	                    in large writes, which the client reads faster than
//	                    one event per read
//	  recorded          213,000-237,000 events/s, 0.84-1.02 of direct: a
//	                    stream faster than that for longer than MaxPending
//	                    holds would be slowed to this pace
//
// Recording an event costs about 4 µs on the recording goroutine; 2.3 µs
// of it is traces.DescribeMessage, which walks the message once without
// decoding its content.
package recorder
