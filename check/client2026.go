package check

import (
	"encoding/json"
	"maps"
	"slices"
	"strconv"
	"time"

	"github.com/tasksim/tasksim/traces"
)

// The client rules of 2026-07-28 (CLIENT-2663-*). The revision has no
// session, so a client is told apart by the clientInfo of its requests'
// _meta (2026-07-28 basic, "Per-request protocol fields"; one client for
// requests that carry none), and the rules judge it on the tasks it was
// given: those whose CreateTaskResult answered one of its requests. A
// request about a task the client was never given (a probe, a task id
// passed on by another client) is not judged by them.
//
//	request  ──▶ client26 (ids outstanding or lost)           CLIENT-2663-NEW-ID
//	         ──▶ clientTask (last poll, ended, failed seen)   CLIENT-2663-POLL-INTERVAL, -MCP-NAME, -CAPABILITY
//	answer   ──▶ clientTask (terminal, outcome, interval)     CLIENT-2663-RESULT-TYPE
//	end      ──▶ every clientTask                             CLIENT-2663-KEEP-POLLING, -FAILED-OUTCOME

// client26 is what one client of the revision did.
type client26 struct {
	tasks map[string]*clientTask
	// outstanding are the ids of its requests not yet answered, by the
	// connection they were sent on, with the record of each; lost the
	// requests whose stream broke before their answer, not yet re-issued.
	outstanding map[outKey]uint64
	lost        []lostRequest
	// invalid are the unknown-resultType answers it got: the inputRequests
	// keys and task ids only they gave (CLIENT-2663-RESULT-TYPE), and
	// whether the client acted on each.
	invalid      []*invalidAnswer
	validKeys    map[string]bool
	validTaskIDs map[string]bool
}

// outKey names an outstanding request: its id, and the connection it was
// sent on where that bounds the requestor's ids. Over stdio and in
// process a connection is one client's (a pipe, an mcp.Conn): a new one
// of a client that carries the same clientInfo (a restarted process, a
// fresh pipe) starts its ids afresh. Over Streamable HTTP each request is
// a POST of its own, which a client spreads over its TCP connections as
// it likes: there the ids are the client's (conn 0).
type outKey struct {
	conn uint64
	id   string
}

// outKeyOf returns the outKey of request id sent on conn, in an HTTP
// exchange when ex is not 0.
func outKeyOf(conn, ex uint64, id string) outKey {
	if ex != 0 {
		conn = 0
	}
	return outKey{conn, id}
}

// lostRequest is a request whose stream broke before its answer: its id,
// record, and what it asked (method and params, _meta aside), which its
// re-issue asks again.
type lostRequest struct {
	id, asked string
	rec       uint64
}

// invalidAnswer is a result with a resultType the revision does not
// define.
type invalidAnswer struct {
	rec, reqRec uint64
	resultType  string
	keys        []string
	taskID      string
	actedRec    uint64 // 0: not acted on
}

// clientTask is what a client was told of, and did with, a task it was
// given.
type clientTask struct {
	createdRec uint64
	// polled: it sent a tasks/get of the task; lastPoll is when it last
	// did (or received its CreateTaskResult), and its record; answered:
	// that tasks/get was answered (one that was not is lost, and the next
	// re-issues it).
	polled, answered bool
	lastPoll         time.Duration
	lastPollRec      uint64
	// terminal: it saw the task terminal; cancelled: it sent tasks/cancel;
	// gone: a tasks/get of it was answered -32602 (the task expired).
	terminal, cancelled, gone bool
	// failedRec is where it first saw the task failed (0: never);
	// outcome: it then held the error (a failed DetailedTask with one, or
	// a tasks/get it asked after).
	failedRec uint64
	outcome   bool
}

func newClient26() *client26 {
	return &client26{tasks: map[string]*clientTask{}, outstanding: map[outKey]uint64{},
		validKeys: map[string]bool{}, validTaskIDs: map[string]bool{}}
}

// clone copies the client for a second view.
func (cl *client26) clone() *client26 {
	d := &client26{tasks: map[string]*clientTask{}, outstanding: maps.Clone(cl.outstanding), lost: slices.Clone(cl.lost),
		validKeys: maps.Clone(cl.validKeys), validTaskIDs: maps.Clone(cl.validTaskIDs)}
	for id, t := range cl.tasks {
		cp := *t
		d.tasks[id] = &cp
	}
	for _, a := range cl.invalid {
		cp := *a
		cp.keys = slices.Clone(a.keys)
		d.invalid = append(d.invalid, &cp)
	}
	return d
}

