package check

import (
	"strconv"
	"strings"

	"github.com/tasksim/tasksim/traces"
)

// segments judges the partial-content of a SEP-1905 streaming answer to r
// (a tools/call, or a tasks/result with lastSeqNr) on stream st.
func (c *Checker) segments(s *session, st *stream, r *request, t *task, rec traces.Record, res *wireResult) {
	if c.replayed {
		// The same event again, replayed after a Last-Event-ID that
		// preceded it: its segments were judged the first time.
		return
	}
	faulted := c.faulted(st, taskIDOf(t))
	if r.complete {
		// S1905-COMPLETE: nothing follows isComplete: true.
		if faulted {
			c.excused("S1905-COMPLETE")
		} else {
			c.fail("S1905-COMPLETE", "request "+r.id+" was answered again after its response with isComplete: true", r.completeR, rec.Index)
		}
		return
	}
	for _, seg := range res.PartialContent {
		n, ok := jsonInt(seg.SeqNr)
		switch {
		case !ok || n <= 0:
			c.fail("S1905-SEQNR", "a segment has seqNr "+string(seg.SeqNr)+"; seqNr is a positive integer", rec.Index)
			continue
		case len(r.seqs) == 0 && r.method == "tools/call" && n != 1:
			c.judgeExcusable("S1905-SEQNR", faulted, false, "the first segment of request "+r.id+" has seqNr "+strconv.FormatInt(n, 10)+"; seqNr starts at 1", rec.Index)
		case len(r.seqs) > 0 && n <= r.seqs[len(r.seqs)-1]:
			c.judgeExcusable("S1905-SEQNR", faulted, false, "seqNr "+strconv.FormatInt(n, 10)+" follows seqNr "+strconv.FormatInt(r.seqs[len(r.seqs)-1], 10)+" in the answers to request "+r.id+"; seqNr strictly increases", rec.Index)
		default:
			c.ok("S1905-SEQNR")
		}
		r.seqs = append(r.seqs, n)
		if t == nil {
			continue
		}
		content := canonical(seg.Content)
		if old, seen := t.segments[n]; seen && old != content {
			c.judgeExcusable("S1905-SEQNR", faulted, false, "seqNr "+strconv.FormatInt(n, 10)+" of task "+t.id+" was sent again with other content", t.segRecs[n], rec.Index)
		}
		if _, seen := t.segments[n]; !seen {
			t.segments[n], t.segRecs[n] = content, rec.Index
		}
		t.received[n] = true
		t.maxSeqNr = max(t.maxSeqNr, n)
	}
	if res.IsComplete != nil && *res.IsComplete {
		r.complete, r.completeR = true, rec.Index
		isErr := res.IsError != nil && *res.IsError
		if t != nil {
			t.isComplete, t.isError = true, isErr
		}
		// S1905-COMPLETE: a completed stream's task is completed, a
		// failed one's failed (with isError).
		if res.Task != nil && (res.Task.status() == "cancelled" || (t != nil && t.status == "cancelled")) {
			// Cancelled during streaming: the final response has
			// isComplete true and the task is cancelled (SEP-1905,
			// Streaming Behavior).
			c.ok("S1905-COMPLETE")
		} else if res.Task != nil && res.Task.status() != "" {
			want := "completed"
			if isErr {
				want = "failed"
			}
			c.judge("S1905-COMPLETE", res.Task.status() == want, "the response with isComplete: true carries task status "+res.Task.status()+", want "+want, rec.Index)
		} else {
			c.ok("S1905-COMPLETE")
		}
	} else if res.Task != nil && isTerminal(res.Task.status()) {
		c.fail("S1905-COMPLETE", "a response with isComplete: false carries terminal task status "+res.Task.status(), rec.Index)
	}
}

