package recorder

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"maps"
	"mime"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/tasksim/tasksim/internal/httplimit"
	"github.com/tasksim/tasksim/mcp"
	rev "github.com/tasksim/tasksim/mcp/rev20260728"
	"github.com/tasksim/tasksim/traces"
)

// exchange is one request and its response as they pass the proxy.
//
// Its response-side fields are touched by the handler goroutine
// (onResponse, finish) and by the goroutines ReverseProxy writes the body
// from (teeWriter), one at a time: ReverseProxy serializes its writes and
// flushes under its own lock, and finish runs after the copy returned. On
// a simulated clock (forward) the handler goroutine does all of it.
// The SSE tee (split) and the gathered bodies, once handed over, belong to
// the pipeline's goroutine.
type exchange struct {
	p          *Proxy
	r          *http.Request // as the client sent it
	id, conn   uint64
	reqStream  string // "req:<id>"
	respStream string // "post:<id>", "get:<id>", "delete:<id>", ...

	reqBody *requestBody

	// rev is the exchange's revision (docs/trace-format.md, "Revisions"):
	// its request head's, then its request message's once that is
	// recorded. Set before the first record is queued, then only on the
	// pipeline's goroutine, which stamps it on every record of the
	// exchange that has none.
	rev string

	answered bool          // the upstream's head arrived (onResponse ran)
	sse      bool          // the response is an event stream
	respBody *responseBody // watches the upstream body for its end
	split    *sseSplitter  // the event stream's tee
	body     gatherer      // a non-SSE response body
	pending  []byte        // SSE bytes written since the last flush
	writeErr error         // writing to the client failed
}

func (p *Proxy) newExchange(r *http.Request) *exchange {
	id := p.exchanges.Add(1)
	ids := strconv.FormatUint(id, 10)
	ex := &exchange{
		p:          p,
		r:          r,
		id:         id,
		conn:       p.connID(r.RemoteAddr),
		reqStream:  "req:" + ids,
		respStream: strings.ToLower(r.Method) + ":" + ids,
		rev:        string(rev.HeadRevision(r.Header)),
	}
	ex.body.max = p.opts.MaxBody
	return ex
}

// record queues a record made on the traffic's side; r.Raw must be the
// record's own.
func (ex *exchange) record(r traces.Record) {
	r.Conn, r.Exchange = ex.conn, ex.id
	ex.p.pipe.addStamped(r, nil, ex.stamp)
}

// write writes a record at once: only on the pipeline's goroutine.
func (ex *exchange) write(r traces.Record) {
	r.Conn, r.Exchange = ex.conn, ex.id
	ex.stamp(&r)
	ex.p.write(r)
}

// stamp gives r the exchange's revision if it has none: on the pipeline's
// goroutine.
func (ex *exchange) stamp(r *traces.Record) {
	if r.Revision == "" {
		r.Revision = ex.rev
	}
}

// claim takes the revision a message of the request claims, if it claims
// one, as the exchange's: on the pipeline's goroutine.
func (ex *exchange) claim(dir traces.Direction, raw []byte) {
	if dir != traces.DirClientToServer {
		return
	}
	msg, err := mcp.DecodeMessage(raw)
	if err != nil {
		return
	}
	if r, ok := rev.ClaimedRevision(msg.Method, msg.Params); ok {
		ex.rev = string(r)
	}
}

func (ex *exchange) recordRequestHead() {
	r := ex.r
	ex.record(traces.Record{
		Wall:   ex.p.now(),
		Stream: ex.reqStream,
		Dir:    traces.DirClientToServer,
		Kind:   traces.KindRequestHead,
		HTTP: &traces.HTTPHead{
			Method: r.Method,
			URL:    r.RequestURI,
			Proto:  r.Proto,
			Header: headerFields(r.Header, r.Host),
		},
	})
}

// onResponse runs when the upstream's response head arrived, before
// ReverseProxy passes it on.
func (ex *exchange) onResponse(resp *http.Response) {
	ex.answered = true
	ct, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	ex.sse = ct == "text/event-stream"
	ex.record(traces.Record{
		Wall:   ex.p.now(),
		Stream: ex.respStream,
		Dir:    traces.DirServerToClient,
		Kind:   traces.KindResponseHead,
		HTTP:   &traces.HTTPHead{Status: resp.StatusCode, Proto: resp.Proto, Header: headerFields(resp.Header, "")},
	})
	ex.respBody = &responseBody{rc: resp.Body}
	resp.Body = ex.respBody
	if ex.sse {
		ex.split = newSSESplitter(ex)
	}
}

