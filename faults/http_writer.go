package faults

import (
	"bytes"
	"context"
	"errors"
	"mime"
	"net/http"
	"strconv"

	"github.com/tasksim/tasksim/mcp"
	"github.com/tasksim/tasksim/mcp/sse"
	"github.com/tasksim/tasksim/traces"
)

// errCutWrite is what next's writes return once a fault cut its response.
var errCutWrite = errors.New("faults: the response was cut by a disconnect fault")

// body modes of a response.
const (
	modePass = iota // not a message: bytes pass as written
	modeJSON        // one JSON message, gathered whole
	modeSSE         // an event stream, cut into events
)

// faultWriter is the http.ResponseWriter next writes to: it passes the
// head and the body on, acting on each message. It is used by next's
// goroutine only, as an http.ResponseWriter is.
type faultWriter struct {
	h         *httpFaults
	w         http.ResponseWriter
	sess      *session
	reqMethod string
	revision  mcp.Revision // the request's, of every message of its answer
	stream    string
	streamID  string
	ctx       context.Context
	cancel    context.CancelFunc

	wroteHead bool
	status    int
	mode      int
	body      []byte // modeJSON: the body so far

	split   *sse.Splitter
	dec     sse.BlockDecoder
	over    bool   // an oversize event is passing
	n       int    // events seen
	held    []byte // an event held back (reorder)
	lastOut int    // what became of the last block: 0 dropped, 1 written, 2 held

	cut     bool
	stalled bool
}

func (f *faultWriter) Header() http.Header { return f.w.Header() }

// Unwrap lets http.ResponseController reach the connection.
func (f *faultWriter) Unwrap() http.ResponseWriter { return f.w }

func (f *faultWriter) WriteHeader(code int) {
	if f.wroteHead {
		return
	}
	if code >= 100 && code < 200 {
		f.w.WriteHeader(code) // informational: passes, the real head follows
		return
	}
	f.wroteHead, f.status = true, code
	if sid := f.w.Header().Get("Mcp-Session-Id"); sid != "" {
		f.h.session(sid) // name the session in the order it appears
	}
	ct, _, _ := mime.ParseMediaType(f.w.Header().Get("Content-Type"))
	switch {
	case f.cut || f.stalled:
		return
	case f.stream == "":
	case ct == "text/event-stream":
		f.mode = modeSSE
		f.split = sse.NewSplitter()
		f.split.Oversize = f.oversize
	case ct == "application/json":
		f.mode = modeJSON
		return // the head goes out with the body, in finish
	}
	f.w.WriteHeader(code)
	if f.mode == modeSSE {
		f.flush()
	}
}

func (f *faultWriter) Write(p []byte) (int, error) {
	if !f.wroteHead {
		f.WriteHeader(http.StatusOK)
	}
	switch {
	case f.cut:
		return 0, errCutWrite
	case f.stalled:
		return len(p), nil // lost in a silent connection
	}
	switch f.mode {
	case modeJSON:
		if len(f.body)+len(p) > f.h.opts.MaxBody {
			// Too large to be taken as one message: it passes as it is.
			f.h.set.passOversize()
			f.mode = modePass
			f.w.WriteHeader(f.status)
			if _, err := f.w.Write(f.body); err != nil {
				return 0, err
			}
			f.body = nil
			return f.w.Write(p)
		}
		f.body = append(f.body, p...)
		return len(p), nil
	case modeSSE:
		if err := f.split.Write(p, f.block, f.tail); err != nil {
			return 0, err
		}
		return len(p), nil
	}
	return f.w.Write(p)
}

func (f *faultWriter) Flush() {
	if f.mode == modePass && !f.cut && !f.stalled {
		f.flush()
	}
}

func (f *faultWriter) flush() { _ = http.NewResponseController(f.w).Flush() }

// tail writes the LF that ends the last block, wherever that went.
func (f *faultWriter) tail(lf bool) error {
	if !lf {
		return nil
	}
	switch f.lastOut {
	case 1:
		return f.out([]byte{'\n'})
	case 2:
		f.held = append(f.held, '\n')
	}
	return nil
}

// oversize passes the bytes of an event too long to be taken whole (over
// sse.MaxBlock: one that never ends, say) as they come, flushed, unchanged
// and unseen by the faults: it is no message, has no number, and a held
// event stays held past it. Memory stays bounded whatever its length.
func (f *faultWriter) oversize(p []byte, end bool) error {
	if f.cut {
		return errCutWrite
	}
	if f.stalled {
		return nil
	}
	if !f.over {
		f.h.set.passOversize()
	}
	f.over = !end
	f.lastOut = 1
	err := f.out(p)
	f.flush()
	return err
}

