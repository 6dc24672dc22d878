package check

import (
	"cmp"
	"slices"
	"strconv"
	"strings"

	"github.com/tasksim/tasksim/traces"
)

// segments judges the partial-content of a SEP-1905 streaming answer to r
// (a tools/call, or a tasks/result with lastSeqNr) on stream st.
func (c *Checker) segments(s *session, st *stream, r *request, t *task, rec traces.Record, res *wireResult) {
	faulted := c.faulted(st, taskIDOf(t))
	if r.complete {
		// S1905-COMPLETE: nothing follows isComplete: true.
		if faulted {
			c.excused(RuleS1905Complete)
		} else {
			c.fail(RuleS1905Complete, "request "+r.id+" was answered again after its response with isComplete: true", r.completeR, rec.Index)
		}
		return
	}
	for _, seg := range res.PartialContent {
		c.segment(r, t, seg, rec, faulted)
	}
	if t != nil && res.IsComplete != nil {
		c.completeOrder(st, r, t, rec, *res.IsComplete, faulted)
	}
	c.completeStatus(r, t, rec, res)
}

// segment judges one segment of an answer to r (S1905-SEQNR) and keeps it.
func (c *Checker) segment(r *request, t *task, seg wireSegment, rec traces.Record, faulted bool) {
	n, ok := jsonInt(seg.SeqNr)
	switch {
	case !ok || n <= 0:
		c.fail(RuleS1905SeqNr, "a segment has seqNr "+string(seg.SeqNr)+"; seqNr is a positive integer", rec.Index)
		return
	case len(r.seqs) == 0 && r.method == "tools/call" && n != 1:
		c.judgeExcusable(RuleS1905SeqNr, faulted, false, "the first segment of request "+r.id+" has seqNr "+strconv.FormatInt(n, 10)+"; seqNr starts at 1", rec.Index)
	case len(r.seqs) > 0 && n <= r.seqs[len(r.seqs)-1]:
		c.judgeExcusable(RuleS1905SeqNr, faulted, false, "seqNr "+strconv.FormatInt(n, 10)+" follows seqNr "+strconv.FormatInt(r.seqs[len(r.seqs)-1], 10)+" in the answers to request "+r.id+"; seqNr strictly increases", rec.Index)
	default:
		c.ok(RuleS1905SeqNr)
	}
	r.seqs = append(r.seqs, n)
	if t == nil {
		return
	}
	content := seg.Raw
	if old, seen := t.segments[n]; seen && old != content && segmentBlock(old) != segmentBlock(content) {
		c.judgeExcusable(RuleS1905SeqNr, faulted, false, "seqNr "+strconv.FormatInt(n, 10)+" of task "+t.id+" was sent again with other content", t.segRecs[n], rec.Index)
	}
	if _, seen := t.segments[n]; !seen {
		t.segments[n], t.segRecs[n] = content, rec.Index
	}
	t.received[n] = true
	t.maxSeqNr = max(t.maxSeqNr, n)
}

// completeStatus judges S1905-COMPLETE on an answer's isComplete and task
// status: a completed stream's task is completed, a failed one's failed
// (with isError); a stream not complete carries no terminal status.
func (c *Checker) completeStatus(r *request, t *task, rec traces.Record, res *wireResult) {
	if res.IsComplete == nil || !*res.IsComplete {
		if res.Task != nil && isTerminal(res.Task.status()) {
			c.fail(RuleS1905Complete, "a response with isComplete: false carries terminal task status "+res.Task.status(), rec.Index)
		}
		return
	}
	r.complete, r.completeR = true, rec.Index
	isErr := res.IsError != nil && *res.IsError
	if t != nil {
		t.isComplete, t.isError = true, isErr
	}
	if res.Task == nil || res.Task.status() == "" {
		c.ok(RuleS1905Complete)
		return
	}
	want := "completed"
	if isErr {
		want = "failed"
	}
	if res.Task.status() == "cancelled" {
		// "If the task is cancelled during streaming ... If a
		// final response is sent, it MUST have isComplete: true"
		// (SEP-1905, TTL and cancellation).
		want = "cancelled"
	}
	c.judge(RuleS1905Complete, res.Task.status() == want, "the response with isComplete: true carries task status "+res.Task.status()+", want "+want, rec.Index)
}

func (c *Checker) judgeExcusable(id RuleID, faulted, cond bool, msg string, records ...uint64) {
	if !cond && faulted {
		c.excused(id)
		return
	}
	c.judge(id, cond, msg, records...)
}

func taskIDOf(t *task) string {
	if t == nil {
		return ""
	}
	return t.id
}

// sameResult judges TASK-RESULT: the underlying result with the
// related-task meta, the same every time (Behavior Requirements › Result
// Retrieval).
func (c *Checker) sameResult(t *task, rec traces.Record, res *wireResult) {
	if rt := res.relatedTask(); rt != t.id {
		c.fail(RuleTaskResult, "tasks/result of task "+t.id+" lacks the related-task meta naming it (has "+strconvQuote(rt)+")", rec.Index)
		return
	}
	if t.result != "" && canonical(res.Content) != t.result {
		c.fail(RuleTaskResult, "tasks/result of task "+t.id+" differs from the result given before", t.resultRec, rec.Index)
		return
	}
	c.ok(RuleTaskResult)
}

