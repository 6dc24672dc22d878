package streamhttp

import (
	"errors"
	"io"
	"net/http"
	"os"
	"slices"
	"sync"
	"time"

	"github.com/tasksim/tasksim/mcp"
)

// servePOST takes one JSON-RPC message (2025-11-25 Transports, "Sending
// Messages to the Server"). The checks, in order:
//
//	Accept lists application/json and text/event-stream      else 406
//	Content-Type is application/json                          else 415
//	body within MaxBodyBytes                                  else 413
//	body is one JSON-RPC message (not a batch)                else 400 (-32700 / -32600)
//	MCP-Protocol-Version supported, unless initialize         else 400
//	MCP-Session-Id names a live session, unless initialize    else 400 / 404
//
// An initialize request without MCP-Session-Id creates a session; one with
// the header is handed to that session like any request (the endpoint
// decides what a second initialize means). Notifications and responses get
// 202. A request is handed to the session with a replier and the answer
// waits for its first reply (see answer).
//
// Once the body is read, a message of the stateless era (2026-07-28; see
// isStateless for the rule) leaves for serveStateless, and none of the
// rest applies to it.
func (h *Handler) servePOST(w http.ResponseWriter, r *http.Request) {
	msg, ok := h.readMessage(w, r)
	if !ok {
		return
	}
	if stateless, q := h.isStateless(r, msg); stateless {
		h.serveStateless(w, r, msg, q)
		return
	}
	kind := msg.Kind()
	isInit := kind == mcp.KindRequest && msg.Method == mcp.MethodInitialize
	if !isInit && !h.checkProtocolVersion(w, r) {
		return
	}
	s, created, ok := h.postSession(w, r, msg, isInit)
	if !ok {
		return
	}
	release, ok := s.acquire()
	if !ok {
		h.busy(w, msg.ID, s.tooManyRequests())
		return
	}
	defer release()

	if kind != mcp.KindRequest {
		s.ms.Handle(s.ctx, msg, nil)
		w.Header()[headerSession] = s.idHeader
		w.WriteHeader(http.StatusAccepted)
		return
	}
	p := newReplier(s, created)
	s.ms.Handle(s.ctx, msg, p)
	h.answer(w, r, s, p, created)
}

// readMessage checks a POST's headers and reads its body, one JSON-RPC
// message. On failure it has answered (406, 415, 413, 408, 400) and ok is
// false.
func (h *Handler) readMessage(w http.ResponseWriter, r *http.Request) (msg *mcp.Message, ok bool) {
	if a := r.Header["Accept"]; !accepts(a, "application", "json") || !accepts(a, "text", "event-stream") {
		h.fail(w, http.StatusNotAcceptable, codeTransport, mcp.ID{},
			"Not Acceptable: the Accept header must list both application/json and text/event-stream")
		return nil, false
	}
	if !isJSONContentType(r.Header.Get("Content-Type")) {
		h.fail(w, http.StatusUnsupportedMediaType, codeTransport, mcp.ID{},
			"Unsupported Media Type: Content-Type must be application/json")
		return nil, false
	}
	bp, status := h.readBody(w, r)
	switch status {
	case http.StatusRequestTimeout:
		w.Header()["Connection"] = []string{"close"}
		h.fail(w, status, codeTransport, mcp.ID{}, "Request Timeout: the body did not arrive in time")
		return nil, false
	case http.StatusRequestEntityTooLarge:
		h.fail(w, status, codeTransport, mcp.ID{}, "Request Entity Too Large: the body exceeds the server's limit")
		return nil, false
	case http.StatusBadRequest:
		h.fail(w, status, codeTransport, mcp.ID{}, "Bad Request: could not read the body")
		return nil, false
	}
	msg, err := mcp.DecodeMessage(*bp)
	putBody(bp)
	if err != nil {
		var rpcErr *mcp.Error
		if !errors.As(err, &rpcErr) {
			rpcErr = &mcp.Error{Code: mcp.CodeInvalidRequest, Message: err.Error()}
		}
		var id mcp.ID
		if msg != nil {
			id = msg.ID
		}
		h.fail(w, http.StatusBadRequest, rpcErr.Code, id, rpcErr.Message)
		return nil, false
	}
	return msg, true
}

// postSession finds the session a POSTed message goes to, or, for an
// initialize without MCP-Session-Id, makes one (created, not registered
// yet). On failure it has answered and ok is false.
func (h *Handler) postSession(w http.ResponseWriter, r *http.Request, msg *mcp.Message, isInit bool) (s *session, created, ok bool) {
	if ids := r.Header[headerSession]; !isInit || len(ids) > 0 && ids[0] != "" {
		s = h.sessionOf(w, r)
		return s, false, s != nil
	}
	h.mu.RLock()
	closed := h.closed
	h.mu.RUnlock()
	if closed {
		h.fail(w, http.StatusServiceUnavailable, codeTransport, msg.ID, "Service Unavailable: the server is shutting down")
		return nil, false, false
	}
	s, err := h.newSession()
	if err != nil {
		h.log.Error("streamhttp: new session", "err", err)
		h.fail(w, http.StatusInternalServerError, codeTransport, msg.ID, "Internal Server Error: could not make a session id")
		return nil, false, false
	}
	return s, true, true
}