// out writes bytes of the event stream; they are flushed by the caller.
func (f *faultWriter) out(p []byte) error {
	if f.cut || f.stalled {
		return nil
	}
	_, err := f.w.Write(p)
	return err
}

// block acts on one block of the event stream.
func (f *faultWriter) block(b []byte, _ bool) error {
	if f.cut {
		return errCutWrite
	}
	if f.stalled {
		return nil
	}
	ev, err := f.dec.Decode(b)
	if err != nil {
		// No event (comments, a lone id or retry): it passes.
		f.lastOut = 1
		err := f.out(b)
		f.flush()
		return err
	}
	f.n++
	var raw []byte
	if ev.Data != "" {
		raw = []byte(ev.Data)
	}
	m := NewMsg(PlaceHTTP, f.stream, f.streamID, f.n, traces.DirServerToClient, raw)
	m.SSE, m.EventID, m.ReqMethod, m.Revision = true, ev.ID, f.reqMethod, f.revision
	o, err := f.h.opts.carryOut(f.ctx, f.h.set.Decide(m))
	if err != nil {
		return err
	}
	if o.rewrite != nil {
		ev.Data = string(o.rewrite)
		if nb, err := sse.AppendEvent(nil, ev); err == nil {
			b = nb
		}
	}
	f.lastOut = 1
	var werr error
	write := func(p []byte) {
		if werr == nil {
			werr = f.out(p)
		}
	}
	release := func() {
		if f.held != nil {
			write(f.held)
			f.held = nil
		}
	}
	switch o.fate {
	case Drop:
		f.lastOut = 0
		return nil
	case Duplicate:
		write(b)
		write(b)
		release()
	case Hold:
		if f.held == nil {
			f.held = append([]byte(nil), b...)
			f.lastOut = 2
			return nil
		}
		write(b)
		release()
	case CutBefore:
		f.cutNow()
		return errCutWrite
	case CutMid:
		write(b[:len(b)/2])
		f.flush()
		f.cutNow()
		return errCutWrite
	case CutAfter:
		write(b)
		release()
		f.flush()
		f.cutNow()
		return errCutWrite
	case Stall:
		f.stalled = true
		f.lastOut = 0
		return nil
	default:
		write(b)
		release()
	}
	f.flush()
	return werr
}

// cutNow ends the response as a broken connection: next's writes fail and
// its context ends; ServeHTTP aborts once next returns.
func (f *faultWriter) cutNow() {
	f.cut = true
	f.cancel()
}

// finish ends the response once next returned: the JSON message is acted
// on, a held event goes out, a cut or stalled response is aborted.
func (f *faultWriter) finish(ctx context.Context) {
	if f.mode == modeJSON && !f.cut && !f.stalled {
		f.finishJSON()
	}
	if f.mode == modeSSE && !f.cut && !f.stalled {
		if f.held != nil {
			_ = f.out(f.held)
			f.held = nil
		}
		rest, _ := f.split.Pending()
		_ = f.out(rest) // an event next left unfinished (an oversize one passed already)
		f.flush()
	}
	if f.stalled {
		<-ctx.Done()
		panic(http.ErrAbortHandler)
	}
	if f.cut {
		panic(http.ErrAbortHandler)
	}
}

func (f *faultWriter) finishJSON() {
	if len(f.body) == 0 {
		f.w.WriteHeader(f.status) // no message
		return
	}
	m := NewMsg(PlaceHTTP, f.stream, f.streamID, 1, traces.DirServerToClient, f.body)
	m.ReqMethod, m.Revision = f.reqMethod, f.revision
	o, err := f.h.opts.carryOut(f.ctx, f.h.set.Decide(m))
	if err != nil {
		f.cutNow()
		return
	}
	body := f.body
	if o.rewrite != nil {
		body = o.rewrite
	}
	hdr := f.w.Header()
	setLen := func(n int) {
		if hdr.Get("Content-Length") != "" {
			hdr.Set("Content-Length", strconv.Itoa(n))
		}
	}
	setLen(len(body))
	switch o.fate {
	case CutBefore:
		f.cutNow()
		return
	case Stall:
		f.stalled = true
		return
	case Drop:
		setLen(0)
		f.w.WriteHeader(f.status)
		return
	case Duplicate:
		body = bytes.Repeat(body, 2)
		setLen(len(body))
	case CutMid:
		f.w.WriteHeader(f.status)
		_, _ = f.w.Write(body[:len(body)/2])
		f.flush()
		f.cutNow()
		return
	}
	f.w.WriteHeader(f.status)
	_, _ = f.w.Write(body)
	if o.fate == CutAfter {
		f.flush()
		f.cutNow()
	}
}
