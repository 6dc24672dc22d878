package streamhttp

import (
	"bytes"
	"sync"
	"time"

	"github.com/tasksim/tasksim/mcp"
	"github.com/tasksim/tasksim/mcp/sse"
)

// A logical stream is the sequence of SSE events of one answer to a POST,
// or the session's standalone stream (number 0) fed by the Outbox. It is not
// the HTTP connection that carries it: a stream outlives its connections,
// and a client may resume it on a new one with GET and Last-Event-ID
// (2025-11-25 Transports, "Resumability and Redelivery"). At most one live
// connection is attached to a stream at a time.
//
//	Replier.Reply / Outbox.Send ─▶ stream.append ─▶ eventRing ─┬▶ wake ─▶ pump ─▶ HTTP response
//	                                   (encoded once)          └─ replay on GET + Last-Event-ID

// eventRing is a bounded replay buffer of encoded events, numbered from
// first. Pushing beyond its capacity drops the oldest event. It grows on
// demand, so a stream that carries three events costs three slots, not its
// capacity. It is not safe for concurrent use; its stream's lock guards it.
type eventRing struct {
	buf   [][]byte // circular; len(buf) is the current capacity
	head  int      // index of the oldest event in buf
	n     int      // events held
	first uint64   // number of the oldest event held (next, when n == 0)
	max   int      // capacity limit
	bytes int64    // the events' total length
}

func newEventRing(max int, first uint64) eventRing {
	return eventRing{max: max, first: first}
}

// next returns the number the next pushed event gets.
func (r *eventRing) next() uint64 { return r.first + uint64(r.n) }

// push appends an event and reports whether the oldest one was dropped to
// make room, and how long it was.
func (r *eventRing) push(ev []byte) (dropped bool, droppedBytes int64) {
	if r.n == len(r.buf) {
		if r.n < r.max {
			grown := make([][]byte, min(max(2*len(r.buf), 4), r.max))
			for i := 0; i < r.n; i++ {
				grown[i] = r.buf[(r.head+i)%len(r.buf)]
			}
			r.buf, r.head = grown, 0
		} else {
			droppedBytes = r.dropOldest()
			dropped = true
		}
	}
	r.buf[(r.head+r.n)%len(r.buf)] = ev
	r.n++
	r.bytes += int64(len(ev))
	return dropped, droppedBytes
}

// dropOldest drops the oldest event, if any, and returns its length.
func (r *eventRing) dropOldest() int64 {
	if r.n == 0 {
		return 0
	}
	n := int64(len(r.buf[r.head]))
	r.buf[r.head] = nil
	r.head = (r.head + 1) % len(r.buf)
	r.n--
	r.first++
	r.bytes -= n
	return n
}

// clear drops every event and frees the buffer; numbering goes on.
func (r *eventRing) clear() int64 {
	n := r.bytes
	r.first += uint64(r.n)
	r.buf, r.head, r.n, r.bytes = nil, 0, 0, 0
	return n
}

// since appends to dst the events numbered from cursor on and returns them
// with the number after the last. gap reports that events from cursor on
// were dropped already, in which case nothing is returned.
func (r *eventRing) since(cursor uint64, dst [][]byte) (evs [][]byte, next uint64, gap bool) {
	if cursor < r.first {
		return dst, cursor, true
	}
	end := r.next()
	for c := cursor; c < end; c++ {
		dst = append(dst, r.buf[(r.head+int(c-r.first))%len(r.buf)])
	}
	return dst, max(end, cursor), false
}

// stream is one logical stream of a session.
//
// Locking: mu guards everything below it. It is held only to touch memory,
// never across network I/O or a call into the endpoint. The lock order is
// replier.mu, then session.mu, then stream.mu.
type stream struct {
	num  uint64
	sess *session

	mu        sync.Mutex
	ring      eventRing
	done      bool      // the final message is in the ring: the stream ends after it
	ended     bool      // the session ended: connections stop, appends fail
	conn      *liveConn // the connection carrying the stream, if any
	attached  bool      // a connection was ever attached
	closeReq  bool      // close the attached connection with a retry field
	delivered uint64    // number of the first event not yet written to any connection
	drops     int       // events dropped before they were delivered
	primings  uint64    // priming events sent (standalone stream only)
	retired   bool      // no longer resumable: its events go once no connection carries it

	// Guarded by sess.mu: bookkeeping for keeping finished streams.
	finished     bool      // done, and counted in sess.finished
	deliveredAll bool      // every event, the final one included, was written
	finishedAt   time.Time // when finished became true, on the handler's clock
}

func newStream(s *session, num uint64, capacity int) *stream {
	return &stream{num: num, sess: s, ring: newEventRing(capacity, 1), delivered: 1}
}

