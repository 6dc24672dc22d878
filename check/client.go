package check

import (
	"encoding/json"
	"strconv"
	"strings"

	"github.com/tasksim/tasksim/traces"
)

// clientMessage handles a message from the client: requests are
// remembered with what the client knew when it sent them.
func (c *Checker) clientMessage(ex *exchange, rec traces.Record, w *wireMsg) {
	s := ex.sess
	id := ""
	if len(w.ID) > 0 {
		id = canonical(w.ID)
	}
	switch {
	case w.Method != "" && id != "":
		ex.requests++
		if ex.rpcID == "" {
			ex.rpcID, ex.rpcMethod = id, w.Method
		}
	default:
		ex.notes++
		return
	}
	p := decodeParams(w.Params)
	r := &request{id: id, method: w.Method, rec: rec.Index, at: rec.Offset, ex: ex, taskID: p.TaskID}
	s.requests[id] = r
	switch w.Method {
	case "initialize":
		s.sawInit = true
		if cp := p.Capabilities; cp != nil && cp.Tasks != nil {
			if cp.Tasks.Streaming != nil && len(cp.Tasks.Streaming.Partial) > 0 && string(cp.Tasks.Streaming.Partial) != "null" {
				s.clientPartial = true
			}
			if cp.Tasks.Responses != nil {
				s.clientModes = cp.Tasks.Responses.Modes
			}
		}
	case "tools/call":
		if p.Task != nil {
			r.taskAug = true
			r.modes = p.Task.ResponseModes
		}
	case "tasks/get", "tasks/result", "tasks/cancel":
		c.taskRequest(s, r, p, rec)
	}
}

// taskRequest remembers what the client knew of the task it names.
func (c *Checker) taskRequest(s *session, r *request, p *wireParams, rec traces.Record) {
	if r.method == "tasks/result" && len(p.LastSeqNr) > 0 {
		r.hasLastSeqNr = true
		r.lastSeqNrRaw = string(p.LastSeqNr)
		n, err := strconv.ParseInt(r.lastSeqNrRaw, 10, 64)
		r.lastSeqNr, r.lastSeqNrOK = n, err == nil && n > 0
	}
	t := c.tasks[r.taskID]
	if t == nil {
		return
	}
	r.knownBefore = true
	if t.sess != s {
		r.otherSession = t.sess
		return
	}
	r.task = t
	if isTerminal(t.status) {
		r.terminalBefore, r.terminalBeforeRec = t.status, t.statusRec
	}
	switch r.method {
	case "tasks/cancel":
		t.cancelled = true
	case "tasks/get":
		c.checkPollInterval(t, r, rec)
	case "tasks/result":
		c.checkResumeRequest(t, r, rec)
	}
}

// checkPollInterval: CLIENT-TASKS-GET-INTERVAL. A polling client SHOULD respect
// the pollInterval of the task it last received (2025-11-25 Tasks,
// Behavior Requirements › TTL and Resource Management). A poll sooner
// than 90% of the interval after the previous one fails.
func (c *Checker) checkPollInterval(t *task, r *request, rec traces.Record) {
	if t.hasGet && t.pollInterval > 0 && !isTerminal(t.status) {
		gap := r.at - t.lastGet
		c.judge(RuleClientTasksGetInterval, gap*10 >= t.pollInterval*9,
			"tasks/get of task "+t.id+" "+gap.String()+" after the previous one; the server asked for pollInterval "+t.pollInterval.String(),
			t.lastGetRec, rec.Index)
	}
	t.hasGet, t.lastGet, t.lastGetRec = true, r.at, rec.Index
}

// checkResumeRequest: CLIENT-RESUME through lastSeqNr. A client resuming
// with lastSeqNr = k claims segments 1..k: a k past what it received
// loses segments; after a connection loss it resumes "from the last
// received segment", and fills a gap with lastSeqNr below it (SEP-1905,
// Client Implementation Guide › Error Handling; Case 3 › Resuming
// Streaming: lastSeqNr is a positive integer). So a resume — a
// tasks/result with lastSeqNr of a task whose stream was cut and not yet
// resumed, sent before the client had the result's end — with a
// lastSeqNr that is no positive integer fails. Other invalid lastSeqNr
// (a client probing the server, S1905-LASTSEQNR-INVALID) resume nothing. A lastSeqNr below the highest seqNr recorded
// before a cut is not judged: a cut between the recorder and the client
// may have lost the last events the recorder saw.
func (c *Checker) checkResumeRequest(t *task, r *request, rec traces.Record) {
	if !r.hasLastSeqNr || len(t.received) == 0 {
		return
	}
	have := t.contiguous()
	cut := t.cutStream(rec.Index)
	if !r.lastSeqNrOK {
		if cut != nil && !t.isComplete && t.result == "" {
			c.fail(RuleClientResume, "tasks/result resumes task "+t.id+" after its stream was cut with lastSeqNr "+r.lastSeqNrRaw+"; a resume names the highest seqNr received (here "+strconv.FormatInt(have, 10)+"), a positive integer", cut.cutRec, rec.Index)
		}
		return
	}
	if r.lastSeqNr > have {
		c.fail(RuleClientResume, "tasks/result asks for segments after lastSeqNr "+strconv.FormatInt(r.lastSeqNr, 10)+" of task "+t.id+" but the client received only 1.."+strconv.FormatInt(have, 10)+": segments are lost", rec.Index)
		return
	}
	for _, st := range t.sess.cutStreams {
		if st.resumedBy == nil && slicesContainsTask(st.tasksCreated, t) {
			st.resumedBy = r
		}
	}
	c.ok(RuleClientResume)
}

// cutStream returns the stream that created t if it was cut before
// record rec and not resumed since, nil if not.
func (t *task) cutStream(rec uint64) *stream {
	for _, st := range t.sess.cutStreams {
		if st.cutRec < rec && st.resumedBy == nil && slicesContainsTask(st.tasksCreated, t) {
			return st
		}
	}
	return nil
}

func slicesContainsTask(ts []*task, t *task) bool {
	for _, x := range ts {
		if x == t {
			return true
		}
	}
	return false
}

// isFallbackTask reports whether a mode list lacks task mode.
func lacks(modes []string, m string) bool {
	for _, x := range modes {
		if strings.EqualFold(x, m) {
			return false
		}
	}
	return true
}

func jsonInt(raw json.RawMessage) (int64, bool) {
	n, err := strconv.ParseInt(string(raw), 10, 64)
	return n, err == nil
}