// onRoundTripError runs when no response head came from the upstream,
// and returns the status the recorder answers: 502, or 408 when the
// client's body did not arrive in time (httplimit.CutSlowBody).
func (ex *exchange) onRoundTripError(err error) int {
	now := ex.p.now()
	status, why, answer := http.StatusBadGateway, "upstream: "+err.Error(), "the upstream gave no response"
	if httplimit.BodyTimedOut(ex.r.Context()) {
		status, why, answer = http.StatusRequestTimeout, "client: the body did not arrive in time", "the body did not arrive in time"
	} else if side, end, gone := ex.disconnectSide(); gone {
		ex.record(traces.Record{Wall: now, Stream: ex.respStream, Kind: traces.KindConnError, Note: side + " (no response)", End: end})
		return status
	}
	end := traces.EndServer
	if status == http.StatusRequestTimeout {
		end = traces.EndClient
	}
	ex.record(traces.Record{Wall: now, Stream: ex.respStream, Kind: traces.KindConnError, Note: why + " (no response)", End: end})
	ex.record(traces.Record{
		Wall:   now,
		Stream: ex.respStream,
		Dir:    traces.DirServerToClient,
		Kind:   traces.KindResponseHead,
		HTTP:   &traces.HTTPHead{Status: status, Proto: ex.r.Proto},
		Note:   "answered by the recorder: " + answer,
	})
	ex.record(traces.Record{Wall: now, Stream: ex.respStream, Dir: traces.DirServerToClient, Kind: traces.KindBodyEnd, Note: "eof", End: traces.EndEOF})
	return status
}

// disconnectSide says whether the client's request ended, and how: cut
// by the recorder's own stop, or by the client.
func (ex *exchange) disconnectSide() (string, traces.End, bool) {
	ctx := ex.r.Context()
	if ctx.Err() == nil {
		return "", traces.EndNone, false
	}
	if errors.Is(context.Cause(ctx), ErrStopped) {
		return "recorder: stopped", traces.EndStopped, true
	}
	return "client: disconnected", traces.EndClient, true
}

// wrote sees bytes just written to the client.
func (ex *exchange) wrote(p []byte, err error, at time.Time) {
	if err != nil && ex.writeErr == nil {
		ex.writeErr = err
	}
	switch {
	case !ex.answered:
		// The recorder's own error answer: its head is recorded.
	case ex.sse:
		// Recorded once they are flushed: the client sees them first.
		ex.pending = append(ex.pending, p...)
	default:
		ex.body.add(ex, ex.respStream, traces.DirServerToClient, p, at)
	}
}

// flushed runs after the bytes written so far went to the client.
func (ex *exchange) flushed(err error, at time.Time) {
	if err != nil && ex.writeErr == nil && !errors.Is(err, http.ErrNotSupported) {
		ex.writeErr = err
	}
	if ex.sse && len(ex.pending) > 0 {
		ex.handOver(at)
	}
}

// handOver queues the SSE bytes flushed so far for the tee.
func (ex *exchange) handOver(at time.Time) {
	b := bytes.Clone(ex.pending)
	ex.pending = ex.pending[:0]
	split := ex.split
	ex.p.later(len(b), func() { split.write(b, at) })
}

