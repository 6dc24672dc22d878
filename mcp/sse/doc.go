// Package sse is the codec for server-sent events: the text/event-stream
// format of the WHATWG HTML standard, which Streamable HTTP uses to push
// JSON-RPC messages from server to client.
//
// A [Reader] turns a byte stream into [Event] values as a browser's
// EventSource would dispatch them; a [Writer] (or [AppendEvent], for a replay
// buffer of encoded events) turns events back into bytes.
//
//	server                                          client
//	Event ─▶ AppendEvent ─▶ []byte ─▶ Writer ─▶ HTTP body ─▶ Reader.Next ─▶ Event
//	                          │                              │
//	                          └─ replay buffer               └─ LastEventID, Retry
//
// Between a server and its client, a [Splitter] cuts the stream into
// blocks for the places that act on whole events (the fault layer, the
// recorder), with one oversize policy for both: a block over [MaxBlock],
// an event that never ends say, is never gathered; its bytes pass on as
// they come.
//
// Every event a Writer writes is dispatched by a Reader, also one without
// data: the writer always emits at least one "data" line. Reading follows the
// standard, including where it drops things: a block without data lines is
// not dispatched (its id still counts), and an event cut off by the end of
// the stream is discarded ([Reader.Partial] tells that it happened).
//
// Example:
//
//	w := sse.NewWriter(os.Stdout)
//	w.WriteEvent(sse.Event{ID: "1", Data: `{"jsonrpc":"2.0"}`})
//
//	r := sse.NewReader(resp.Body)
//	for ev, err := range r.Events() {
//		if err != nil {
//			return err
//		}
//		handle(ev.ID, ev.Data)
//	}
//	if r.Partial() {
//		// the stream was cut inside an event: reconnect with r.LastEventID()
//	}
package sse