// appendMessage encodes a message (its JSON in data) as the stream's next
// event and wakes the attached connection. A nil data with final set ends
// the stream without a message. It fails only when the session has ended.
func (st *stream) appendMessage(data []byte, final bool) error {
	st.mu.Lock()
	if st.ended {
		st.mu.Unlock()
		return ErrSessionClosed
	}
	if st.done {
		st.mu.Unlock()
		return mcp.ErrReplied
	}
	var dropped bool
	var drops int
	if data != nil {
		ev, err := messageEvent(data, st.num, st.ring.next())
		if err != nil {
			st.mu.Unlock()
			return err
		}
		dropped, drops = st.pushLocked(ev)
	}
	st.done = final
	c := st.conn
	st.mu.Unlock()
	if c != nil {
		c.wake()
	}
	if dropped && drops&(drops-1) == 0 { // log at 1, 2, 4, 8... drops
		st.sess.h.log.Warn("streamhttp: replay buffer full, dropped an undelivered event",
			"session", st.sess.id, "stream", st.num, "dropped", drops)
	}
	if final {
		st.sess.streamFinished(st)
	}
	return nil
}

// messageEvent is the SSE event that carries the JSON-RPC message data as
// event e of stream s. Data on one line (as every encoded message is) is
// written in one allocation, bytes as sse.AppendEvent writes them
// (TestMessageEvent); other data goes through sse.AppendEvent, which
// splits its lines.
func messageEvent(data []byte, s, e uint64) ([]byte, error) {
	if bytes.IndexByte(data, '\n') < 0 && bytes.IndexByte(data, '\r') < 0 {
		ev := make([]byte, 0, len(data)+64)
		ev = append(ev, "id: "...)
		ev = appendEventID(ev, s, e)
		ev = append(ev, "\nevent: message\ndata:"...)
		if len(data) > 0 {
			ev = append(ev, ' ')
			ev = append(ev, data...)
		}
		return append(ev, "\n\n"...), nil
	}
	id := appendEventID(make([]byte, 0, 24), s, e)
	return sse.AppendEvent(make([]byte, 0, len(data)+len(id)+32), sse.Event{ID: string(id), Name: "message", Data: string(data)})
}

// pushLocked stores ev and drops the oldest events while the stream, its
// session or the handler holds more than its byte budget
// (Options.MaxStreamBytes, MaxSessionReplayBytes, MaxReplayBytes) or the
// stream more than EventStoreEvents events. The newest event always stays:
// it has not been written yet. It reports whether an event nobody was
// given was dropped, and the count of such drops so far. st.mu must be held.
func (st *stream) pushLocked(ev []byte) (dropped bool, drops int) {
	h := st.sess.h
	o := &h.opts
	undelivered := func() {
		if st.ring.first-1 >= st.delivered {
			dropped = true
			st.drops++
		}
	}
	if st.retired {
		return false, st.drops // nobody can resume it any more
	}
	lost, n := st.ring.push(ev)
	st.account(int64(len(ev)) - n)
	if lost {
		undelivered()
	}
	for st.ring.n > 1 && (st.ring.bytes > o.MaxStreamBytes ||
		st.sess.replayBytes.Load() > o.MaxSessionReplayBytes || h.replayBytes.Load() > o.MaxReplayBytes) {
		st.account(-st.ring.dropOldest())
		undelivered()
	}
	return dropped, st.drops
}

// account adds n bytes to the session's and the handler's replay totals.
func (st *stream) account(n int64) {
	if n != 0 {
		st.sess.replayBytes.Add(n)
		st.sess.h.replayBytes.Add(n)
	}
}

// retire makes the stream unresumable: its events are released now, or
// when the connection still writing them detaches.
func (st *stream) retire() {
	st.mu.Lock()
	defer st.mu.Unlock()
	st.retired = true
	if st.conn == nil {
		st.account(-st.ring.clear())
	}
}

// attachLocked makes c the stream's connection, replacing (and waking, so that
// it ends) any other.
func (st *stream) attachLocked(c *liveConn) {
	if old := st.conn; old != nil && old != c {
		old.wake()
	}
	st.conn = c
	st.attached = true
}

// detach removes c from the stream if it is still attached. A close
// request c did not see concerned c only: the next connection is kept.
func (st *stream) detach(c *liveConn) {
	st.mu.Lock()
	if st.conn == c {
		st.conn = nil
		st.closeReq = false
		if st.retired {
			st.account(-st.ring.clear())
		}
	}
	st.mu.Unlock()
}

// closeConnection asks the attached connection to end with a retry field,
// leaving the stream going. Before any connection was attached, the request
// waits for the first one.
func (st *stream) closeConnection() {
	st.mu.Lock()
	c := st.conn
	if c != nil || !st.attached {
		st.closeReq = true
	}
	st.mu.Unlock()
	if c != nil {
		c.wake()
	}
}

// end stops the stream for good: its connection ends and appends fail.
func (st *stream) end() {
	st.mu.Lock()
	st.ended = true
	c := st.conn
	st.mu.Unlock()
	if c != nil {
		c.wake()
	}
	st.retire()
}

// liveConn is an HTTP response currently carrying a stream. The goroutine
// serving the response (see pump) waits on it; whoever changes the stream
// in a way the connection must see wakes it.
type liveConn struct {
	ch chan struct{} // capacity 1: wakes coalesce
}

func newLiveConn() *liveConn { return &liveConn{ch: make(chan struct{}, 1)} }

func (c *liveConn) wake() {
	select {
	case c.ch <- struct{}{}:
	default:
	}
}
