package check

import (
	"encoding/json"

	"github.com/tasksim/tasksim/traces"
)

// The notifications of 2026-07-28: subscriptions/listen streams and the
// notifications/tasks they carry (Tasks, "Task Status Notifications").

// notification26 judges a notification of the server.
func (c *Checker) notification26(rec traces.Record, w *wireMsg) {
	switch w.Method {
	case "notifications/subscriptions/acknowledged":
		// The acknowledgement lists the task ids the server agreed to
		// send notifications for (Task Status Notifications).
		var p wire26Params
		_ = json.Unmarshal(w.Params, &p)
		if l := c.listenOf(rec, w.Params); l != nil && p.Notifications != nil {
			l.taskIDs = map[string]bool{}
			for _, id := range p.Notifications.TaskIDs {
				l.taskIDs[id] = true
			}
		}
	case "notifications/tasks":
		res := decode26Result(w.Params)
		if res == nil {
			return
		}
		// Each carries a complete DetailedTask (Task Status
		// Notifications).
		c.taskFields(res, rec)
		c.getShape(res, rec)
		c.listenTasks(rec, w, res.str("taskId"))
		if l := c.listenOf(rec, w.Params); l != nil {
			c.listenTerminal(l, res, rec)
			c.clientNotification(l, res, rec)
		} else {
			c.strayNotification(res, rec)
		}
		if t := c.rev26.tasks[res.str("taskId")]; t != nil {
			notePoll(t, res)
			status := res.str("status")
			c.terminal26(t, status, outcome(res, status), rec, true)
		}
	case "notifications/progress", "notifications/message":
		// They "MUST NOT be sent on the subscriptions/listen stream for a
		// task" (Task Status Notifications).
		if l := c.listenOf(rec, w.Params); l != nil {
			c.fail(RuleS2663ListenTasks, "a "+w.Method+" came on the stream of a subscriptions/listen", l.rec, rec.Index)
		}
	}
}

// listenTerminal judges S2663-TERMINAL-FINAL on the notifications/tasks
// of one listen stream: after a terminal status, the stream carries the
// task in that status with that result or error only.
func (c *Checker) listenTerminal(l *req26, res *wire26Result, rec traces.Record) {
	id, status := res.str("taskId"), res.str("status")
	body := outcome(res, status)
	if seen, ok := l.ended[id]; ok {
		switch {
		case status != seen.status:
			c.fail(RuleS2663TerminalFinal, "task "+id+" was "+seen.status+" on a listen stream, then "+status+" on the same stream", seen.rec, rec.Index)
		case body != seen.body:
			c.fail(RuleS2663TerminalFinal, "task "+id+" is "+status+" on a listen stream with another result or error than before on it", seen.rec, rec.Index)
		default:
			c.ok(RuleS2663TerminalFinal)
		}
		return
	}
	if isTerminal(status) {
		if l.ended == nil {
			l.ended = map[string]terminalSeen{}
		}
		l.ended[id] = terminalSeen{status, body, rec.Index}
	}
}

// listenOf returns the subscriptions/listen a notification belongs to:
// over HTTP the request of its exchange, elsewhere the listen its
// subscriptionId names (2026-07-28 Subscriptions: every notification of
// a listen carries the listen's id as its subscriptionId).
func (c *Checker) listenOf(rec traces.Record, params json.RawMessage) *req26 {
	if rec.Exchange != 0 {
		if r := c.rev26.exReq[exKey{rec.Conn, rec.Exchange}]; r != nil && r.method == "subscriptions/listen" {
			return r
		}
		return nil
	}
	var p struct {
		Meta struct {
			SubscriptionID json.RawMessage `json:"io.modelcontextprotocol/subscriptionId"`
		} `json:"_meta"`
	}
	if json.Unmarshal(params, &p) != nil || len(p.Meta.SubscriptionID) == 0 {
		return nil
	}
	return c.rev26.listens[req26Key{conn: rec.Conn, id: canonical(p.Meta.SubscriptionID)}]
}

// listenTasks judges S2663-LISTEN-TASKS: a notifications/tasks goes only
// on a listen that asked for its task, as its acknowledgement agreed.
func (c *Checker) listenTasks(rec traces.Record, w *wireMsg, taskID string) {
	l := c.listenOf(rec, w.Params)
	switch {
	case l == nil && rec.Exchange != 0:
		what := "a stream that is no subscriptions/listen"
		if r := c.rev26.exReq[exKey{rec.Conn, rec.Exchange}]; r != nil {
			what = "the stream of a " + r.method
		}
		c.fail(RuleS2663ListenTasks, "a notifications/tasks of task "+taskID+" came on "+what, rec.Index)
	case l == nil:
		c.fail(RuleS2663ListenTasks, "a notifications/tasks of task "+taskID+" names no subscriptions/listen in its subscriptionId", rec.Index)
	case !l.taskIDs[taskID]:
		c.fail(RuleS2663ListenTasks, "a notifications/tasks of task "+taskID+" came on a listen that did not ask for it (or was not agreed to)", l.rec, rec.Index)
	default:
		c.ok(RuleS2663ListenTasks)
	}
}
