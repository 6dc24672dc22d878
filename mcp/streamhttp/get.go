package streamhttp

import (
	"fmt"
	"net/http"
	"strings"

	"github.com/tasksim/tasksim/mcp"
)

// serveGET opens an SSE stream (2025-11-25 Transports, "Listening for
// Messages from the Server", "Resumability and Redelivery"). Accept must
// list text/event-stream (406), the protocol version be supported (400) and
// the session live (400 / 404).
//
// Without Last-Event-ID it attaches to the session's standalone stream: a
// priming event, then the Outbox messages no connection was given yet, then
// live ones. While another connection carries the standalone stream it
// answers 409 Conflict (see replaceStandaloneGET).
//
// With Last-Event-ID it resumes the stream the id names, and only that one:
// it replays the stored events after the id, then carries on live if the
// stream is still going, or ends once its final event is out. The new
// connection replaces any older one of that stream. Failures:
//
//	400  the id is malformed, or names a stream or event never sent
//	409  the events after the id are no longer stored (the stream was
//	     evicted or its buffer wrapped): resuming would silently lose them
//	404  the session ended
//
// 404 is kept for the session itself, since a client that gets it must
// start a new session ("Session Management").
func (h *Handler) serveGET(w http.ResponseWriter, r *http.Request) {
	if h.refuseStateless(w, r) {
		return
	}
	if !accepts(r.Header["Accept"], "text", "event-stream") {
		h.fail(w, http.StatusNotAcceptable, codeTransport, mcp.ID{},
			"Not Acceptable: the Accept header must list text/event-stream")
		return
	}
	if !h.checkProtocolVersion(w, r) {
		return
	}
	s := h.sessionOf(w, r)
	if s == nil {
		return
	}
	release, ok := s.acquire()
	if !ok {
		h.busy(w, mcp.ID{}, s.tooManyRequests())
		return
	}
	defer release()
	c := newLiveConn()
	var st *stream
	var cursor uint64
	var prelude []byte
	if ids := r.Header[headerLastEventID]; len(ids) > 0 && strings.TrimSpace(ids[0]) != "" {
		id := strings.TrimSpace(ids[0])
		if !s.takeResume() {
			h.busy(w, mcp.ID{}, fmt.Sprintf("Service Unavailable: more than %d resumed GETs a minute in this session, its limit", h.opts.MaxResumesPerMinute))
			return
		}
		num, ev, ok := parseEventID(id)
		if !ok {
			h.fail(w, http.StatusBadRequest, codeTransport, mcp.ID{}, "Bad Request: malformed Last-Event-ID "+quoteHeader(id))
			return
		}
		var issued bool
		st, issued = s.lookupStream(num)
		if st == nil {
			if issued {
				h.fail(w, http.StatusConflict, codeTransport, mcp.ID{}, "Conflict: the stream of Last-Event-ID "+quoteHeader(id)+" is no longer stored")
			} else {
				h.fail(w, http.StatusBadRequest, codeTransport, mcp.ID{}, "Bad Request: Last-Event-ID "+quoteHeader(id)+" names no stream of this session")
			}
			return
		}
		st.mu.Lock()
		status, why := 0, ""
		switch {
		case st.ended:
			status, why = http.StatusNotFound, "Not Found: the session ended"
		case ev >= st.ring.next():
			status, why = http.StatusBadRequest, "Bad Request: Last-Event-ID "+quoteHeader(id)+" was never sent"
		case ev+1 < st.ring.first:
			status, why = http.StatusConflict, "Conflict: the events after Last-Event-ID "+quoteHeader(id)+" are no longer stored"
		default:
			cursor = ev + 1
			st.attachLocked(c)
		}
		st.mu.Unlock()
		if status != 0 {
			h.fail(w, status, codeTransport, mcp.ID{}, why)
			return
		}
	} else {
		st = s.standalone
		st.mu.Lock()
		status, why := 0, ""
		switch {
		case st.ended:
			status, why = http.StatusNotFound, "Not Found: the session ended"
		case st.conn != nil && !replaceStandaloneGET:
			status, why = http.StatusConflict, "Conflict: the session's standalone stream is already connected"
		default:
			st.attachLocked(c)
			cursor = max(st.delivered, st.ring.first)
			st.primings++
			prelude = h.primingEvent(primingID(0, cursor-1, st.primings))
		}
		st.mu.Unlock()
		if status != 0 {
			h.fail(w, status, codeTransport, mcp.ID{}, why)
			return
		}
	}
	h.sseHeaders(w, s)
	h.pump(w, r, st, c, cursor, prelude)
}