// tasksResultAnswer judges an answer to tasks/result.
func (c *Checker) tasksResultAnswer(s *session, st *stream, r *request, rec traces.Record, res *wireResult) {
	if r.otherSession != nil {
		c.fail(RuleTaskIsolation, "tasks/result in session "+s.id+" was answered for task "+r.taskID+" of session "+r.otherSession.id, r.rec, rec.Index)
		return
	}
	if !r.knownBefore && s.sawInit && r.taskID != "" {
		c.fail(RuleTaskNotFound, "tasks/result of unknown task "+r.taskID+" was answered with a result, want -32602", r.rec, rec.Index)
		return
	}
	t := r.task
	if r.hasLastSeqNr && !r.lastSeqNrOK {
		c.fail(RuleS1905LastSeqNrInvalid, "tasks/result with lastSeqNr "+r.lastSeqNrRaw+" was answered with a result, want -32602", r.rec, rec.Index)
		return
	}
	if r.hasLastSeqNr {
		c.resumeAnswer(st, r, t, rec, res)
		r.whole = r.complete
		return
	}
	if t == nil {
		return
	}
	// Without lastSeqNr the answer is the task's whole result, held back
	// until the task is terminal (SEP-1905, Relationship to Existing Tasks
	// Specification).
	r.whole = true
	c.sameResult(t, rec, res)
	// S1905-IMMEDIATE: tasks/result of an immediate call returns the same.
	if t.createdBy != nil && t.createdBy.mode == "immediate" {
		c.judge(RuleS1905Immediate, canonical(res.Content) == t.result, "tasks/result of task "+t.id+" differs from its immediate result", t.resultRec, rec.Index)
	}
	if t.result == "" {
		t.result, t.resultRec = canonical(res.Content), rec.Index
	}
	// S1905-MERGE: without lastSeqNr, the merged segments, sorted, seqNr
	// removed (SEP-1905, Relationship to Existing Tasks Specification).
	if t.isComplete && t.maxSeqNr > 0 && !res.HasPartial {
		merged, whole := t.merged()
		if whole {
			got := canonicalBlocks(res.Content)
			if c.faulted(nil, t.id) && merged != got {
				c.excused(RuleS1905Merge)
			} else {
				c.judge(RuleS1905Merge, merged == got, "tasks/result of task "+t.id+" is not its segments 1.."+strconv.FormatInt(t.maxSeqNr, 10)+" merged", t.segRecs[1], rec.Index)
			}
		}
	}
}

func strconvQuote(s string) string { return strconv.Quote(s) }

// merged joins the blocks of segments 1..max into one content array, and
// reports whether every one was seen.
func (t *task) merged() (string, bool) {
	var parts []string
	for n := int64(1); n <= t.maxSeqNr; n++ {
		seg, ok := t.segments[n]
		if !ok {
			return "", false
		}
		parts = append(parts, segmentBlock(seg))
	}
	return "[" + strings.Join(parts, ",") + "]", true
}

// resumeAnswer judges S1905-RESUME: tasks/result with lastSeqNr k returns
// the segments after k; at or past the end, an empty list with the right
// isComplete (SEP-1905, Case 3 › Resuming Streaming).
func (c *Checker) resumeAnswer(st *stream, r *request, t *task, rec traces.Record, res *wireResult) {
	k := r.lastSeqNr
	faulted := c.faulted(st, taskIDOf(t))
	first := true
	for _, seg := range res.PartialContent {
		n, ok := jsonInt(seg.SeqNr)
		if !ok {
			continue
		}
		if n <= k {
			c.judgeExcusable(RuleS1905Resume, faulted, false, "tasks/result with lastSeqNr "+strconv.FormatInt(k, 10)+" returned seqNr "+strconv.FormatInt(n, 10), r.rec, rec.Index)
		} else if first && len(r.seqs) == 0 && n != k+1 {
			c.judgeExcusable(RuleS1905Resume, faulted, false, "tasks/result with lastSeqNr "+strconv.FormatInt(k, 10)+" began at seqNr "+strconv.FormatInt(n, 10)+", want "+strconv.FormatInt(k+1, 10), r.rec, rec.Index)
		} else {
			c.ok(RuleS1905Resume)
		}
		first = false
	}
	// At or past the end, isComplete: true is due only once the client
	// had seen the task terminal before it asked: just after the stream's
	// isComplete: true the status may still be moving ("after which it
	// MUST transition to completed", SEP-1905 Case 3), and a server may
	// rightly say isComplete: false until it has.
	if len(res.PartialContent) == 0 && t != nil && t.isComplete && r.terminalBefore != "" && k >= t.maxSeqNr {
		c.judge(RuleS1905Resume, res.IsComplete != nil && *res.IsComplete, "tasks/result with lastSeqNr "+strconv.FormatInt(k, 10)+" at the end of a complete task did not say isComplete: true", r.rec, rec.Index)
	}
	c.segments(st.sess, st, r, t, rec, res)
}

