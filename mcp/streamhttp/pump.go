package streamhttp

import (
	"errors"
	"net/http"
	"time"

	"github.com/tasksim/tasksim/clock"
)

// sseWriteTimeout bounds one write of events to a connection. A client
// that stops reading loses its connection, not its stream: it resumes with
// Last-Event-ID. It is wall time whatever Options.Clock is: a write
// deadline is enforced by the kernel on the socket, which knows no other
// clock, and a simulated deadline would cut live connections at random. A
// ResponseWriter without deadlines (the in-memory transport) ignores it.
// The deadline is renewed only once half of it has passed, so a write has
// between 15 and 30 s: renewing it before every event was 4% of the
// server's CPU with thousands of streams.
const sseWriteTimeout = 30 * time.Second

// pingComment is the keep-alive comment sent on idle SSE connections.
var pingComment = []byte(": ping\n\n")

// pump serves stream st as an SSE response on w, on the goroutine net/http
// gave the request. c must be attached to st already. It writes prelude
// (the priming event, if any), then the events numbered from cursor on,
// then new ones as they come, and returns, detaching c, when:
//   - the stream's final event was written (the response ends; 2025-11-25
//     Transports, "Sending Messages to the Server": after the response the
//     server SHOULD terminate the stream);
//   - the client went away or a write failed;
//   - another connection took the stream over;
//   - the session ended;
//   - the connection is closed on purpose (MaxStreamDuration or
//     mcp.ConnectionCloser): the last thing written is then a retry field,
//     and the stream goes on without a connection.
//
// It holds st.mu only to copy the slice headers of pending events; the
// encoded events never change once stored, so writing them needs no lock.
func (h *Handler) pump(w http.ResponseWriter, r *http.Request, st *stream, c *liveConn, cursor uint64, prelude []byte) {
	defer st.detach(c)
	p := &ssePump{h: h, w: w, rc: http.NewResponseController(w), st: st, c: c, cursor: cursor, head: prelude, batch: make([][]byte, 0, 8)}
	defer p.rc.SetWriteDeadline(time.Time{}) // the connection may serve another request
	ctxDone := r.Context().Done()

	// Keep-alive and MaxStreamDuration are protocol time: the handler's
	// clock.
	var keepAlive, maxDuration <-chan time.Time
	if d := h.opts.KeepAlive; d > 0 {
		p.kaTimer = clock.NewTimer(h.clock, d)
		defer p.kaTimer.Stop()
		keepAlive = p.kaTimer.C()
	}
	if d := h.opts.MaxStreamDuration; d > 0 {
		t := clock.NewTimer(h.clock, d)
		defer t.Stop()
		maxDuration = t.C()
	}
	for {
		next, finished, closing, ok := p.pending()
		if !ok {
			return
		}
		if len(p.head) > 0 || len(p.batch) > 0 || closing || !p.flushed {
			if !p.write(next, closing) {
				return
			}
		}
		if finished || closing {
			return
		}
		select {
		case <-c.ch:
		case <-ctxDone:
			return
		case <-keepAlive:
			p.head = pingComment
		case <-maxDuration:
			p.timeUp = true
		}
	}
}

// ssePump is where one connection carrying a stream stands (pump).
type ssePump struct {
	h      *Handler
	w      http.ResponseWriter
	rc     *http.ResponseController
	st     *stream
	c      *liveConn
	cursor uint64 // number of the next event to write
	head   []byte // written before the next batch of events
	batch  [][]byte
	// kaTimer is the keep-alive timer, reset at each write; nil without
	// keep-alives.
	kaTimer  *clock.ChanTimer
	timeUp   bool      // MaxStreamDuration passed: close the connection
	flushed  bool      // the first pass sends the headers even with nothing to write
	deadline time.Time // the connection's write deadline, once set
}

// pending takes the events due on the connection into p.batch, and says
// up to where (next), whether the stream's final event is among them,
// and whether the connection is to close after them. ok is false when the
// connection is to stop at once: another took the stream over, the
// session ended, or the client fell behind the stream's replay buffer.
func (p *ssePump) pending() (next uint64, finished, closing, ok bool) {
	st := p.st
	st.mu.Lock()
	if st.conn != p.c || st.ended {
		st.mu.Unlock()
		return 0, false, false, false
	}
	closing = p.timeUp || st.closeReq
	st.closeReq = false
	var gap bool
	p.batch, next, gap = st.ring.since(p.cursor, p.batch[:0])
	finished = st.done && next == st.ring.next()
	st.mu.Unlock()
	if gap {
		// The client read slower than the stream filled its store.
		p.h.log.Warn("streamhttp: connection fell behind its stream's replay buffer; closing it",
			"session", st.sess.id, "stream", st.num)
		return 0, false, false, false
	}
	return next, finished, closing, true
}

// write writes the head and the batch, then a retry field if the
// connection is closing, and flushes; it reports false when writing
// failed.
func (p *ssePump) write(next uint64, closing bool) bool {
	p.flushed = true
	if now := time.Now(); p.deadline.Sub(now) < sseWriteTimeout/2 { // wall time: see sseWriteTimeout
		p.deadline = now.Add(sseWriteTimeout)
		_ = p.rc.SetWriteDeadline(p.deadline)
	}
	err := writeParts(p.w, p.head, p.batch)
	if err == nil && closing {
		_, err = p.w.Write(p.h.closeRetry)
	}
	if err == nil {
		err = p.rc.Flush()
	}
	if err != nil && !errors.Is(err, http.ErrNotSupported) {
		return false
	}
	p.head = nil
	if len(p.batch) > 0 {
		p.cursor = next
		p.st.markDelivered(p.cursor)
	}
	if p.kaTimer != nil {
		p.kaTimer.Reset(p.h.opts.KeepAlive)
	}
	return true
}

// writeParts writes head and then every event of batch.
func writeParts(w http.ResponseWriter, head []byte, batch [][]byte) error {
	if len(head) > 0 {
		if _, err := w.Write(head); err != nil {
			return err
		}
	}
	for _, ev := range batch {
		if _, err := w.Write(ev); err != nil {
			return err
		}
	}
	return nil
}

// markDelivered records that the events before cursor were written.
func (st *stream) markDelivered(cursor uint64) {
	st.mu.Lock()
	if cursor > st.delivered {
		st.delivered = cursor
	}
	all := st.done && st.delivered == st.ring.next()
	st.mu.Unlock()
	if all && st.num != 0 {
		st.sess.streamDelivered(st)
	}
}
