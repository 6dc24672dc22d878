package check

import (
	"github.com/tasksim/tasksim/traces"
)

// checkTaskMessage: TASK-ISOLATION over every message of the server (Tasks
// › Security Considerations › Task Isolation and Access Control: "tasks
// SHOULD be scoped to the session ... receivers MUST ensure that tasks are
// isolated"). A message about a task (a notification such as
// notifications/tasks/status or a SEP-2679 partial, a response, a
// result's partial-content, the related-task meta; rec.RPC.TaskID names
// it) that reaches a session other than the task's own leaks the task's
// id and status there. Whether it also went to the task's own session
// does not matter: broadcast across sessions is this rule's, never
// HTTP-NO-BROADCAST's, which keys messages by session.
//
// The task's session is the one whose tools/call created it. A message
// about a task the trace has not seen created yet is held against its
// session when the creation comes (observeTask): over two connections a
// leaked notification can be recorded before the answer that creates the
// task in its own session, and before the same notification on the
// owner's stream, so until then no session is blamed.
func (c *Checker) checkTaskMessage(s *session, rec traces.Record, w *wireMsg) {
	if rec.RPC == nil || rec.RPC.TaskID == "" {
		return
	}
	if w.Method == "" {
		r := s.requests[canonical(w.ID)]
		switch {
		case r != nil && r.otherSession != nil:
			return // judged as the answer to a request about another session's task
		case r != nil && r.method == "tools/call" && r.task == nil:
			return // the answer that creates the task: taskCreated judges it
		}
	}
	id := rec.RPC.TaskID
	t := c.tasks[id]
	switch {
	case t == nil:
		// First sight outside an answer that creates it: remembered in
		// this session; a creation in another moves it (leaked below).
		t = c.task(s, id, rec)
		if w.Method != "" {
			t.unowned = append(t.unowned, sighting{s, rec.Index, describeMessage(w)})
		}
	case t.createdBy == nil && len(t.unowned) > 0:
		// Seen in two sessions before either created it: which one
		// leaked is known at the creation (taskCreated).
		if t.sess != s {
			t.unowned = append(t.unowned, sighting{s, rec.Index, describeMessage(w)})
		}
	case t.sess != s:
		c.fail(RuleTaskIsolation, describeMessage(w)+" about task "+id+" of session "+t.sess.id+" went to session "+s.id, t.rec, rec.Index)
	case c.multiSession():
		c.ok(RuleTaskIsolation)
	}
}

// taskCreated moves t, first seen in a message of another session, to s,
// the session whose tools/call created it: that message was a leak.
func (c *Checker) taskCreated(t *task, s *session, rec traces.Record) {
	if t.earlySeq != nil {
		t.nextSeq, t.earlySeq = t.earlySeq[s.id], nil
	}
	for _, l := range t.unowned {
		if l.sess != s {
			c.fail(RuleTaskIsolation, l.what+" about task "+t.id+" of session "+s.id+" went to session "+l.sess.id+" before the task was created", l.rec, rec.Index)
		}
	}
	t.sess, t.unowned = s, nil
}

// sighting is a message about a task seen in a session before the task's
// creation: a leak unless that session creates it.
type sighting struct {
	sess *session
	rec  uint64
	what string
}

// multiSession reports whether the trace has two sessions or more: only
// then does a message reaching its own session show isolation held.
func (c *Checker) multiSession() bool {
	n := 0
	for _, s := range c.sessions {
		if s.sawInit || s.assigned {
			n++
		}
	}
	return n > 1
}

// describeMessage names a message for a finding.
func describeMessage(w *wireMsg) string {
	if w.Method != "" {
		return w.Method
	}
	return "the response to request " + canonical(w.ID)
}