// clientOf returns the client a request came from, by its clientInfo.
func (v *rev26) clientOf(key string) *client26 {
	cl := v.clients[key]
	if cl == nil {
		cl = newClient26()
		v.clients[key] = cl
	}
	return cl
}

// clientKey names a client by the clientInfo of its request's _meta.
func (p *wire26Params) clientKey() string {
	if ci := p.Meta.ClientInfo; ci != nil {
		return ci.Name + "\x00" + ci.Version
	}
	return ""
}

// clientRequest judges a request of the client: its id, and for a task it
// was given, its headers, capabilities and pace.
func (c *Checker) clientRequest(r *req26, rec traces.Record, id string, p *wire26Params, params json.RawMessage) {
	cl := c.rev26.clientOf(r.client)
	r.asked = asked(r.method, params)
	c.newID(cl, rec, id, r.asked)
	c.actsOnInvalid(cl, r, p, rec)
	taskIDs := []string{r.taskID}
	if r.method == "subscriptions/listen" {
		taskIDs = slices.Sorted(maps.Keys(r.taskIDs))
	} else if r.method != m26Get && r.method != m26Update && r.method != m26Cancel {
		return
	}
	for _, tid := range taskIDs {
		ct := cl.tasks[tid]
		if ct == nil {
			continue
		}
		// "the client MUST set the Mcp-Name header to the value of
		// params.taskId" (Streamable HTTP: Routing Headers); a fault may
		// have rewritten it on the way.
		if r.head != nil && r.head.method == "POST" && r.method != "subscriptions/listen" {
			switch {
			case c.faultAll || c.faultedTasks[tid]:
				c.excused(RuleClient2663McpName)
			case !r.head.hasName:
				c.fail(RuleClient2663McpName, "a "+r.method+" of task "+tid+" has no Mcp-Name header; it must carry the taskId", r.head.rec, rec.Index)
			default:
				c.judge(RuleClient2663McpName, decodeHeader(r.head.mcpName) == tid,
					"a "+r.method+" of task "+tid+" has Mcp-Name "+strconv.Quote(r.head.mcpName)+", not its taskId", r.head.rec, rec.Index)
			}
		}
		// The capability is declared per request: the server infers
		// nothing from earlier requests (Capability Negotiation,
		// "regardless of prior declarations").
		c.judge(RuleClient2663Capability, r.caps == capsTasks,
			"a "+r.method+" of task "+tid+" does not declare "+extTasks+" in its clientCapabilities", ct.createdRec, rec.Index)
		switch r.method {
		case m26Get:
			c.pollInterval(ct, tid, r, rec)
			if ct.failedRec != 0 && rec.Index > ct.failedRec {
				ct.outcome = true
			}
		case m26Cancel:
			ct.cancelled = true
		}
	}
}

// pollInterval judges CLIENT-2663-POLL-INTERVAL: "Clients SHOULD respect
// the pollIntervalMs provided in responses" (Task Polling), which "MAY
// change over the lifetime of a task": a tasks/get of a task not yet seen
// terminal is sent at least 90% of the last pollIntervalMs the client had
// received for it after its previous tasks/get of the task. The first
// tasks/get of a task is not judged, as CLIENT-TASKS-GET-INTERVAL does
// not judge it in 2025-11-25: a client may look at once after the
// CreateTaskResult, or after a listen that failed, and polling is the
// pace of the gets that follow. A tasks/get sent after one that got no
// answer (its stream broke) re-issues it, as the client MUST (2026-07-28
// changelog, item 9), and is not judged either. Once the client sent
// tasks/cancel it
// need not poll at all (Task Cancellation), and a tasks/get then, which
// looks how the cancel ended, is not polling: it is not judged.
func (c *Checker) pollInterval(ct *clientTask, tid string, r *req26, rec traces.Record) {
	if t := c.rev26.tasks[tid]; t != nil && t.poll > 0 && ct.polled && ct.answered && !ct.terminal && !ct.cancelled {
		gap := r.at - ct.lastPoll
		c.judge(RuleClient2663PollInterval, gap*10 >= t.poll*9,
			"tasks/get of task "+tid+" "+gap.String()+" after the client's previous one; the server asked for pollIntervalMs "+strconv.FormatInt(t.poll.Milliseconds(), 10),
			ct.lastPollRec, rec.Index)
	}
	ct.polled, ct.answered, ct.lastPoll, ct.lastPollRec = true, false, r.at, rec.Index
}

