package check

import (
	"hash/maphash"
	"net"
	"slices"
	"strings"

	"github.com/tasksim/tasksim/traces"
)

// openGet links a GET with Last-Event-ID to the stream it resumes.
func (c *Checker) openGet(ex *exchange, rec traces.Record) {
	s := ex.sess
	s.gets++
	st := &stream{name: "get:" + itoa(ex.id), ex: ex, sess: s, kind: "GET"}
	ex.stream = st
	if !ex.hasLastEventID {
		return
	}
	prev := s.eventIDs[ex.lastEventID]
	if prev == nil {
		// CLIENT-RESUME: a client resumes from an event it received.
		c.fail(RuleClientResume, "GET with Last-Event-ID "+ex.lastEventID+", an id the client never received", rec.Index)
		return
	}
	st.resumes = prev
	root := prev.root()
	if i := slices.IndexFunc(root.events, func(e eventSeen) bool { return e.id == ex.lastEventID }); i >= 0 {
		st.due = slices.Clone(root.events[i+1:])
	}
	st.rpcID, st.method = root.rpcID, root.method
	s.resumes[root] = append(s.resumes[root], st)
	if root.cut || prev.cut {
		if root.resumedBy == nil {
			root.resumedBy = st
		}
		// CLIENT-RESUME: with the id of the last event it received.
		last := prev.lastEventID
		c.judge(RuleClientResume, ex.lastEventID == last || last == "", "GET resumed after event "+ex.lastEventID+" though the client received event "+last+" last", prev.lastEventRec, rec.Index)
		// CLIENT-POLL-INTERVAL: a reconnect waits the retry the server set.
		if prev.hasRetry && prev.cut {
			wait := rec.Offset - prev.cutAt
			c.judge(RuleClientPollInterval, wait*10 >= prev.retry*9, "the client reconnected "+wait.String()+" after the stream broke; the server set retry "+prev.retry.String(), prev.cutRec, rec.Index)
		}
	}
}

// eventID judges an SSE event id: HTTP-EVENT-ID-UNIQUE across the streams
// of a session, and HTTP-RESUME-SAME-STREAM for replays. It reports
// whether the event is a replay, on a resumption, of one seen before (on
// its own stream or, wrongly, on another).
func (c *Checker) eventID(st *stream, rec traces.Record) (replay bool) {
	s := st.sess
	id := rec.SSE.ID
	first := s.eventIDs[id]
	switch {
	case first == nil:
		s.eventIDs[id] = st
		if st.resumes != nil {
			c.ok(RuleHTTPResumeSameStream)
		}
		// An event without data (a priming event, Transports ›
		// Resumability) carries no message to lose.
		if strings.TrimSpace(rec.SSE.Data) != "" {
			// A new event after the due ones means the replay passed
			// them over, if it is surely of this stream: a response to
			// its request (a notification may be another stream's, which
			// is HTTP-RESUME-SAME-STREAM's to judge).
			if root := st.root(); st.resumes != nil && rec.RPC != nil && rec.RPC.Type == "response" && root.kind == "POST" && canonical([]byte(rec.RPC.ID)) == root.rpcID {
				c.replayed(st, len(st.due), rec)
			}
			root := st.root()
			root.events = append(root.events, eventSeen{id, rec.Index})
		}
		c.ok(RuleHTTPEventIDUnique)
	case first.root() == st.root():
		// The same id again within one stream and its resumptions: a
		// replay, or a duplicate a fault made.
		if first == st && !c.faulted(st, "") {
			c.fail(RuleHTTPEventIDUnique, "event id "+id+" twice on one stream", first.lastEventRec, rec.Index)
		} else {
			c.ok(RuleHTTPEventIDUnique)
			replay = first != st
			if replay {
				if j := slices.IndexFunc(st.due[min(st.next, len(st.due)):], func(e eventSeen) bool { return e.id == id }); j >= 0 {
					c.replayed(st, st.next+j, rec)
					c.ok(RuleHTTPResumeComplete)
					st.next++
				}
			}
		}
	case st.resumes != nil && s.idsCollide:
		// The session's ids are not unique (HTTP-EVENT-ID-UNIQUE said
		// so): an id cannot tell which stream an event came from, nor
		// whether it is replayed; the replay is not judged further.
		replay = true
	case st.resumes != nil:
		c.fail(RuleHTTPResumeSameStream, "a replay after Last-Event-ID "+st.ex.lastEventID+" carried event "+id+" of another stream", rec.Index)
		// Its message was judged when first sent: the fault is only
		// where it is replayed.
		replay = true
	default:
		s.idsCollide = true
		c.fail(RuleHTTPEventIDUnique, "event id "+id+" on two streams of session "+s.id, rec.Index)
	}
	st.lastEventID, st.lastEventRec = id, rec.Index
	return replay
}