// S1905-COMPLETE reads the task's status from every source: status
// notifications, tasks/get, tasks/list, tasks/cancel and the results
// (Case 3: "The task status MUST remain working until isComplete: true is
// sent, after which it MUST transition to completed"). A completed seen
// before the first isComplete: true breaks it, but only where the trace
// proves that order (docs/rules.md, "How a trace is judged"):
//
//   - on one stream and its resumptions, the server's own order;
//   - isComplete: false in the answer to a request the client sent after
//     it had seen completed: the server said "not complete" after it had
//     said completed (a definite order);
//   - across streams, only when the recorder saw the server's send order
//     (Options.SendOrder). A proxy of the client's side records a message
//     when it passed, and two connections can pass in another order than
//     the server sent them: a correct server's isComplete: true on the
//     POST stream and its completed on the GET stream may be recorded
//     either way;
//   - a streamed call whose stream the server ended without ever sending
//     isComplete: true, though the task completed (finishComplete): then
//     completed came first whatever the order.
//
// A correct server may be in either state just after isComplete: true
// (the status "MUST transition to completed" after it, not with it), so
// working seen after isComplete: true is no failure here.

// sawStatus notes the first completed seen of t, from any source.
func (c *Checker) sawStatus(t *task, st *stream, status string, rec traces.Record) {
	if status == "completed" && t.completedRec == 0 {
		t.completedRec, t.completedOn = rec.Index+1, st
	}
}

// completeOrder judges a response with isComplete about t against a
// completed seen before it.
func (c *Checker) completeOrder(st *stream, r *request, t *task, rec traces.Record, complete, faulted bool) {
	seenBefore := t.completedRec != 0 && t.completedRec-1 < rec.Index && t.completeRec == 0
	if seenBefore {
		sameStream := t.completedOn != nil && t.completedOn.root() == st.root() && !c.opts.Merged
		after := r.terminalBefore == "completed"
		switch {
		case complete && after:
			// The answer to a request sent after completed was seen
			// says isComplete: true, as it must; it says nothing of what
			// came before. The call's own stream may have carried
			// isComplete: true first, still in flight or cut before this
			// view saw it (a client that stopped reading cannot be sent
			// it at all).
		case !sameStream && !after && !c.opts.SendOrder:
			// Order not proven.
		case faulted:
			c.excused(RuleS1905Complete)
		default:
			c.fail(RuleS1905Complete, "task "+t.id+" was seen completed before its response with isComplete: true (this one says isComplete: "+strconv.FormatBool(complete)+")", t.completedRec-1, rec.Index)
		}
	}
	if complete && t.completeRec == 0 {
		t.completeRec = rec.Index + 1
	}
}

// finishComplete: a streamed call whose task was seen completed and whose
// stream (and every resumption of it) the server ended without a response
// with isComplete: true anywhere for the task never sent it: completed
// came first. A stream the client, a fault or the recorder cut may have
// carried it unseen, and is not judged.
func (c *Checker) finishComplete() {
	for _, t := range c.tasks {
		r := t.createdBy
		if t.completedRec == 0 || t.completeRec != 0 || r == nil || r.mode != "streaming" || r.ex == nil || r.ex.stream == nil {
			continue
		}
		root := r.ex.stream
		if root.kind != "POST" || !root.cutByServer || c.faulted(root, t.id) {
			continue
		}
		judged := true
		for _, st := range root.sess.resumes[root] {
			if st.cut && !st.cutByServer {
				judged = false
			}
		}
		if judged {
			c.fail(RuleS1905Complete, "task "+t.id+" completed, but the stream answering request "+r.id+" ended without a response with isComplete: true, and none came after", t.completedRec-1, root.cutRec)
		}
	}
}

// finishModes judges the calls answered in task mode where streaming was
// due (modeSelect). A streaming answer MUST keep its task working until
// isComplete: true is sent, as a response to the call (Case 3), on the
// stream the client keeps reading; a task the client saw end with no
// streaming response to its call at all was answered in task mode. A call
// whose task the client never saw end, or whose stream a fault touched,
// is not judged: the rest may have come unseen.
func (c *Checker) finishModes() {
	var due []*request
	for _, s := range c.sessions {
		for _, r := range s.requests {
			if r.modeDue != "" {
				due = append(due, r)
			}
		}
	}
	slices.SortFunc(due, func(a, b *request) int { return cmp.Compare(a.rec, b.rec) })
	for _, r := range due {
		t := r.task
		if t == nil || !isTerminal(t.status) || r.ex == nil || c.faulted(r.ex.stream, t.id) {
			continue
		}
		c.fail(RuleS1905ModeSelect, "the call listed responseModes "+strings.Join(r.modes, ",")+", the server declares "+r.modeDue+" too, and it was answered in task mode: task "+t.id+" ended "+t.status+" with no "+r.modeDue+" response to the call", r.rec, r.modeDueRec, t.statusRec)
	}
}
