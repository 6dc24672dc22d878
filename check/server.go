package check

import (
	"encoding/json"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/tasksim/tasksim/traces"
)

// serverMessage handles a message from the server on stream st.
func (c *Checker) serverMessage(ex *exchange, st *stream, rec traces.Record, w *wireMsg, raw []byte) {
	s := ex.sess
	if !c.checkBroadcast(st, rec, w, raw) {
		return // judged where it came first
	}
	c.checkTaskMessage(s, rec, w)
	if w.Method != "" {
		if len(w.ID) == 0 {
			c.notification(s, st, rec, w)
		}
		return
	}
	id := canonical(w.ID)
	r := s.requests[id]
	if r == nil {
		return
	}
	c.responseStream(st, id, rec)
	if w.Error != nil {
		c.errorAnswer(s, r, rec, w.Error)
		r.answered = true
		c.finalOn(st, r)
		return
	}
	res := decodeResult(w.Result)
	if res == nil {
		r.answered = true
		c.finalOn(st, r)
		return
	}
	c.resultAnswer(s, st, r, rec, res)
	if res.IsComplete == nil || *res.IsComplete || !res.HasPartial {
		r.answered = true
		c.finalOn(st, r)
	}
}

// responseStream judges HTTP-RESUME-SAME-STREAM for the response to
// request id on stream st.
func (c *Checker) responseStream(st *stream, id string, rec traces.Record) {
	if st.kind == "GET" && st.resumes == nil {
		// A response on the standalone stream: only a resumption may
		// carry one (Transports › Listening for Messages from the Server).
		c.fail(RuleHTTPResumeSameStream, "the response to request "+id+" came on the standalone GET stream, which carries no responses", rec.Index)
	}
	if root := st.root(); st.resumes != nil && root.kind == "POST" && root.rpcID != id {
		c.fail(RuleHTTPResumeSameStream, "a resumption of the stream answering request "+root.rpcID+" carried the response to request "+id, root.ex.rec, rec.Index)
	} else if st.resumes != nil {
		c.ok(RuleHTTPResumeSameStream)
	}
}

// resultAnswer judges a result answering request r, by its method.
func (c *Checker) resultAnswer(s *session, st *stream, r *request, rec traces.Record, res *wireResult) {
	switch r.method {
	case "initialize":
		initializeAnswer(s, res)
	case "tools/call":
		c.toolsCallAnswer(s, st, r, rec, res)
	case "tasks/get", "tasks/cancel":
		c.taskAnswer(s, st, r, rec, &res.wireTask, res)
	case "tasks/list":
		c.tasksListAnswer(s, st, rec, res)
	case "tasks/result":
		c.tasksResultAnswer(s, st, r, rec, res)
	}
}

// initializeAnswer keeps the task capabilities the server declared.
func initializeAnswer(s *session, res *wireResult) {
	caps := res.Capabilities
	if len(caps) == 0 {
		return
	}
	var sc wireCaps
	if json.Unmarshal(caps, &sc) == nil && sc.Tasks != nil {
		if sc.Tasks.Responses != nil {
			s.serverModes = sc.Tasks.Responses.Modes
		}
		s.serverPartial = sc.Tasks.Streaming != nil && len(sc.Tasks.Streaming.Partial) > 0
	}
}

// tasksListAnswer judges the tasks a tasks/list answer lists.
func (c *Checker) tasksListAnswer(s *session, st *stream, rec traces.Record, res *wireResult) {
	for i := range res.Tasks {
		c.checkTaskFields(&res.Tasks[i], rec)
		if t := c.tasks[res.Tasks[i].id()]; t != nil && t.sess != s {
			c.fail(RuleTaskIsolation, "tasks/list in session "+s.id+" listed task "+t.id+" of session "+t.sess.id, t.rec, rec.Index)
		} else if t != nil {
			c.ok(RuleTaskIsolation)
			c.sawStatus(t, st, res.Tasks[i].status(), rec)
		}
	}
}

// finalOn marks that stream st carried the final response of r.
func (c *Checker) finalOn(st *stream, r *request) {
	root := st.root()
	if root.kind == "POST" && root.rpcID == r.id {
		root.final = true
		st.final = true
		if st.resumes != nil && st.next >= len(st.due) {
			// The replay carried the response with nothing due lost.
			c.ok(RuleHTTPResumeComplete)
		}
	}
}