// replayed judges HTTP-RESUME-COMPLETE (Transports › Streamable HTTP ›
// Resumability and Redelivery: the server "MAY use this header to replay
// messages that would have been sent after the last event ID, on the
// stream that was disconnected"; a resumption that replays must not lose
// any): resumption st carried, at rec, the event at position upTo of its
// due list (or, upTo = len(due), an event sent after every replay). The
// due events before it that it did not carry are lost. Only events the
// trace saw the server send count: a response that never existed is no
// loss here (S1905-COMPLETE judges a stream that never completes), nor is
// a repeated seqNr (S1905-SEQNR).
func (c *Checker) replayed(st *stream, upTo int, rec traces.Record) {
	if upTo <= st.next || st.next >= len(st.due) {
		return
	}
	c.lostEvents(st, st.due[st.next:min(upTo, len(st.due))], rec.Index)
	st.next = upTo
}

// lostEvents fails HTTP-RESUME-COMPLETE for events the resumption st did
// not replay.
func (c *Checker) lostEvents(st *stream, lost []eventSeen, at uint64) {
	ids := make([]string, len(lost))
	for i, e := range lost {
		ids[i] = e.id
	}
	recs := []uint64{lost[0].rec, st.ex.rec}
	if at != 0 {
		recs = append(recs, at)
	}
	c.fail(RuleHTTPResumeComplete, "the replay after Last-Event-ID "+st.ex.lastEventID+" lost event(s) "+strings.Join(ids, ", ")+" the stream carried after it", recs...)
}

// checkBroadcast: HTTP-NO-BROADCAST (Transports › Multiple Connections:
// the server "MUST send each of its JSON-RPC messages on only one of the
// connected streams; that is, it MUST NOT broadcast the same message
// across multiple streams"). Responses and every message about a task
// (notifications/tasks/*, any notification naming a task) are keyed by a
// hash of their text, white space between tokens left out, per session: a
// copy in another session is TASK-ISOLATION's (isolation.go). A message
// repeated on a stream and its resumptions is a replay, not a broadcast.
// Other notifications (a log line, list_changed) may honestly be sent
// twice with the same text, and are not keyed. It returns false for a
// message broadcast: it was judged on the stream that carried it first.
func (c *Checker) checkBroadcast(st *stream, rec traces.Record, w *wireMsg, raw []byte) bool {
	if !st.sess.http || st.kind == "STDIO" {
		return true
	}
	if !st.carries {
		// The session's streams that carried a message: once two do,
		// each first sending is an observation of the rule.
		st.carries = true
		st.sess.carriers++
	}
	switch {
	case w.Method == "" && len(w.ID) > 0 && string(w.ID) != "null":
		// An error answering no request (id null) is no message sent
		// twice.
	case strings.HasPrefix(w.Method, "notifications/tasks/"):
	case len(w.ID) == 0 && rec.RPC != nil && rec.RPC.TaskID != "":
	default:
		return true
	}
	key := msgKey{sess: st.sess.id, hash: c.fingerprint(raw)}
	prev, seen := c.messages[key]
	if !seen {
		c.messages[key] = seenMsg{stream: st, rec: rec.Index}
		if st.sess.carriers > 1 {
			c.ok(RuleHTTPNoBroadcast)
		}
		return true
	}
	if prev.stream.root() == st.root() || c.faulted(st, "") || c.faulted(prev.stream, "") {
		c.ok(RuleHTTPNoBroadcast)
		return true
	}
	st.sess.broadcast = true
	c.fail(RuleHTTPNoBroadcast, "the same message on "+prev.stream.name+" and "+st.name, prev.rec, rec.Index)
	return false
}