// answer waits for the first reply to a request and serves the answer in
// the shape it calls for:
//
//	first reply final        → 200 application/json, that message
//	first reply final, nil   → 202, no body (the request was cancelled)
//	anything else            → 200 text/event-stream: priming event, each
//	                           message as an event, end after the final one
//
// The initialize that created s registers it only now, and only if it
// succeeded: a JSON-RPC error discards the session. A client that leaves
// before the first reply leaves the request running; its replies are then
// dropped, since the client never got an event id to resume from.
func (h *Handler) answer(w http.ResponseWriter, r *http.Request, s *session, p *replier, created bool) {
	select {
	case <-p.ready:
	default:
		select {
		case <-p.ready:
		case <-r.Context().Done():
		case <-s.ctx.Done():
		}
	}
	p.mu.Lock()
	state := p.state
	if state == replyPending {
		p.state, p.httpGone = replyOrphan, true
	}
	body, isError, st := p.body, p.isError, p.st
	p.mu.Unlock()

	switch state {
	case replyPending: // the client left, or the session ended
		if created {
			s.close()
		}
		if r.Context().Err() == nil {
			if created {
				h.fail(w, http.StatusServiceUnavailable, codeTransport, mcp.ID{}, "Service Unavailable: the server is shutting down")
			} else {
				h.fail(w, http.StatusNotFound, codeTransport, mcp.ID{}, "Not Found: the session ended")
			}
		}
	case replyNone:
		if created {
			s.close()
		} else {
			w.Header()[headerSession] = s.idHeader
		}
		w.WriteHeader(http.StatusAccepted)
	case replyJSON:
		h.answerJSON(w, s, body, isError, created)
	case replyStream:
		h.answerStream(w, r, s, p, st, created)
	}
}

// answerJSON serves an answer whose first reply was final: body, one
// JSON message. An initialize that created s registers it, unless it
// failed (isError).
func (h *Handler) answerJSON(w http.ResponseWriter, s *session, body []byte, isError, created bool) {
	hdr := w.Header()
	switch {
	case !created:
		hdr[headerSession] = s.idHeader
	case isError:
		s.close()
	default:
		if ok, why := h.register(s); !ok {
			s.close()
			h.busy(w, mcp.ID{}, why)
			return
		}
		hdr[headerSession] = s.idHeader
	}
	hdr["Content-Type"] = valueJSON
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(body)
}

// answerStream serves an answer as the SSE stream st, until its final
// event or the connection's end. An initialize that created s registers
// it first, and ends it if it failed.
func (h *Handler) answerStream(w http.ResponseWriter, r *http.Request, s *session, p *replier, st *stream, created bool) {
	if created {
		if ok, why := h.register(s); !ok {
			s.close()
			h.busy(w, mcp.ID{}, why)
			return
		}
	}
	c := newLiveConn()
	st.mu.Lock()
	st.attachLocked(c)
	st.mu.Unlock()
	h.sseHeaders(w, s)
	h.pump(w, r, st, c, 1, h.primingEvent(primingID(st.num, 0, 0)))
	p.mu.Lock()
	p.httpGone = true
	discard := created && p.final && p.isError
	p.mu.Unlock()
	if discard {
		h.endSession(s)
	}
}

// Body buffers are pooled; DecodeMessage copies what it keeps.
var bodyPool = sync.Pool{New: func() any { b := make([]byte, 0, 2048); return &b }}

// keepBodyBuf is the largest body buffer returned to the pool.
const keepBodyBuf = 64 << 10

func putBody(bp *[]byte) {
	if cap(*bp) <= keepBodyBuf {
		*bp = (*bp)[:0]
		bodyPool.Put(bp)
	}
}

// readBody reads the request body into a pooled buffer, within
// BodyReadTimeout. A non-zero status is the failure: 413 beyond
// MaxBodyBytes, 408 past the timeout, 400 when reading failed.
func (h *Handler) readBody(w http.ResponseWriter, r *http.Request) (bp *[]byte, status int) {
	limit := h.opts.MaxBodyBytes
	if r.ContentLength > limit {
		return nil, http.StatusRequestEntityTooLarge
	}
	if d := h.opts.BodyReadTimeout; d > 0 {
		// Wall time: a socket deadline (see BodyReadTimeout). Lifted once
		// the body is in, so that the connection can serve on; left past
		// after a failure, so that net/http does not wait to drain the
		// rest of the body but closes the connection.
		rc := http.NewResponseController(w)
		if rc.SetReadDeadline(time.Now().Add(d)) == nil {
			defer func() {
				if status == 0 {
					_ = rc.SetReadDeadline(time.Time{})
				}
			}()
		}
	}
	bp = bodyPool.Get().(*[]byte)
	b := (*bp)[:0]
	if r.ContentLength > 0 {
		b = slices.Grow(b, int(r.ContentLength)+1) // +1: room to read EOF
	}
	for {
		if len(b) == cap(b) {
			b = slices.Grow(b, max(512, cap(b)))
		}
		n, err := r.Body.Read(b[len(b):cap(b)])
		b = b[:len(b)+n]
		*bp = b
		if int64(len(b)) > limit {
			putBody(bp)
			return nil, http.StatusRequestEntityTooLarge
		}
		if err == io.EOF {
			return bp, 0
		}
		if err != nil {
			putBody(bp)
			if errors.Is(err, os.ErrDeadlineExceeded) {
				return nil, http.StatusRequestTimeout
			}
			return nil, http.StatusBadRequest
		}
	}
}