// errorAnswer judges the error answers rules expect.
func (c *Checker) errorAnswer(s *session, r *request, rec traces.Record, e *wireError) {
	code := strconv.Itoa(e.Code)
	switch r.method {
	case "tasks/get", "tasks/result", "tasks/cancel":
		if r.otherSession != nil {
			// -32601 says the server has no tasks/* at all: no evidence
			// that it keeps tasks apart.
			if e.Code != -32601 {
				c.ok(RuleTaskIsolation)
			}
			return
		}
		if !r.knownBefore && s.sawInit && r.taskID != "" {
			c.judge(RuleTaskNotFound, e.Code == -32602, r.method+" of unknown task "+r.taskID+" answered "+code+", want -32602", r.rec, rec.Index)
		}
		if r.method == "tasks/cancel" && r.terminalBefore != "" {
			c.judge(RuleTaskCancelTerminal, e.Code == -32602, "tasks/cancel of a task already "+r.terminalBefore+" answered "+code+", want -32602", r.terminalBeforeRec, r.rec, rec.Index)
		}
		if r.method == "tasks/result" && r.hasLastSeqNr && !r.lastSeqNrOK {
			c.judge(RuleS1905LastSeqNrInvalid, e.Code == -32602, "tasks/result with lastSeqNr "+r.lastSeqNrRaw+" answered "+code+", want -32602", r.rec, rec.Index)
		}
	}
}

// toolsCallAnswer judges an answer to tools/call: the mode it chose, the
// task it created, the segments it carries.
func (c *Checker) toolsCallAnswer(s *session, st *stream, r *request, rec traces.Record, res *wireResult) {
	mode := "plain"
	switch {
	case res.HasPartial || res.IsComplete != nil:
		mode = "streaming"
	case res.Task != nil && len(res.Content) == 0:
		mode = "task"
	case len(res.Content) > 0 && r.taskAug:
		mode = "immediate"
	}
	if r.mode == "" {
		r.mode = mode
		c.modeSelect(s, r, rec, mode, res)
	} else if r.mode == "task" && mode == "streaming" {
		// Initial response option 2 of Case 3: the task alone, the
		// segments in further responses to the same request.
		r.mode = "streaming"
		if r.modeDue != "" {
			r.modeDue = ""
			c.ok(RuleS1905ModeSelect)
		}
	}
	var t *task
	if res.Task != nil {
		c.checkTaskFields(res.Task, rec)
		t = c.observeTask(s, st, res.Task, rec, r)
	} else if r.task != nil {
		t = r.task
	} else if rt := res.relatedTask(); rt != "" {
		// An immediate answer names its task in the related-task meta
		// only, and so does a streaming answer that overtook the one
		// carrying the task: the id is given out all the same.
		t = c.task(s, rt, rec)
		if t.createdBy == nil {
			c.created(s, st, r, t, rec)
		}
	}
	if mode == "immediate" && res.Task != nil {
		c.judge(RuleS1905Immediate, res.Task.status() == "completed", "an immediate answer carries a task in status "+res.Task.status()+", want completed", rec.Index)
	}
	if mode == "immediate" && t != nil {
		t.result, t.resultRec = canonical(res.Content), rec.Index
	}
	if mode == "streaming" {
		c.segments(s, st, r, t, rec, res)
	}
}

