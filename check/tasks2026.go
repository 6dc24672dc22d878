package check

import (
	"encoding/json"
	"slices"
	"strconv"
	"strings"

	"github.com/tasksim/tasksim/traces"
)

// The rules of the tasks extension (SEP-2663) on the results of
// 2026-07-28: result types, Task fields, tasks/get shapes, terminal
// states, durable create, not found, acknowledgements, input keys.

// taskFields judges S2663-TASK-FIELDS on a Task (interface Task: taskId,
// status, createdAt and lastUpdatedAt as ISO 8601 timestamps, ttlMs an
// integer number of milliseconds or null, pollIntervalMs an integer).
func (c *Checker) taskFields(res *wire26Result, rec traces.Record, more ...uint64) {
	var bad []string
	if res.str("taskId") == "" {
		bad = append(bad, "taskId")
	}
	if !knownStatus[res.str("status")] {
		bad = append(bad, "status")
	}
	for _, name := range []string{"createdAt", "lastUpdatedAt"} {
		if !isISO8601(res.str(name)) {
			bad = append(bad, name+" (ISO 8601)")
		}
	}
	if v, ok := res.members["ttlMs"]; !ok || (string(v) != "null" && !isInteger(v)) {
		bad = append(bad, "ttlMs (an integer, or null)")
	}
	if v, ok := res.members["pollIntervalMs"]; ok && !isInteger(v) {
		bad = append(bad, "pollIntervalMs (an integer)")
	}
	c.judge(RuleS2663TaskFields, len(bad) == 0, "task "+res.str("taskId")+" lacks or mangles "+strings.Join(bad, ", "), append(more, rec.Index)...)
}

// error26 judges an error answer.
func (c *Checker) error26(r *req26, rec traces.Record, e *wireError) {
	if r.method != m26Get || r.taskID == "" {
		return
	}
	code := strconv.Itoa(e.Code)
	switch {
	case c.faulted26(r):
		// A fault (a mis-routed request, a lost store) answered it.
		if !r.known {
			c.excused(RuleS2663NotFound)
		} else if r.first {
			c.excused(RuleS2663DurableCreate)
		}
	case !r.known:
		// Servers MUST return -32602 for tasks/get of an invalid or
		// nonexistent taskId (Error Handling, "Protocol Errors").
		c.judge(RuleS2663NotFound, e.Code == codeInvalidParams, "tasks/get of task "+r.taskID+", which the server never gave out, answered "+code+", want -32602", r.rec, rec.Index)
	case r.first:
		t := c.rev26.tasks[r.taskID]
		expired := t.ttl > 0 && r.at-t.createdAt >= t.ttl
		if e.Code == codeInvalidParams && !expired {
			c.fail(RuleS2663DurableCreate, "the first tasks/get of task "+r.taskID+", sent after its CreateTaskResult and within its ttlMs, was answered -32602 (not found)", t.createdRec, r.rec, rec.Index)
		} else if !expired {
			c.ok(RuleS2663DurableCreate)
		}
	}
}

// faulted26 reports whether a fault acted on request r or its task.
func (c *Checker) faulted26(r *req26) bool {
	return c.faultAll || c.faultedTasks[r.taskID]
}

// resultType judges S2663-RESULT-TYPE on a result answering r.
func (c *Checker) resultType(r *req26, res *wire26Result, rec traces.Record) {
	fail := func(msg string) { c.fail(RuleS2663ResultType, msg, r.rec, rec.Index) }
	isCreate := r.method == "tools/call" && res.isCreate()
	switch rt := res.resultType; {
	case !res.hasResultType:
		fail("the result of " + r.method + " has no resultType (a string); every result of the revision carries one")
	case isCreate && rt != "task":
		fail("a CreateTaskResult (task " + res.str("taskId") + ") has resultType " + strconv.Quote(rt) + ", want \"task\"")
	case !isCreate && rt == "task":
		fail("the result of " + r.method + " has resultType \"task\" but is no CreateTaskResult")
	case (r.method == m26Get || r.method == m26Update || r.method == m26Cancel) && rt != "complete":
		fail("the result of " + r.method + " has resultType " + strconv.Quote(rt) + ", want \"complete\"")
	case rt == "input_required" && len(res.object("inputRequests")) == 0:
		fail("the result of " + r.method + " has resultType \"input_required\" without inputRequests")
	default:
		c.ok(RuleS2663ResultType)
	}
}

// created26 registers the task a CreateTaskResult gave out.
func (c *Checker) created26(res *wire26Result, rec traces.Record) {
	id := res.str("taskId")
	if c.rev26.tasks[id] != nil {
		return
	}
	t := &task26{id: id, createdRec: rec.Index, createdAt: rec.Offset, keys: map[string]*inputKey{}}
	if n, err := strconv.ParseFloat(string(res.members["ttlMs"]), 64); err == nil && n > 0 {
		t.ttl = msDuration(n)
	}
	notePoll(t, res)
	c.rev26.tasks[id] = t
	c.rev26.ids = append(c.rev26.ids, taskIDSeen{id, rec.Index})
}

// notePoll keeps the pollIntervalMs a Task carries, the last given for
// it (it "MAY change over the lifetime of a task").
func notePoll(t *task26, res *wire26Result) {
	if n, err := strconv.ParseFloat(string(res.members["pollIntervalMs"]), 64); err == nil && n > 0 {
		t.poll = msDuration(n)
	}
}