// newID judges CLIENT-2663-NEW-ID on a request of cl: "A broken response
// stream loses the in-flight request; clients MUST re-issue it as a new
// request with a new request ID" (2026-07-28 changelog, item 9), and
// request ids never collide with the sender's outstanding requests. The
// re-issue of a lost request is the first request of the client after
// the loss that asks the same (method and params, _meta aside).
func (c *Checker) newID(cl *client26, rec traces.Record, id, what string) {
	if prev := cl.outstanding[outKeyOf(rec.Conn, rec.Exchange, id)]; prev != 0 {
		c.fail(RuleClient2663NewID, "request id "+id+" is reused while the client's request with that id is still outstanding", prev, rec.Index)
	}
	for i, l := range cl.lost {
		if l.asked != what {
			continue
		}
		cl.lost = slices.Delete(cl.lost, i, i+1)
		c.judge(RuleClient2663NewID, l.id != id, "the request lost with its stream (id "+l.id+") is re-issued with the same id; a re-issue takes a new id", l.rec, rec.Index)
		break
	}
	cl.outstanding[outKeyOf(rec.Conn, rec.Exchange, id)] = rec.Index
}

// freeIDs ends what is outstanding on conn (stdio, in process; an HTTP
// request ends with its exchange): with id, the request the client
// cancelled (notifications/cancelled: over stdio the cancellation,
// 2026-07-28 Cancellation), which it may not re-issue and whose id is
// free again; with id "", every request of the connection, which closed
// or broke.
func (c *Checker) freeIDs(conn uint64, id string) {
	for _, cl := range c.rev26.clients {
		for k := range cl.outstanding {
			if k.conn == conn && (id == "" || k.id == id) {
				delete(cl.outstanding, k)
			}
		}
	}
}

// asked is what a request asks, to know its re-issue: its method and
// params without their _meta, members sorted.
func asked(method string, params json.RawMessage) string {
	var m map[string]json.RawMessage
	if json.Unmarshal(params, &m) != nil {
		return method + " " + canonical(params)
	}
	delete(m, "_meta")
	b, _ := json.Marshal(m)
	return method + " " + sortedJSON(b)
}

// streamBroke notes a request whose stream ended before its answer: lost,
// unless the client cut it itself (closing a stream is cancelling the
// request, 2026-07-28 Streamable HTTP, "Cancellation") or the recorder
// stopped.
func (c *Checker) streamBroke(rec traces.Record) {
	ex := exKey{rec.Conn, rec.Exchange}
	r := c.rev26.exReq[ex]
	if r == nil {
		return
	}
	delete(c.rev26.exReq, ex)
	delete(c.rev26.heads, ex)
	for k, q := range c.rev26.reqs {
		if q != r {
			continue
		}
		delete(c.rev26.reqs, k)
		cl := c.rev26.clientOf(r.client)
		delete(cl.outstanding, outKeyOf(k.conn, k.ex, k.id))
		if rec.End != traces.EndClient && rec.End != traces.EndStopped {
			cl.lost = append(cl.lost, lostRequest{id: k.id, asked: r.asked, rec: r.rec})
		}
	}
}

// answered notes the answer to r in its client's history: the ids it
// frees, the tasks it gives or shows.
func (c *Checker) answered(r *req26, id string, res *wire26Result, w *wireMsg, rec traces.Record) {
	cl := c.rev26.clientOf(r.client)
	delete(cl.outstanding, outKeyOf(rec.Conn, rec.Exchange, id))
	if ct := cl.tasks[r.taskID]; ct != nil && r.method == m26Get {
		ct.answered = true
	}
	if w.Error != nil {
		if ct := cl.tasks[r.taskID]; ct != nil && r.method == m26Get && w.Error.Code == codeInvalidParams {
			ct.gone = true
		}
		return
	}
	if res == nil {
		return
	}
	if res.hasResultType && !knownResultType[res.resultType] {
		a := &invalidAnswer{rec: rec.Index, reqRec: r.rec, resultType: res.resultType, keys: sortedKeys(res.object("inputRequests")), taskID: res.str("taskId")}
		cl.invalid = append(cl.invalid, a)
		return
	}
	for k := range res.object("inputRequests") {
		cl.validKeys[k] = true
	}
	switch {
	case r.method == "tools/call" && res.isCreate() && r.caps != capsNoTasks:
		// A CreateTaskResult to a request that did not declare the
		// extension is the server's fault (S2663-CAPABILITY): it gives
		// the client no task to follow.
		tid := res.str("taskId")
		cl.validTaskIDs[tid] = true
		if cl.tasks[tid] == nil {
			cl.tasks[tid] = &clientTask{createdRec: rec.Index, lastPoll: rec.Offset, lastPollRec: rec.Index}
		}
		c.sawTask(cl.tasks[tid], res, rec)
	case r.method == m26Get:
		if ct := cl.tasks[r.taskID]; ct != nil && res.str("taskId") == r.taskID {
			c.sawTask(ct, res, rec)
			if res.str("status") == "failed" {
				// A tasks/get answered failed is the outcome fetched;
				// whether it holds the error is S2663-GET-SHAPE's.
				ct.outcome = true
			}
		}
	}
}