// modeSelect judges S1905-MODE-SELECT on the first answer to a call that
// listed responseModes (SEP-1905, Capability Negotiation and Task Result
// Transmission): the mode is one the client listed and the server
// declares, picked by the priority immediate > streaming > task, or task
// as a fallback. Only what is definite fails:
//
//   - immediate listed by both: any of the three may be right. Immediate
//     is a MAY; without a ready result the server falls back to streaming
//     when it "can determine" the results come incrementally, otherwise to
//     task — a judgment the wire does not show;
//   - streaming listed by both and immediate not: streaming is the
//     negotiated mode, and task is wrong. But a streaming answer may begin
//     with the task alone (Initial Response Options, 2) and send its
//     segments in further responses to the same request, so a task answer
//     is judged at the end (finishModes);
//   - a mode the server did not declare, when it declared some, or one the
//     client did not list (other than task), is wrong at once.
func (c *Checker) modeSelect(s *session, r *request, rec traces.Record, mode string, res *wireResult) {
	if len(r.modes) == 0 || mode == "plain" {
		return
	}
	both := func(m string) bool { return !lacks(r.modes, m) && len(s.serverModes) > 0 && !lacks(s.serverModes, m) }
	listed := "the call listed responseModes " + strings.Join(r.modes, ",")
	switch {
	case mode != "task" && lacks(r.modes, mode):
		c.fail(RuleS1905ModeSelect, listed+" and was answered in "+mode+" mode", r.rec, rec.Index)
	case mode != "task" && len(s.serverModes) > 0 && lacks(s.serverModes, mode):
		c.fail(RuleS1905ModeSelect, listed+" and was answered in "+mode+" mode, which the server does not declare (tasks.responses.modes "+strings.Join(s.serverModes, ",")+")", r.rec, rec.Index)
	case mode == "task" && both("streaming") && !both("immediate"):
		r.modeDue, r.modeDueRec = "streaming", rec.Index
	case mode != "task" || !lacks(r.modes, "task"):
		c.ok(RuleS1905ModeSelect)
	case res.hasFallbackWarning():
		c.ok(RuleS1905ModeSelect)
		c.ok(RuleS1905FallbackWarning)
	case !lacks(r.modes, "immediate"):
		// Immediate negotiated but the result not ready: task is the
		// fallback of the decision process (Case 2), no warning needed.
		c.ok(RuleS1905ModeSelect)
	case len(s.serverModes) == 0:
		// A server without SEP-1905 defaults to task (Backward
		// Compatibility); it knows no warning to give.
		c.ok(RuleS1905ModeSelect)
	case !slices.ContainsFunc(r.modes, func(m string) bool { return slices.Contains(s.serverModes, m) }):
		// No common mode: the fallback the MUST asks for, without the
		// warning the SHOULD asks for.
		c.ok(RuleS1905ModeSelect)
		c.fail(RuleS1905FallbackWarning, listed+" and was answered in task mode without the fallback warning", r.rec, rec.Index)
	default:
		// Task though the server declared a mode the client listed.
		c.fail(RuleS1905ModeSelect, listed+" and was answered in task mode, though the server declares one of them", r.rec, rec.Index)
	}
}

// created records that call r, answered on stream st, created task t: a
// cut of that stream loses what the task had yet to send (CLIENT-RESUME).
func (c *Checker) created(s *session, st *stream, r *request, t *task, rec traces.Record) {
	c.taskCreated(t, s, rec)
	t.createdBy, r.task = r, t
	if st.root().kind == "POST" || st.kind == "STDIO" {
		st.root().tasksCreated = append(st.root().tasksCreated, t)
	}
}

// observeTask registers a task object from the server and judges its
// status transition.
func (c *Checker) observeTask(s *session, st *stream, wt *wireTask, rec traces.Record, r *request) *task {
	id := wt.id()
	if id == "" {
		return nil
	}
	t := c.task(s, id, rec)
	if t.createdBy == nil && r != nil && r.method == "tools/call" {
		c.created(s, st, r, t, rec)
		// Tasks MUST begin in the working status (Behavior Requirements ›
		// Task Status Lifecycle): a CreateTaskResult in task mode shows
		// the task as created.
		if r.mode == "task" {
			c.judge(RuleTaskStatusTransition, wt.status() == "working", "task "+id+" was created in status "+wt.status()+", want working", rec.Index)
		}
	}
	if wt.PollInterval != nil && *wt.PollInterval > 0 {
		t.pollInterval = msDuration(*wt.PollInterval)
	}
	c.transition(t, st, wt.status(), rec, r)
	return t
}

// transition judges a status the server reported for t. Across streams
// the trace does not show the server's order, so a regression is judged
// only where the order is certain: on one stream, or in the answer to a
// request the client sent after it had seen the terminal status.
func (c *Checker) transition(t *task, st *stream, status string, rec traces.Record, r *request) {
	if status == "" {
		return
	}
	c.judgeTransition(t, st, status, rec, r)
	c.judgeSurvives(t, status, rec)
	if isTerminal(t.status) && !isTerminal(status) {
		return // keep the terminal status the client saw
	}
	t.status, t.statusRec = status, rec.Index
	c.sawStatus(t, st, status, rec)
	if isTerminal(status) {
		if st.terminalTasks == nil {
			st.terminalTasks = map[string]uint64{}
		}
		if st.terminalTasks[t.id] == 0 {
			st.terminalTasks[t.id] = rec.Index + 1
		}
	}
}

