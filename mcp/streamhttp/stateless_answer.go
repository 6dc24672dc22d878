package streamhttp

import (
	"context"
	"errors"
	"net/http"
	"sync"
	"time"

	"github.com/tasksim/tasksim/clock"
	"github.com/tasksim/tasksim/mcp"
	"github.com/tasksim/tasksim/mcp/sse"
)

// statelessReplier is the mcp.Replier of one stateless request. Replies
// queue, encoded, until the POST handler's goroutine writes them; nothing
// is kept once written, since a stateless stream cannot be resumed. The
// queue is bounded by maxBytes: a client that reads slower than the
// endpoint replies loses the request, as a broken stream does (2026-07-28
// changelog: "A broken response stream loses the in-flight request").
//
// Locking: mu guards the fields below it; Reply never waits for the
// network.
type statelessReplier struct {
	wake     chan struct{} // gets a value when something is queued; capacity 1
	maxBytes int64

	mu       sync.Mutex
	queue    [][]byte // encoded messages not yet taken
	bytes    int64    // in queue
	final    bool     // the final Reply was accepted
	code     int      // the final message's error code; 0: a result, or none
	noFinal  bool     // the final Reply carried no message (cancelled)
	overflow bool     // the queue outgrew maxBytes
}

func newStatelessReplier(maxBytes int64) *statelessReplier {
	return &statelessReplier{wake: make(chan struct{}, 1), maxBytes: maxBytes}
}

// Reply implements mcp.Replier. It fails after the final reply
// (mcp.ErrReplied). Once the request is gone (its POST handler returned)
// nothing takes the queue: replies still queue, within maxBytes, and are
// dropped with the replier when the endpoint lets go of it; the endpoint
// stops on the request's context and sends no final message (2026-07-28
// Streamable HTTP, "Cancellation").
func (p *statelessReplier) Reply(_ context.Context, msg *mcp.Message, final bool) error {
	data, err := encodeReply(msg, final)
	if err != nil {
		return err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.final {
		return mcp.ErrReplied
	}
	if final {
		p.final = true
		switch {
		case msg == nil:
			p.noFinal = true
		case msg.Error != nil:
			p.code = msg.Error.Code
		}
	}
	if data != nil {
		if p.bytes+int64(len(data)) > p.maxBytes && !final {
			p.overflow = true
		} else {
			p.queue = append(p.queue, data)
			p.bytes += int64(len(data))
		}
	}
	select {
	case p.wake <- struct{}{}:
	default:
	}
	return nil
}

// statelessBatch is what the POST handler takes from the queue at once.
type statelessBatch struct {
	msgs     [][]byte
	final    bool
	code     int
	noFinal  bool
	overflow bool
}

func (p *statelessReplier) take() statelessBatch {
	p.mu.Lock()
	defer p.mu.Unlock()
	b := statelessBatch{msgs: p.queue, final: p.final, code: p.code, noFinal: p.noFinal, overflow: p.overflow}
	p.queue, p.bytes = nil, 0
	return b
}

// answerStateless waits for the first reply to a stateless request and
// serves the answer in the shape it calls for (2026-07-28 Streamable HTTP,
// "Sending Messages": application/json or text/event-stream, the client
// supports both):
//
//	first reply final         → application/json, status by error code
//	                            (statelessStatus)
//	first reply final, nil    → 202, no body (the request was cancelled)
//	anything else             → 200 text/event-stream: each message an
//	                            event without an id, no priming event,
//	                            comment keep-alives; ends after the final
//	                            message
//
// It returns when the answer is written, the client goes away or ctx (the
// request's) ends; the caller then cancels the request. It reports false
// when ctx ended before anything was written: the caller may still answer.
func (h *Handler) answerStateless(ctx context.Context, w http.ResponseWriter, p *statelessReplier) bool {
	select {
	case <-p.wake:
	case <-ctx.Done():
	}
	b := p.take()
	if len(b.msgs) == 0 && ctx.Err() != nil {
		return false
	}
	if b.final && len(b.msgs) <= 1 {
		if b.noFinal || len(b.msgs) == 0 {
			w.WriteHeader(http.StatusAccepted)
			return true
		}
		w.Header()["Content-Type"] = valueJSON
		w.WriteHeader(statelessStatus(b.code))
		_, _ = w.Write(b.msgs[0])
		return true
	}
	h.streamStateless(ctx, w, p, b)
	return true
}

// streamStateless serves the answer as an SSE stream, starting with b.
func (h *Handler) streamStateless(ctx context.Context, w http.ResponseWriter, p *statelessReplier, b statelessBatch) {
	hdr := w.Header()
	hdr["Content-Type"] = valueEventStream
	hdr["Cache-Control"] = valueNoCache
	hdr["X-Accel-Buffering"] = valueNoBuffering // 2026-07-28 Streamable HTTP, "Receiving Messages"
	w.WriteHeader(http.StatusOK)
	rc := http.NewResponseController(w)
	defer rc.SetWriteDeadline(time.Time{}) // the connection may serve another request
	var keepAlive <-chan time.Time
	var ka *clock.ChanTimer
	if d := h.opts.KeepAlive; d > 0 {
		ka = clock.NewTimer(h.clock, d)
		defer ka.Stop()
		keepAlive = ka.C()
	}
	var head []byte
	for {
		if b.overflow {
			h.log.Warn("streamhttp: a stateless answer outgrew its buffer; ending the request", "bytes", h.opts.MaxStreamBytes)
			return
		}
		if !writeStateless(w, rc, head, b.msgs) {
			return
		}
		head = nil
		if b.final {
			return
		}
		if ka != nil {
			ka.Reset(h.opts.KeepAlive)
		}
		select {
		case <-p.wake:
			b = p.take()
		case <-keepAlive:
			head, b = pingComment, statelessBatch{}
		case <-ctx.Done():
			if h.ctx.Err() != nil {
				// The handler closed while the client still reads: what
				// the endpoint queued before is written, so that an
				// answer it gave on its way down (a subscriptions/listen
				// ended gracefully, Server.EndListens) reaches the client
				// rather than a cut stream.
				if b = p.take(); len(b.msgs) > 0 && !b.overflow {
					writeStateless(w, rc, nil, b.msgs)
				}
			}
			return
		}
	}
}

// writeStateless writes head and each message as an SSE event, and
// flushes; it reports false when writing failed.
func writeStateless(w http.ResponseWriter, rc *http.ResponseController, head []byte, msgs [][]byte) bool {
	_ = rc.SetWriteDeadline(time.Now().Add(sseWriteTimeout)) // wall time: see sseWriteTimeout
	buf := head
	for _, m := range msgs {
		var err error
		if buf, err = sse.AppendEvent(buf, sse.Event{Data: string(m)}); err != nil {
			return false // unreachable: no id, no name
		}
	}
	if len(buf) > 0 {
		if _, err := w.Write(buf); err != nil {
			return false
		}
	}
	if err := rc.Flush(); err != nil && !errors.Is(err, http.ErrNotSupported) {
		return false
	}
	return true
}