// finish records the end of the exchange, on the handler goroutine, after
// ReverseProxy returned or while it panics with http.ErrAbortHandler.
func (ex *exchange) finish() {
	now := ex.p.now()
	if ex.reqBody != nil {
		ex.reqBody.finish("not read to its end")
	}
	if !ex.answered {
		return // onRoundTripError recorded what happened
	}
	if ex.sse && len(ex.pending) > 0 {
		ex.handOver(now)
	}

	// A client gone before the handler returned left before the response
	// ended (its last chunk goes out when the handler returns), even if
	// the upstream's body was copied to its end.
	readErr := ex.respBody.err
	cut, cutEnd, gone := ex.disconnectSide()
	switch {
	case gone:
	case ex.writeErr != nil:
		cut, cutEnd = "client: disconnected ("+ex.writeErr.Error()+")", traces.EndClient
	case readErr == io.EOF:
	case readErr != nil:
		cut, cutEnd = "upstream: "+readErr.Error(), traces.EndServer
	default:
		cut, cutEnd = "recorder: the response was not copied to its end", traces.EndError
	}
	// The body's end says the same as the cut, if there is one: on a stop
	// the upstream's body breaks too, but the stop is the cause.
	note, end := "eof", traces.EndEOF
	switch {
	case readErr != nil && readErr != io.EOF:
		note = readErr.Error()
	case ex.writeErr != nil:
		note = "write to client: " + ex.writeErr.Error()
	case readErr == nil:
		note = "not read to its end"
	}
	if note != "eof" || cutEnd == traces.EndStopped {
		end = cutEnd
	}
	split, body := ex.split, &ex.body
	ex.p.later(0, func() {
		if split != nil {
			split.end(now)
		} else {
			body.end(ex, ex.respStream, traces.DirServerToClient, now)
		}
		ex.write(traces.Record{Wall: now, Stream: ex.respStream, Dir: traces.DirServerToClient, Kind: traces.KindBodyEnd, Note: note, End: end})
		if cut != "" {
			ex.write(traces.Record{Wall: now, Stream: ex.respStream, Kind: traces.KindConnError, Note: cut, End: cutEnd})
		}
	})
}

// teeWriter is the ResponseWriter ReverseProxy writes the response to: it
// passes every write and flush on at once and shows the bytes to the
// exchange after that.
type teeWriter struct {
	rw http.ResponseWriter
	rc *http.ResponseController
	ex *exchange
}

func (t *teeWriter) Header() http.Header { return t.rw.Header() }

func (t *teeWriter) WriteHeader(code int) { t.rw.WriteHeader(code) }

func (t *teeWriter) Write(p []byte) (int, error) {
	if ex := t.ex; ex.p.opts.Clock != nil && ex.answered && ex.sse {
		// In process (ProxyOptions.Clock), a write may reach the client
		// before it returns: the client may read an event and act on it
		// (resume after its id) at once. Its bytes are handed to the
		// recording first, so that the event's record comes before
		// whatever the client does next.
		ex.pending = append(ex.pending, p...)
		ex.handOver(ex.p.now())
		n, err := t.rw.Write(p)
		if err != nil && ex.writeErr == nil {
			ex.writeErr = err
		}
		return n, err
	}
	n, err := t.rw.Write(p)
	t.ex.wrote(p[:n], err, t.ex.p.now())
	return n, err
}

// FlushError is what http.ResponseController and ReverseProxy call.
func (t *teeWriter) FlushError() error {
	if t.rc == nil {
		t.rc = http.NewResponseController(t.rw)
	}
	err := t.rc.Flush()
	t.ex.flushed(err, t.ex.p.now())
	return err
}

// Flush implements http.Flusher.
func (t *teeWriter) Flush() { _ = t.FlushError() }

// Unwrap lets http.ResponseController reach the server's ResponseWriter
// (deadlines, hijacking for protocol upgrades).
func (t *teeWriter) Unwrap() http.ResponseWriter { return t.rw }

// responseBody watches the upstream body for how it ends. ReverseProxy
// reads it on the handler goroutine.
type responseBody struct {
	rc  io.ReadCloser
	err error
}

func (b *responseBody) Read(p []byte) (int, error) {
	n, err := b.rc.Read(p)
	if err != nil && b.err == nil {
		b.err = err
	}
	return n, err
}

func (b *responseBody) Close() error { return b.rc.Close() }

// requestBody tees the client's request body as the transport reads it,
// from its own goroutine.
type requestBody struct {
	ex *exchange
	rc io.ReadCloser

	mu   sync.Mutex
	g    gatherer
	done bool
}

func (b *requestBody) Read(p []byte) (int, error) {
	n, err := b.rc.Read(p)
	now := b.ex.p.now()
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.done {
		return n, err
	}
	if b.g.max == 0 {
		b.g.max = b.ex.p.opts.MaxBody
	}
	b.g.add(b.ex, b.ex.reqStream, traces.DirClientToServer, p[:n], now)
	if err != nil {
		b.endLocked(err, now)
	}
	return n, err
}

func (b *requestBody) Close() error {
	err := b.rc.Close()
	b.finish("closed before its end")
	return err
}

// notRead is the end of a request body the upstream did not read to its
// end: the error says why.
type notRead string

func (e notRead) Error() string { return string(e) }

// finish ends the body's records if its end was not seen; note says why.
func (b *requestBody) finish(note string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if !b.done && (b.g.n > 0) {
		b.endLocked(notRead(note), b.ex.p.now())
	}
	b.done = true
}