// judgeTransition judges TASK-STATUS-TRANSITION for a task seen in status
// (see transition).
func (c *Checker) judgeTransition(t *task, st *stream, status string, rec traces.Record, r *request) {
	sameStream := st.terminalTasks != nil && st.terminalTasks[t.id] != 0
	after := r != nil && r.terminalBefore != ""
	if isTerminal(t.status) && status != t.status && (sameStream || after) {
		c.fail(RuleTaskStatusTransition, "task "+t.id+" went from "+t.status+" to "+status+"; a terminal status is final", t.statusRec, rec.Index)
	} else if t.status != "" && !isTerminal(t.status) && !legalTransition(t.status, status) {
		c.fail(RuleTaskStatusTransition, "task "+t.id+" went from "+t.status+" to unknown status "+status, t.statusRec, rec.Index)
	} else if t.status != "" {
		c.ok(RuleTaskStatusTransition)
	}
}

// judgeSurvives judges TASK-SURVIVES-REQUEST: a task whose creating stream
// ended is not cancelled unless the client cancelled it.
func (c *Checker) judgeSurvives(t *task, status string, rec traces.Record) {
	if t.cancelled == false && status == "cancelled" && t.creatorCut {
		c.fail(RuleTaskSurvivesRequest, "task "+t.id+" was cancelled, though the client never cancelled it, after the stream that created it ended", t.creatorCutRec, rec.Index)
	} else if t.creatorCut && isTerminal(status) && !isTerminal(t.status) {
		c.ok(RuleTaskSurvivesRequest)
	}
}

// taskAnswer judges a Task in a tasks/get or tasks/cancel answer.
func (c *Checker) taskAnswer(s *session, st *stream, r *request, rec traces.Record, wt *wireTask, res *wireResult) {
	if r.otherSession != nil {
		c.fail(RuleTaskIsolation, r.method+" in session "+s.id+" was answered for task "+r.taskID+" of session "+r.otherSession.id, r.rec, rec.Index)
		return
	}
	if !r.knownBefore && s.sawInit && r.taskID != "" {
		c.fail(RuleTaskNotFound, r.method+" of unknown task "+r.taskID+" was answered with a result, want -32602", r.rec, rec.Index)
		return
	}
	if r.method == "tasks/cancel" && r.terminalBefore != "" {
		c.fail(RuleTaskCancelTerminal, "tasks/cancel of a task already "+r.terminalBefore+" was answered with a result, want -32602", r.terminalBeforeRec, r.rec, rec.Index)
	}
	c.checkTaskFields(wt, rec)
	if t := c.tasks[wt.id()]; t != nil && t.sess == s {
		c.transition(t, st, wt.status(), rec, r)
		if wt.PollInterval != nil && *wt.PollInterval > 0 {
			t.pollInterval = msDuration(*wt.PollInterval)
		}
	}
}

// checkTaskFields: TASK-FIELDS (Behavior Requirements › TTL and Resource
// Management: createdAt and lastUpdatedAt in all task responses, ttl in
// tasks/get; Data Types › Task).
func (c *Checker) checkTaskFields(wt *wireTask, rec traces.Record) {
	var missing []string
	if wt.TaskID == nil || *wt.TaskID == "" {
		missing = append(missing, "taskId")
	}
	if wt.Status == nil || !knownStatus[*wt.Status] {
		missing = append(missing, "status")
	}
	if wt.CreatedAt == nil || !isISO8601(*wt.CreatedAt) {
		missing = append(missing, "createdAt (ISO 8601)")
	}
	if wt.LastUpdatedAt == nil || !isISO8601(*wt.LastUpdatedAt) {
		missing = append(missing, "lastUpdatedAt (ISO 8601)")
	}
	if wt.TTL == nil {
		missing = append(missing, "ttl (a number, or null)")
	}
	c.judge(RuleTaskFields, len(missing) == 0, "task "+wt.id()+" lacks or mangles "+strings.Join(missing, ", "), rec.Index)
}

// notification handles a notification from the server.
func (c *Checker) notification(s *session, st *stream, rec traces.Record, w *wireMsg) {
	switch w.Method {
	case "notifications/tasks/status":
		// The params are the Task (Task Status Notification).
		wt := decodeTask(w.Params)
		if wt == nil {
			wt = &wireTask{}
		}
		c.checkTaskFields(wt, rec)
		if t := c.tasks[wt.id()]; t != nil && t.sess == s {
			c.transition(t, st, wt.status(), rec, nil)
		}
	case "notifications/tasks/partial":
		c.partial(s, st, rec, w)
	}
}

func msDuration(ms float64) time.Duration { return time.Duration(ms * float64(time.Millisecond)) }