// fingerprint hashes JSON text without the white space between tokens, so
// that two encodings of one message that differ only in white space hash
// alike.
func (c *Checker) fingerprint(raw []byte) uint64 {
	var h maphash.Hash
	h.SetSeed(c.seed)
	inStr, esc := false, false
	start := 0
	for i, b := range raw {
		switch {
		case inStr:
			switch {
			case esc:
				esc = false
			case b == '\\':
				esc = true
			case b == '"':
				inStr = false
			}
		case b == '"':
			inStr = true
		case b == ' ' || b == '\t' || b == '\n' || b == '\r':
			h.Write(raw[start:i])
			start = i + 1
		}
	}
	h.Write(raw[start:])
	return h.Sum64()
}

// checkOrigin: HTTP-ORIGIN (Transports › Streamable HTTP › Security
// Warning: servers MUST validate the Origin header; an invalid Origin
// gets 403). An Origin naming neither the request's host nor a loopback
// host is foreign.
func (c *Checker) checkOrigin(ex *exchange, rec traces.Record) {
	if ex.origin == "" {
		return
	}
	oh := originHost(ex.origin)
	host := ex.host
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	if oh != "" && (strings.EqualFold(oh, host) || isLoopbackName(oh)) {
		return
	}
	c.judge(RuleHTTPOrigin, ex.status == 403, "a request with Origin "+ex.origin+" was answered "+itoa(uint64(ex.status))+", want 403", ex.rec, rec.Index)
}

func isLoopbackName(h string) bool {
	if strings.EqualFold(h, "localhost") {
		return true
	}
	ip := net.ParseIP(h)
	return ip != nil && ip.IsLoopback()
}

// checkSessionStatus: HTTP-SESSION, the MUSTs of Transports › Streamable
// HTTP › Session Management (404 after termination) and Sending Messages
// to the Server (202), and HTTP-SESSION-MISSING, its SHOULD ("Servers
// that require a session ID SHOULD respond to requests without an
// MCP-Session-Id header (other than initialization) with HTTP 400").
func (c *Checker) checkSessionStatus(ex *exchange, rec traces.Record) {
	s := ex.sess
	switch {
	case ex.method == "POST" && ex.requests == 0 && ex.notes > 0 && ex.status < 400 && s.assigned:
		c.judge(RuleHTTPSession, ex.status == 202, "a POST of notifications or responses only was answered "+itoa(uint64(ex.status))+", want 202", ex.rec, rec.Index)
	case ex.sessionID == "" && ex.method == "POST" && ex.rpcMethod != "" && ex.rpcMethod != "initialize" && c.anyAssigned():
		c.judge(RuleHTTPSessionMissing, ex.status == 400, "a "+ex.rpcMethod+" without Mcp-Session-Id was answered "+itoa(uint64(ex.status))+", want 400", ex.rec, rec.Index)
	case s.deleted && ex.sessionID != "" && ex.method != "DELETE" && ex.rec > s.deletedRec:
		// Only a request sent after the DELETE was answered: one in
		// flight with it may be served before the session ends.
		c.judge(RuleHTTPSession, ex.status == 404, "a request of terminated session "+s.id+" was answered "+itoa(uint64(ex.status))+", want 404", s.deletedRec, ex.rec, rec.Index)
	case ex.method == "DELETE" && ex.status >= 200 && ex.status < 300:
		s.deleted, s.deletedRec = true, rec.Index
	}
}

func (c *Checker) anyAssigned() bool {
	for _, s := range c.sessions {
		if s.assigned {
			return true
		}
	}
	return false
}

func itoa(n uint64) string {
	if n == 0 {
		return "0"
	}
	var b [20]byte
	i := len(b)
	for n > 0 {
		i--
		b[i] = byte('0' + n%10)
		n /= 10
	}
	return string(b[i:])
}