// endLocked records the body's end: err is io.EOF, the client's read
// error, or (from finish) why the upstream did not read it to its end.
func (b *requestBody) endLocked(err error, at time.Time) {
	b.done = true
	note, end := "eof", traces.EndEOF
	if err != io.EOF {
		note, end = err.Error(), traces.EndClient
	}
	if _, e, gone := b.ex.disconnectSide(); gone {
		end = e
	} else if _, ok := err.(notRead); ok {
		end = traces.EndServer
	}
	ex, g := b.ex, &b.g
	ex.p.later(len(g.buf), func() {
		g.end(ex, ex.reqStream, traces.DirClientToServer, at)
		ex.write(traces.Record{Wall: at, Stream: ex.reqStream, Dir: traces.DirClientToServer, Kind: traces.KindBodyEnd, Note: note, End: end})
	})
}

// gatherer gathers a body to record whole, up to max bytes; past that it
// records what passes as body chunks. add runs on the traffic's side, end
// on the pipeline's goroutine, after the last add.
type gatherer struct {
	max     int
	buf     []byte
	n       int64 // bytes seen
	spilled bool
}

func (g *gatherer) add(ex *exchange, stream string, dir traces.Direction, p []byte, at time.Time) {
	if len(p) == 0 {
		return
	}
	g.n += int64(len(p))
	if !g.spilled && len(g.buf)+len(p) <= g.max {
		g.buf = append(g.buf, p...)
		return
	}
	if !g.spilled {
		g.spilled = true
		if len(g.buf) > 0 {
			ex.record(traces.Record{Wall: at, Stream: stream, Dir: dir, Kind: traces.KindBodyChunk, Raw: g.buf})
		}
		g.buf = nil
	}
	ex.record(traces.Record{Wall: at, Stream: stream, Dir: dir, Kind: traces.KindBodyChunk, Raw: bytes.Clone(p)})
}

// end records a gathered body: as JSON-RPC messages if it is one (or a
// batch of them), else as one body chunk.
func (g *gatherer) end(ex *exchange, stream string, dir traces.Direction, at time.Time) {
	if g.spilled || len(g.buf) == 0 {
		return
	}
	raw := g.buf
	g.buf = nil
	if rpc := traces.DescribeMessage(raw); rpc != nil {
		ex.claim(dir, raw)
		ex.write(traces.Record{Wall: at, Stream: stream, Dir: dir, Kind: traces.KindMessage, Raw: raw, RPC: rpc})
		return
	}
	if batch := describeBatch(raw); batch != nil {
		for i, m := range batch {
			ex.claim(dir, m.raw)
			ex.write(traces.Record{Wall: at, Stream: stream, Dir: dir, Kind: traces.KindMessage, Raw: m.raw, RPC: m.rpc, Note: "batch element " + strconv.Itoa(i), Batch: uint32(i + 1)})
		}
		return
	}
	ex.write(traces.Record{Wall: at, Stream: stream, Dir: dir, Kind: traces.KindBodyChunk, Raw: raw})
}

type batchElem struct {
	raw []byte
	rpc *traces.RPCFields
}

// describeBatch returns the messages of a JSON array of JSON-RPC messages,
// nil if raw is not one.
func describeBatch(raw []byte) []batchElem {
	t := bytes.TrimSpace(raw)
	if len(t) == 0 || t[0] != '[' {
		return nil
	}
	var elems []json.RawMessage
	if json.Unmarshal(t, &elems) != nil || len(elems) == 0 {
		return nil
	}
	out := make([]batchElem, len(elems))
	for i, e := range elems {
		rpc := traces.DescribeMessage(e)
		if rpc == nil {
			return nil
		}
		out[i] = batchElem{raw: e, rpc: rpc}
	}
	return out
}

// headerFields lists a header's fields: Host first if given, then by name,
// the values of one name in the order they came. Go's net/http keeps
// neither the order of the fields nor the case of their names.
func headerFields(h http.Header, host string) []traces.HeaderField {
	out := make([]traces.HeaderField, 0, len(h)+1)
	if host != "" {
		out = append(out, traces.HeaderField{Name: "Host", Value: host})
	}
	for _, k := range slices.Sorted(maps.Keys(h)) {
		for _, v := range h[k] {
			out = append(out, traces.HeaderField{Name: k, Value: v})
		}
	}
	return out
}
