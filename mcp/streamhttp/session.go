package streamhttp

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tasksim/tasksim/internal/ratelimit"
	"github.com/tasksim/tasksim/mcp"
)

// ErrSessionClosed is returned by Outbox.Send and Replier.Reply once the
// session has ended (DELETE, Handler.Close, or a failed initialize).
var ErrSessionClosed = errors.New("streamhttp: session closed")

// Retention of finished POST streams, per session. A finished stream is
// kept so that a client whose connection broke can still resume it and get
// the response. Streams whose every event was written to a connection are
// very likely received and are kept only a little while; the others are
// kept up to maxFinishedStreams, oldest evicted first. Resuming an evicted
// stream gets 409.
const (
	maxFinishedStreams   = 64
	keepDeliveredStreams = 8
)

// session is one MCP-Session-Id: the endpoint's mcp.Session, the session's
// standalone stream and the POST streams kept for resumption. It is the
// mcp.Outbox given to the endpoint.
//
// Locking: mu guards the fields below it and the finished/deliveredAll
// fields of its streams. It is never held across network I/O or a call into
// the endpoint. Lock order: replier.mu, then session.mu, then stream.mu.
type session struct {
	h          *Handler
	id         string
	idHeader   []string // id as a header value, shared by every response
	ms         mcp.Session
	ctx        context.Context // the session's lifetime, passed to Handle
	cancel     context.CancelFunc
	standalone *stream // stream 0, fed by Send
	// inUse counts the session's HTTP requests being served (an open SSE
	// connection included); lastUsed is when one last began or ended, in
	// Unix nanoseconds on the handler's clock. Together they say whether
	// the session is idle.
	inUse    atomic.Int64
	lastUsed atomic.Int64
	// replayBytes is what the session's streams hold in their replay
	// buffers (Options.MaxSessionReplayBytes).
	replayBytes atomic.Int64

	mu         sync.Mutex
	closed     bool
	streams    map[uint64]*stream // every stream that can be resumed, 0 included
	nextStream uint64             // number of the next POST stream
	finished   []*stream          // finished POST streams still kept, oldest first
	// resumes is the bucket of MaxResumesPerMinute.
	resumes ratelimit.Bucket
}

// newSession makes a session with a fresh id and asks the endpoint for its
// mcp.Session. It is not registered with the handler yet. It fails only
// when Options.Rand does.
func (h *Handler) newSession() (*session, error) {
	id, err := h.newSessionID()
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(h.ctx)
	s := &session{
		h:          h,
		id:         id,
		idHeader:   []string{id},
		ctx:        ctx,
		cancel:     cancel,
		streams:    make(map[uint64]*stream, 4),
		nextStream: 1,
		resumes:    ratelimit.Bucket{Max: h.opts.MaxResumesPerMinute, Per: time.Minute},
	}
	s.lastUsed.Store(h.clock.Now().UnixNano())
	s.standalone = newStream(s, 0, h.opts.EventStoreEvents)
	s.streams[0] = s.standalone
	s.ms = h.ep.NewSession(s)
	return s, nil
}

// sessionIDAlphabet is crypto/rand.Text's: base32 (RFC 4648), all visible
// ASCII.
const sessionIDAlphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"

// sessionIDLen is the length of a session id: 26 base32 characters carry
// 130 random bits (2025-11-25 Transports, "Session Management": globally
// unique, cryptographically secure, visible ASCII only).
const sessionIDLen = 26

// newSessionID draws a session id: crypto/rand.Text by default, else the
// same shape from Options.Rand.
func (h *Handler) newSessionID() (string, error) {
	if h.opts.Rand == nil {
		return rand.Text(), nil
	}
	var b [sessionIDLen]byte
	h.randMu.Lock()
	_, err := io.ReadFull(h.opts.Rand, b[:])
	h.randMu.Unlock()
	if err != nil {
		return "", fmt.Errorf("streamhttp: draw a session id: %w", err)
	}
	for i := range b {
		b[i] = sessionIDAlphabet[b[i]%32] // 256 is a multiple of 32: uniform
	}
	return string(b[:]), nil
}

// Send implements mcp.Outbox: msg goes to the standalone stream's event
// store, and to the connected GET, if any, without waiting for it. While no
// GET is connected messages queue in the store (EventStoreEvents of them,
// within the byte budgets; beyond that the oldest are dropped, with a log
// line).
func (s *session) Send(_ context.Context, msg *mcp.Message) error {
	if msg == nil {
		return errNilMessage
	}
	data, err := msg.MarshalJSON()
	if err != nil {
		return fmt.Errorf("streamhttp: encode message: %w", err)
	}
	return s.standalone.appendMessage(data, false)
}