func (c *Checker) judgeExcusable(id string, faulted, cond bool, msg string, records ...uint64) {
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

// tasksResultAnswer judges an answer to tasks/result.
func (c *Checker) tasksResultAnswer(s *session, st *stream, r *request, rec traces.Record, res *wireResult) {
	if r.otherSession != nil {
		c.fail("TASK-ISOLATION", "tasks/result in session "+s.id+" was answered for task "+r.taskID+" of session "+r.otherSession.id, r.rec, rec.Index)
		return
	}
	if !r.knownBefore && s.sawInit && r.taskID != "" {
		c.fail("TASK-NOT-FOUND", "tasks/result of unknown task "+r.taskID+" was answered with a result, want -32602", r.rec, rec.Index)
		return
	}
	t := r.task
	if r.hasLastSeqNr && !r.lastSeqNrOK {
		c.fail("S1905-LASTSEQNR-INVALID", "tasks/result with lastSeqNr "+r.lastSeqNrRaw+" was answered with a result, want -32602", r.rec, rec.Index)
		return
	}
	if r.hasLastSeqNr {
		c.resumeAnswer(st, r, t, rec, res)
		return
	}
	if t == nil {
		return
	}
	// TASK-RESULT: the underlying result with the related-task meta, the
	// same every time (Behavior Requirements › Result Retrieval).
	if rt := res.relatedTask(); rt != t.id {
		c.fail("TASK-RESULT", "tasks/result of task "+t.id+" lacks the related-task meta naming it (has "+strconvQuote(rt)+")", rec.Index)
	} else {
		content := canonical(res.Content)
		if t.result != "" && content != t.result {
			c.fail("TASK-RESULT", "tasks/result of task "+t.id+" differs from the result given before", t.resultRec, rec.Index)
		} else {
			c.ok("TASK-RESULT")
		}
	}
	// S1905-IMMEDIATE: tasks/result of an immediate call returns the same.
	if t.createdBy != nil && t.createdBy.mode == "immediate" {
		c.judge("S1905-IMMEDIATE", canonical(res.Content) == t.result, "tasks/result of task "+t.id+" differs from its immediate result", t.resultRec, rec.Index)
	}
	if t.result == "" {
		t.result, t.resultRec = canonical(res.Content), rec.Index
	}
	// S1905-MERGE: without lastSeqNr, the merged segments, sorted, seqNr
	// removed (SEP-1905, Relationship to Existing Tasks Specification).
	if t.isComplete && t.maxSeqNr > 0 && !res.HasPartial {
		merged, whole := t.merged()
		if whole {
			if c.faulted(nil, t.id) && merged != sortedJSON(res.Content) {
				c.excused("S1905-MERGE")
			} else {
				c.judge("S1905-MERGE", merged == sortedJSON(res.Content), "tasks/result of task "+t.id+" is not its segments 1.."+strconv.FormatInt(t.maxSeqNr, 10)+" merged", t.segRecs[1], rec.Index)
			}
		}
	}
}

func strconvQuote(s string) string { return strconv.Quote(s) }

// merged joins the content arrays of segments 1..max, and reports whether
// every one was seen.
func (t *task) merged() (string, bool) {
	var parts []string
	for n := int64(1); n <= t.maxSeqNr; n++ {
		seg, ok := t.segments[n]
		if !ok {
			return "", false
		}
		inner := strings.TrimSpace(seg)
		inner = strings.TrimPrefix(strings.TrimSuffix(inner, "]"), "[")
		if inner != "" {
			parts = append(parts, inner)
		}
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
			c.judgeExcusable("S1905-RESUME", faulted, false, "tasks/result with lastSeqNr "+strconv.FormatInt(k, 10)+" returned seqNr "+strconv.FormatInt(n, 10), r.rec, rec.Index)
		} else if first && len(r.seqs) == 0 && n != k+1 {
			c.judgeExcusable("S1905-RESUME", faulted, false, "tasks/result with lastSeqNr "+strconv.FormatInt(k, 10)+" began at seqNr "+strconv.FormatInt(n, 10)+", want "+strconv.FormatInt(k+1, 10), r.rec, rec.Index)
		} else {
			c.ok("S1905-RESUME")
		}
		first = false
	}
	if len(res.PartialContent) == 0 && t != nil && t.isComplete && k >= t.maxSeqNr {
		c.judge("S1905-RESUME", res.IsComplete != nil && *res.IsComplete, "tasks/result with lastSeqNr "+strconv.FormatInt(k, 10)+" at the end of a complete task did not say isComplete: true", r.rec, rec.Index)
	}
	c.segments(st.sess, st, r, t, rec, res)
}
