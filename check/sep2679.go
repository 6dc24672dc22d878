package check

import (
	"strconv"
	"strings"

	"github.com/tasksim/tasksim/traces"
)

// partial judges a notifications/tasks/partial (SEP-2679).
func (c *Checker) partial(s *session, st *stream, rec traces.Record, w *wireMsg) {
	p := decodeParams(w.Params)
	// S2679-NEGOTIATION (2.3. Negotiation Rules): only to a client that
	// declared tasks.streaming.partial.
	if s.sawInit {
		c.judge(RuleS2679Negotiation, s.clientPartial, "a partial notification went to a client that did not declare tasks.streaming.partial", rec.Index)
	}
	// S2679-CONTENT (1.2. Parameters): content is a non-empty array.
	content := strings.TrimSpace(string(p.Content))
	c.judge(RuleS2679Content, strings.HasPrefix(content, "[") && content != "[]" && strings.Trim(content, "[] \t\r\n") != "", "partial notification of task "+p.TaskID+" has content "+abbrev(content), rec.Index)
	if p.TaskID == "" {
		return
	}
	// A partial can arrive (on the GET stream) before the answer that
	// creates its task (on the POST stream).
	t := c.task(s, p.TaskID, rec)
	if t.sess != s && t.createdBy != nil {
		return
	}
	faulted := c.faulted(st, t.id)
	// S2679-AFTER-TERMINAL (1.3, 4.): never after the terminal status; on
	// one stream the order is certain.
	if at := st.terminalTasks[t.id]; at != 0 {
		c.judgeExcusable(RuleS2679AfterTerminal, faulted, false, "partial notification of task "+t.id+" after its terminal status on the same stream", at-1, rec.Index)
	} else {
		c.ok(RuleS2679AfterTerminal)
	}
	// S2679-SEQ (1.2, 1.3): seq starts at 0 and steps by exactly 1.
	seq, ok := jsonInt(p.Seq)
	if !ok {
		c.fail(RuleS2679Seq, "partial notification of task "+t.id+" has seq "+abbrev(string(p.Seq))+"; want an integer", rec.Index)
		return
	}
	next := &t.nextSeq
	if t.createdBy == nil {
		// Before the answer that creates the task its owner is unknown:
		// a partial may be its own (the GET stream can pass first) or
		// leaked to another session (TASK-ISOLATION's). Each session's
		// sequence is kept apart until the creation says whose it is
		// (taskCreated).
		if t.earlySeq == nil {
			t.earlySeq = map[string]int64{}
		}
		n := t.earlySeq[s.id]
		next = &n
		defer func() { t.earlySeq[s.id] = n }()
	}
	want := *next
	if t.seqRoots == nil {
		t.seqRoots = map[*stream]bool{}
	}
	t.seqRoots[st.root()] = true
	if seq == want {
		c.ok(RuleS2679Seq)
	} else {
		t.seqWrong = append(t.seqWrong, seqFinding{faulted, "partial notification of task " + t.id + " has seq " + strconv.FormatInt(seq, 10) + ", want " + strconv.FormatInt(want, 10), rec.Index})
	}
	if seq >= want {
		*next = seq + 1
	}
}

func abbrev(s string) string {
	if s == "" {
		return "(none)"
	}
	if len(s) > 40 {
		return s[:40] + "..."
	}
	return s
}

// finishSeq judges S2679-SEQ's findings for t (1.2, 1.3: seq starts at 0
// and steps by exactly 1). The order is proven on one stream; a server
// that broadcast its messages (HTTP-NO-BROADCAST) sent the task's
// partials on several streams, whose order in the trace is the order they
// were recorded in, not sent in, so a seq out of step there is
// HTTP-NO-BROADCAST's to blame, not this rule's.
func (c *Checker) finishSeq(t *task) {
	if len(t.seqWrong) == 0 {
		return
	}
	if len(t.seqRoots) > 1 && t.sess != nil && t.sess.broadcast {
		c.ok(RuleS2679Seq)
		return
	}
	for _, f := range t.seqWrong {
		c.judgeExcusable(RuleS2679Seq, f.faulted, false, f.msg, f.rec)
	}
}