// openStream starts a new POST stream.
func (s *session) openStream() (*stream, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, ErrSessionClosed
	}
	st := newStream(s, s.nextStream, s.h.opts.EventStoreEvents)
	s.streams[st.num] = st
	s.nextStream++
	return st, nil
}

// lookupStream finds stream num; issued reports whether such a stream
// was ever started, so that a missing one can be told from an evicted one.
func (s *session) lookupStream(num uint64) (st *stream, issued bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.streams[num], num < s.nextStream
}

// streamFinished records that st's final message is in its store.
func (s *session) streamFinished(st *stream) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed || st.finished {
		return
	}
	st.finished = true
	st.finishedAt = s.h.clock.Now()
	s.finished = append(s.finished, st)
	s.trimLocked()
}

// retireFinished releases the finished streams that finished before
// cutoff: they can no longer be resumed (Options.StreamRetention), and a
// GET that names them gets 409.
func (s *session) retireFinished(cutoff time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for n < len(s.finished) && s.finished[n].finishedAt.Before(cutoff) {
		st := s.finished[n]
		delete(s.streams, st.num)
		st.retire()
		s.finished[n] = nil
		n++
	}
	s.finished = s.finished[n:]
}

// streamDelivered records that every event of st, its final one included,
// was written to a connection.
func (s *session) streamDelivered(st *stream) {
	s.mu.Lock()
	defer s.mu.Unlock()
	st.deliveredAll = true
	if st.finished {
		s.trimLocked()
	}
}

// trimLocked evicts finished streams beyond the retention limits.
func (s *session) trimLocked() {
	kept := s.finished[:0]
	delivered := 0
	for i := len(s.finished) - 1; i >= 0; i-- {
		if st := s.finished[i]; st.deliveredAll {
			if delivered++; delivered > keepDeliveredStreams {
				delete(s.streams, st.num)
				st.retire()
				s.finished[i] = nil
			}
		}
	}
	for _, st := range s.finished {
		if st != nil {
			kept = append(kept, st)
		}
	}
	clear(s.finished[len(kept):])
	s.finished = kept
	for len(s.finished) > maxFinishedStreams {
		st := s.finished[0]
		delete(s.streams, st.num)
		st.retire()
		s.finished[0] = nil
		s.finished = s.finished[1:]
		s.h.log.Warn("streamhttp: evicted a finished stream never fully delivered",
			"session", s.id, "stream", st.num)
	}
}

// close ends the session: its context is cancelled, its streams end (and
// with them their connections) and the endpoint's Session is closed. It is
// idempotent. It does not remove the session from the handler; see
// Handler.endSession.
func (s *session) close() {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return
	}
	s.closed = true
	streams := make([]*stream, 0, len(s.streams))
	for _, st := range s.streams {
		streams = append(streams, st)
	}
	s.mu.Unlock()
	s.cancel()
	for _, st := range streams {
		st.end()
	}
	s.ms.Close()
}

var errNilMessage = errors.New("streamhttp: nil message")

// acquire marks the session in use for one HTTP request, within
// MaxSessionRequests; the returned function ends that. It fails, holding
// nothing, when that many requests of the session are being served.
func (s *session) acquire() (release func(), ok bool) {
	if max := s.h.opts.MaxSessionRequests; max > 0 && s.inUse.Add(1) > int64(max) {
		s.inUse.Add(-1)
		return nil, false
	} else if max <= 0 {
		s.inUse.Add(1)
	}
	s.lastUsed.Store(s.h.clock.Now().UnixNano())
	return func() {
		s.lastUsed.Store(s.h.clock.Now().UnixNano())
		s.inUse.Add(-1)
	}, true
}

func (s *session) tooManyRequests() string {
	return fmt.Sprintf("Service Unavailable: this session has %d requests open, its limit", s.h.opts.MaxSessionRequests)
}

// takeResume takes one resume from the session's bucket, which holds up
// to MaxResumesPerMinute and refills at that rate on the handler's clock.
func (s *session) takeResume() bool {
	if s.h.opts.MaxResumesPerMinute <= 0 {
		return true
	}
	now := s.h.clock.Now()
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.resumes.Take(now)
}

// idleSince reports whether no request of the session has been served
// since t, and none is being served now.
func (s *session) idleSince(t time.Time) bool {
	return s.inUse.Load() == 0 && s.lastUsed.Load() < t.UnixNano()
}