// getShape judges S2663-GET-SHAPE on a DetailedTask: tasks/get "MUST"
// return with completed a result, with failed the error, with
// input_required the inputRequests (Task Polling, "Response"); failed is
// for JSON-RPC errors only (Task Status; Task Execution Errors).
func (c *Checker) getShape(res *wire26Result, rec traces.Record, more ...uint64) {
	recs := append(more, rec.Index)
	id := res.str("taskId")
	_, hasResult := res.members["result"]
	_, hasError := res.members["error"]
	switch res.str("status") {
	case "completed":
		c.judge(RuleS2663GetShape, res.object("result") != nil && !hasError, "task "+id+" is completed without its result (an object), or with an error", recs...)
	case "failed":
		e := res.object("error")
		var code int
		var msg string
		ok := e != nil && json.Unmarshal(e["code"], &code) == nil && json.Unmarshal(e["message"], &msg) == nil
		c.judge(RuleS2663GetShape, ok && !hasResult, "task "+id+" is failed without a JSON-RPC error (an object with an integer code and a message), or with a result", recs...)
	case "input_required":
		c.judge(RuleS2663GetShape, len(res.object("inputRequests")) > 0, "task "+id+" is input_required without inputRequests", recs...)
	}
}

// getAnswer judges a tasks/get answered with a result.
func (c *Checker) getAnswer(r *req26, res *wire26Result, rec traces.Record) {
	c.taskFields(res, rec, r.rec)
	c.getShape(res, rec, r.rec)
	t := c.rev26.tasks[r.taskID]
	if t == nil {
		// A task the trace never saw created (it may predate the
		// recording): nothing is known to judge it against.
		return
	}
	if r.first {
		c.ok(RuleS2663DurableCreate)
	}
	notePoll(t, res)
	status := res.str("status")
	body := outcome(res, status)
	if r.terminal != "" {
		// The client had seen the task terminal before it asked: the
		// state does not change once terminal (Task Status State Diagram).
		switch {
		case status != r.terminal:
			c.fail(RuleS2663TerminalFinal, "task "+t.id+" was "+r.terminal+", then a tasks/get sent after that answered "+status, r.terminalRec, r.rec, rec.Index)
		case body != r.terminalBody:
			c.fail(RuleS2663TerminalFinal, "task "+t.id+" is "+status+" with another result or error than before", r.terminalRec, r.rec, rec.Index)
		default:
			c.ok(RuleS2663TerminalFinal)
		}
		c.terminal26(t, status, body, rec, false)
	} else {
		c.terminal26(t, status, body, rec, true)
	}
	c.inputKeys(t, r, res, rec)
}

// terminal26 keeps the first terminal status seen of t and, when judge,
// judges S2663-TERMINAL-FINAL on another terminal one: a task has one
// terminal state, whatever order the two were seen in, so two terminal
// sightings that differ in status, result or error fail even where their
// order is not proven (two streams).
func (c *Checker) terminal26(t *task26, status, body string, rec traces.Record, judge bool) {
	switch {
	case !isTerminal(status):
	case t.terminal == "":
		t.terminal, t.terminalBody, t.terminalRec = status, body, rec.Index
	case !judge:
	case status != t.terminal || body != t.terminalBody:
		c.fail(RuleS2663TerminalFinal, "task "+t.id+" was seen "+t.terminal+" and "+status+" (or with another result or error); a task has one terminal state", t.terminalRec, rec.Index)
	default:
		c.ok(RuleS2663TerminalFinal)
	}
}

// inputKeys judges S2663-INPUT-KEYS: "Each request key in inputRequests
// MUST be unique over the lifetime of a single task": no key for two
// distinct requests, none reused after its response was delivered (Task
// Update Requests). The acknowledgement of tasks/update is eventually
// consistent, so an answered key may show again until the server takes
// the answer; it is reused only if it shows again after an answer to a
// later request showed it gone.
func (c *Checker) inputKeys(t *task26, r *req26, res *wire26Result, rec traces.Record) {
	reqs := map[string]json.RawMessage{}
	if res.str("status") == "input_required" {
		reqs = res.object("inputRequests")
	}
	for k, ik := range t.keys {
		if _, ok := reqs[k]; !ok && ik.answered && !ik.gone && r.rec > ik.answeredRec {
			ik.gone, ik.goneRec = true, rec.Index
		}
	}
	for _, k := range sortedKeys(reqs) {
		body := sortedJSON(reqs[k])
		ik := t.keys[k]
		switch {
		case ik == nil:
			t.keys[k] = &inputKey{request: body, rec: rec.Index}
		case ik.request != body:
			c.fail(RuleS2663InputKeys, "task "+t.id+"'s inputRequests key "+strconv.Quote(k)+" names another request than before", ik.rec, rec.Index)
		case ik.gone && r.rec > ik.goneRec:
			c.fail(RuleS2663InputKeys, "task "+t.id+"'s inputRequests key "+strconv.Quote(k)+" is back after its answer was taken", ik.answeredRec, ik.goneRec, rec.Index)
		default:
			c.ok(RuleS2663InputKeys)
		}
	}
}

// ack judges the acknowledgement of tasks/update or tasks/cancel: "the
// server MUST acknowledge the request with an empty result" (Task Update
// Requests, Task Cancellation); resultType and _meta are the Result's own.
func (c *Checker) ack(r *req26, res *wire26Result, rec traces.Record) {
	var extra []string
	for name := range res.members {
		if name != "resultType" && name != "_meta" {
			extra = append(extra, name)
		}
	}
	slices.Sort(extra)
	c.judge(RuleS2663AckEmpty, len(extra) == 0, "the acknowledgement of "+r.method+" carries "+strings.Join(extra, ", ")+"; it is an empty result", r.rec, rec.Index)
	if r.method != m26Update {
		return
	}
	if t := c.rev26.tasks[r.taskID]; t != nil {
		for _, k := range r.keys {
			if ik := t.keys[k]; ik != nil && !ik.answered {
				ik.answered, ik.answeredRec = true, rec.Index
			}
		}
	}
}