// knownResultType are the resultType values of the revision: the core's
// and the tasks extension's (notes 1.4; Polymorphic Results).
var knownResultType = map[string]bool{"complete": true, "input_required": true, "task": true}

// sawTask notes a DetailedTask (or the Task of a CreateTaskResult) the
// client received.
func (c *Checker) sawTask(ct *clientTask, res *wire26Result, rec traces.Record) {
	status := res.str("status")
	if isTerminal(status) {
		ct.terminal = true
	}
	if status == "failed" {
		if ct.failedRec == 0 {
			ct.failedRec = rec.Index
		}
		if res.object("error") != nil {
			ct.outcome = true
		}
	}
}

// clientNotification notes a notifications/tasks the client received on
// its listen l.
func (c *Checker) clientNotification(l *req26, res *wire26Result, rec traces.Record) {
	if ct := c.rev26.clientOf(l.client).tasks[res.str("taskId")]; ct != nil {
		c.sawTask(ct, res, rec)
	}
}

// strayNotification notes a notifications/tasks that reached the client
// on no open listen (after its listen's result, on a connection a fault
// reordered, or by a server that sends them unasked, which
// S2663-LISTEN-TASKS judges): each client that was given the task has
// seen it all the same.
func (c *Checker) strayNotification(res *wire26Result, rec traces.Record) {
	tid := res.str("taskId")
	for _, key := range slices.Sorted(maps.Keys(c.rev26.clients)) {
		if ct := c.rev26.clients[key].tasks[tid]; ct != nil {
			c.sawTask(ct, res, rec)
		}
	}
}

// actsOnInvalid judges CLIENT-2663-RESULT-TYPE on a request of cl: "A
// client MUST treat an unknown value as invalid" (notes 1.4), so it
// answers no inputRequests and follows no task id that only an answer of
// an unknown resultType gave.
func (c *Checker) actsOnInvalid(cl *client26, r *req26, p *wire26Params, rec traces.Record) {
	for _, a := range cl.invalid {
		if a.actedRec != 0 {
			continue
		}
		for k := range p.InputResponses {
			if slices.Contains(a.keys, k) && !cl.validKeys[k] {
				a.actedRec = rec.Index
			}
		}
		if a.taskID != "" && r.taskID == a.taskID && !cl.validTaskIDs[a.taskID] {
			a.actedRec = rec.Index
		}
		if a.actedRec != 0 {
			c.fail(RuleClient2663ResultType, "the client acted on an answer whose resultType "+strconv.Quote(a.resultType)+" it cannot know: its "+r.method+" follows that answer as if it were valid", a.reqRec, a.rec, rec.Index)
		}
	}
}

// finishClients judges what waits for the end of the trace: every task a
// client was given followed to its end, every failed one's outcome read,
// every invalid answer left alone.
func (c *Checker) finishClients() {
	for _, key := range slices.Sorted(maps.Keys(c.rev26.clients)) {
		cl := c.rev26.clients[key]
		for _, a := range cl.invalid {
			if a.actedRec == 0 {
				c.ok(RuleClient2663ResultType)
			}
		}
		for _, tid := range slices.Sorted(maps.Keys(cl.tasks)) {
			ct := cl.tasks[tid]
			// "Clients SHOULD continue polling until the task reaches a
			// terminal status or until invoking tasks/cancel" (Task
			// Polling); a task the server no longer knows is over too.
			c.judge(RuleClient2663KeepPolling, ct.terminal || ct.cancelled || ct.gone,
				"task "+tid+" was left "+"non-terminal: the client neither saw it end nor sent tasks/cancel", ct.createdRec, ct.lastPollRec)
			if ct.failedRec != 0 {
				c.judge(RuleClient2663FailedOutcome, ct.outcome,
					"the client saw task "+tid+" failed but never read its error: no failed DetailedTask with the error, no tasks/get after", ct.createdRec, ct.failedRec)
			}
		}
	}
}
