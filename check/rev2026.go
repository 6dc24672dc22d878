package check

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/tasksim/tasksim/traces"
)

// The records of the 2026-07-28 revision (each record's Revision,
// docs/trace-format.md, "Revisions") are judged here, by the rules of that
// revision only; the rules of 2025-11-25 never see them, nor these rules
// a record of 2025-11-25. The revision is stateless: no session, each
// request carries its own _meta, and a task is named by its id alone
// (ext-tasks-2026-07-28.md), so what is kept is per request and per task.
//
//	request head ──▶ head26 (Mcp-Method, Mcp-Name, MCP-Protocol-Version)   HTTP-HEADER-MISMATCH, HTTP-STATELESS
//	request      ──▶ req26 (what the client had seen of its task when it sent it)
//	response     ──▶ judged by its request's method                       S2663-*
//	task         ──▶ task26 (created, terminal, inputRequests keys)

// rev26 is what the history shows of the 2026-07-28 revision.
type rev26 struct {
	heads map[exKey]*head26
	reqs  map[req26Key]*req26
	tasks map[string]*task26
	// ids are the task ids given out, in order (S2663-ID-ENTROPY).
	ids []taskIDSeen
	// exReq is the request of each HTTP exchange; listens are the
	// subscriptions/listen requests by connection and id, which
	// notifications name in their subscriptionId.
	exReq   map[exKey]*req26
	listens map[req26Key]*req26
}

func newRev26() *rev26 {
	return &rev26{heads: map[exKey]*head26{}, reqs: map[req26Key]*req26{}, tasks: map[string]*task26{},
		exReq: map[exKey]*req26{}, listens: map[req26Key]*req26{}}
}

// clone copies the history for a second view (views.go).
func (v *rev26) clone() *rev26 {
	d := newRev26()
	d.ids = slices.Clone(v.ids)
	heads := map[*head26]*head26{}
	for k, h := range v.heads {
		cp := *h
		heads[h] = &cp
		d.heads[k] = &cp
	}
	reqs := map[*req26]*req26{}
	for k, r := range v.reqs {
		cp := *r
		cp.head = heads[r.head]
		cp.keys = slices.Clone(r.keys)
		cp.taskIDs = maps.Clone(r.taskIDs)
		cp.ended = maps.Clone(r.ended)
		reqs[r] = &cp
		d.reqs[k] = &cp
	}
	for k, r := range v.exReq {
		d.exReq[k] = reqs[r]
	}
	for k, r := range v.listens {
		d.listens[k] = reqs[r]
	}
	for id, t := range v.tasks {
		cp := *t
		cp.keys = map[string]*inputKey{}
		for k, ik := range t.keys {
			kc := *ik
			cp.keys[k] = &kc
		}
		d.tasks[id] = &cp
	}
	return d
}

// head26 is an HTTP exchange of the revision: its request's head and the
// status it was answered.
type head26 struct {
	method string // GET, POST, DELETE
	// The routing headers (2026-07-28 Streamable HTTP, "Request
	// Metadata"): the first field of each name, and whether it was there.
	mcpMethod, mcpName, version    string
	hasMethod, hasName, hasVersion bool
	rec                            uint64
	status                         int
}

// req26Key names a request: its HTTP exchange (0 over stdio and in
// process) and its JSON-RPC id.
type req26Key struct {
	conn, ex uint64
	id       string
}

// req26 is one request of the client.
type req26 struct {
	method string
	taskID string
	rec    uint64
	at     time.Duration
	head   *head26
	// headers is what is wrong with its routing headers ("" when they
	// agree with the body).
	headers string
	// known: the task id had been given out when the request was sent;
	// first: it is the first tasks/get of that task.
	known, first bool
	// terminal and terminalRec are the terminal status the client had
	// seen its task in, and where; terminalBody the result or error.
	terminal     string
	terminalRec  uint64
	terminalBody string
	// keys are the inputResponses keys of a tasks/update.
	keys []string
	// caps says whether the request's capabilities declare the tasks
	// extension: capsUnknown when it carries none.
	caps capsDecl
	// wantsTasks: a request only a client of the extension may send.
	wantsTasks bool
	// taskIDs are the task ids a subscriptions/listen asked for, then
	// those its acknowledgement agreed to.
	taskIDs map[string]bool
	// ended is, for each task, the terminal status a listen's stream
	// carried first: on one stream the order is certain.
	ended map[string]terminalSeen
}

// terminalSeen is a terminal status, its result or error (canonical) and
// its record.
type terminalSeen struct {
	status, body string
	rec          uint64
}

// capsDecl is what a request's _meta says of the tasks extension.
type capsDecl uint8

const (
	capsUnknown capsDecl = iota // no io.modelcontextprotocol/clientCapabilities
	capsTasks                   // declares io.modelcontextprotocol/tasks
	capsNoTasks                 // declares capabilities without it
)

// extTasks is the tasks extension's identifier (Extension Identifier).
const extTasks = "io.modelcontextprotocol/tasks"

// task26 is what the history shows of one task.
type task26 struct {
	id         string
	createdRec uint64
	createdAt  time.Duration
	ttl        time.Duration // 0: unlimited (ttlMs null) or unknown
	gets       int
	// terminal is the first terminal status seen, with its result or
	// error (canonical), and its record.
	terminal     string
	terminalBody string
	terminalRec  uint64
	keys         map[string]*inputKey
}

// inputKey is one key of a task's inputRequests.
type inputKey struct {
	request string // the input request, canonical
	rec     uint64
	// answered: a tasks/update carrying it was acknowledged; gone: an
	// answer to a request sent after that showed the task without it.
	answered, gone bool
	answeredRec    uint64
	goneRec        uint64
}

// wire26Params are the members of a 2026-07-28 request's params the
// rules read.
type wire26Params struct {
	TaskID         *string                    `json:"taskId"`
	Name           *string                    `json:"name"`
	URI            *string                    `json:"uri"`
	InputResponses map[string]json.RawMessage `json:"inputResponses"`
	Notifications  *struct {
		TaskIDs []string `json:"taskIds"`
	} `json:"notifications"`
	Meta struct {
		Version      string `json:"io.modelcontextprotocol/protocolVersion"`
		Capabilities *struct {
			Extensions map[string]json.RawMessage `json:"extensions"`
		} `json:"io.modelcontextprotocol/clientCapabilities"`
	} `json:"_meta"`
}

// caps reads what the request declares of the tasks extension.
func (p *wire26Params) caps() capsDecl {
	switch c := p.Meta.Capabilities; {
	case c == nil:
		return capsUnknown
	case c.Extensions[extTasks] != nil:
		return capsTasks
	}
	return capsNoTasks
}

// wantsTasks reports whether a request asks for what only a client of
// the tasks extension may: tasks/get, tasks/update, tasks/cancel, or a
// listen for task ids (Error Handling, "Protocol Errors").
func (p *wire26Params) wantsTasks(method string) bool {
	switch method {
	case m26Get, m26Update, m26Cancel:
		return true
	case "subscriptions/listen":
		return p.Notifications != nil && p.Notifications.TaskIDs != nil
	}
	return false
}

// wire26Result is a result of the revision, member by member.
type wire26Result struct {
	members       map[string]json.RawMessage
	resultType    string
	hasResultType bool
}

func decode26Result(raw json.RawMessage) *wire26Result {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || raw[0] != '{' {
		return nil
	}
	r := &wire26Result{members: map[string]json.RawMessage{}}
	members(raw, func(name, v []byte) {
		n, ok := jsonString(name)
		if !ok {
			return
		}
		r.members[n] = v
	})
	if v, ok := r.members["resultType"]; ok {
		r.resultType, r.hasResultType = jsonString(v)
	}
	return r
}

// isCreate reports whether a tools/call result has the shape of a
// CreateTaskResult (Result & Task: a taskId and a status at the top),
// whatever its resultType says.
func (r *wire26Result) isCreate() bool { return r.str("taskId") != "" && r.str("status") != "" }

func (r *wire26Result) str(name string) string {
	s, _ := jsonString(r.members[name])
	return s
}

// object returns a member that is a JSON object, nil otherwise.
func (r *wire26Result) object(name string) map[string]json.RawMessage {
	v := bytes.TrimSpace(r.members[name])
	if len(v) == 0 || v[0] != '{' {
		return nil
	}
	m := map[string]json.RawMessage{}
	members(v, func(name, v []byte) {
		if n, ok := jsonString(name); ok {
			m[n] = v
		}
	})
	return m
}

// sortedJSON returns a JSON value with every object's members sorted, to
// compare two values whatever the order of their members.
func sortedJSON(raw json.RawMessage) string {
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return canonical(raw)
	}
	out, err := json.Marshal(v)
	if err != nil {
		return canonical(raw)
	}
	return string(out)
}

// Methods and codes of the revision.
const (
	m26Get    = "tasks/get"
	m26Update = "tasks/update"
	m26Cancel = "tasks/cancel"

	codeInvalidParams  = -32602
	codeMethodNotFound = -32601
	codeHeaderMismatch = -32020
	// codeMissingCapability is MissingRequiredClientCapability.
	codeMissingCapability = -32021
)

// add26 judges one record of the 2026-07-28 revision.
func (c *Checker) add26(rec traces.Record) {
	v := c.rev26
	switch rec.Kind {
	case traces.KindRequestHead:
		if rec.HTTP != nil {
			v.heads[exKey{rec.Conn, rec.Exchange}] = head26Of(rec)
		}
	case traces.KindResponseHead:
		c.responseHead26(rec)
	case traces.KindSSEEvent:
		if rec.RPC != nil && rec.SSE != nil {
			c.message26(rec, []byte(rec.SSE.Data))
		}
	case traces.KindMessage, traces.KindStdioLine:
		if rec.RPC != nil {
			c.message26(rec, rec.Raw)
		}
	}
}

func head26Of(rec traces.Record) *head26 {
	h := &head26{method: rec.HTTP.Method, rec: rec.Index}
	for _, f := range rec.HTTP.Header {
		var v *string
		var has *bool
		switch {
		case strings.EqualFold(f.Name, "Mcp-Method"):
			v, has = &h.mcpMethod, &h.hasMethod
		case strings.EqualFold(f.Name, "Mcp-Name"):
			v, has = &h.mcpName, &h.hasName
		case strings.EqualFold(f.Name, "MCP-Protocol-Version"):
			v, has = &h.version, &h.hasVersion
		default:
			continue
		}
		if !*has {
			*v, *has = f.Value, true
		}
	}
	return h
}

// responseHead26 judges HTTP-STATELESS on the head of an answer: the
// revision has no sessions, so a server never mints an Mcp-Session-Id,
// and a modern server answers GET and DELETE 405 (2026-07-28 Streamable
// HTTP, "Earlier Streamable HTTP Revisions"; notes 1.5).
func (c *Checker) responseHead26(rec traces.Record) {
	h := c.rev26.heads[exKey{rec.Conn, rec.Exchange}]
	if h == nil || rec.HTTP == nil {
		return
	}
	h.status = rec.HTTP.Status
	if id, ok := rec.HTTP.Get("Mcp-Session-Id"); ok {
		c.fail(RuleHTTPStateless, "a 2026-07-28 "+h.method+" was answered with Mcp-Session-Id "+id+"; the revision has no sessions", h.rec, rec.Index)
		return
	}
	if h.method == "GET" || h.method == "DELETE" {
		c.judge(RuleHTTPStateless, h.status == 405, "a 2026-07-28 "+h.method+" was answered "+strconv.Itoa(h.status)+", want 405", h.rec, rec.Index)
		return
	}
	c.ok(RuleHTTPStateless)
}

// message26 handles one JSON-RPC message of the revision.
func (c *Checker) message26(rec traces.Record, raw []byte) {
	w := decodeWire(raw)
	if w == nil {
		return
	}
	if rec.Dir == traces.DirClientToServer {
		if w.Method != "" && len(w.ID) > 0 {
			c.request26(rec, w)
		}
		return
	}
	if w.Method != "" {
		if len(w.ID) == 0 {
			c.notification26(rec, w)
		}
		return
	}
	r := c.rev26.reqs[req26Key{rec.Conn, rec.Exchange, canonical(w.ID)}]
	if r == nil {
		return
	}
	c.answer26(r, rec, w)
}

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
		}
	case "notifications/progress", "notifications/message":
		// They "MUST NOT be sent on the subscriptions/listen stream for a
		// task" (Task Status Notifications).
		if l := c.listenOf(rec, w.Params); l != nil {
			c.fail(RuleS2663ListenTasks, "a "+w.Method+" came on the stream of a subscriptions/listen", l.rec, rec.Index)
		}
	}
}

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

// isInteger reports whether a JSON value is a non-negative integer
// number (the conformance suite rejects fractional ttlMs and
// pollIntervalMs).
func isInteger(v json.RawMessage) bool {
	n, err := strconv.ParseFloat(string(v), 64)
	return err == nil && n >= 0 && n == float64(int64(n))
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

// outcome returns a DetailedTask's result (completed) or error (failed),
// canonical, "" in another status.
func outcome(res *wire26Result, status string) string {
	switch status {
	case "completed":
		return sortedJSON(res.members["result"])
	case "failed":
		return sortedJSON(res.members["error"])
	}
	return ""
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

// request26 keeps a request, with what the client had seen of its task.
func (c *Checker) request26(rec traces.Record, w *wireMsg) {
	r := &req26{method: w.Method, rec: rec.Index, at: rec.Offset, head: c.rev26.heads[exKey{rec.Conn, rec.Exchange}]}
	var p wire26Params
	_ = json.Unmarshal(w.Params, &p)
	if p.TaskID != nil {
		r.taskID = *p.TaskID
	}
	for k := range p.InputResponses {
		r.keys = append(r.keys, k)
	}
	r.headers = headerProblem(r.head, w.Method, &p)
	r.caps = p.caps()
	r.wantsTasks = p.wantsTasks(w.Method)
	key := req26Key{rec.Conn, rec.Exchange, canonical(w.ID)}
	if w.Method == "subscriptions/listen" {
		r.taskIDs = map[string]bool{}
		if p.Notifications != nil {
			for _, id := range p.Notifications.TaskIDs {
				r.taskIDs[id] = true
			}
		}
		c.rev26.listens[req26Key{conn: rec.Conn, id: canonical(w.ID)}] = r
	}
	if rec.Exchange != 0 {
		c.rev26.exReq[exKey{rec.Conn, rec.Exchange}] = r
	}
	if t := c.rev26.tasks[r.taskID]; t != nil {
		r.known = true
		r.terminal, r.terminalRec, r.terminalBody = t.terminal, t.terminalRec, t.terminalBody
		if w.Method == m26Get {
			r.first = t.gets == 0
			t.gets++
		}
	}
	c.rev26.reqs[key] = r
}

// headerProblem says what is wrong with the routing headers of a request
// over HTTP: Mcp-Method MUST be on every request and equal the method,
// Mcp-Name on tools/call, prompts/get, resources/read and tasks/* and
// equal the name, uri or taskId, MCP-Protocol-Version equal the _meta's
// protocolVersion (notes 1.2; Tasks, "Streamable HTTP: Routing Headers").
// A value sent base64-encoded (=?base64?...?=) is compared decoded.
func headerProblem(h *head26, method string, p *wire26Params) string {
	if h == nil || h.method != "POST" {
		return ""
	}
	var want *string
	switch method {
	case "tools/call", "prompts/get":
		want = p.Name
	case "resources/read":
		want = p.URI
	case m26Get, m26Update, m26Cancel:
		want = p.TaskID
	}
	switch {
	case !h.hasMethod:
		return "it has no Mcp-Method header"
	case decodeHeader(h.mcpMethod) != method:
		return "its Mcp-Method " + strconv.Quote(h.mcpMethod) + " is not its method " + strconv.Quote(method)
	case want != nil && !h.hasName:
		return "it has no Mcp-Name header"
	case want != nil && decodeHeader(h.mcpName) != *want:
		return "its Mcp-Name " + strconv.Quote(h.mcpName) + " is not " + strconv.Quote(*want)
	case h.hasVersion && p.Meta.Version != "" && h.version != p.Meta.Version:
		return "its MCP-Protocol-Version " + strconv.Quote(h.version) + " is not its _meta protocolVersion " + strconv.Quote(p.Meta.Version)
	}
	return ""
}

// decodeHeader decodes a header value sent as =?base64?...?= (2026-07-28
// Streamable HTTP, "Request Metadata": non-ASCII values and values with
// leading or trailing spaces).
func decodeHeader(v string) string {
	if b, ok := strings.CutPrefix(v, "=?base64?"); ok {
		if b, ok := strings.CutSuffix(b, "?="); ok {
			if d, err := base64.StdEncoding.DecodeString(b); err == nil {
				return string(d)
			}
		}
	}
	return v
}

// answer26 judges the answer to request r.
func (c *Checker) answer26(r *req26, rec traces.Record, w *wireMsg) {
	if r.headers != "" {
		status, code := 0, 0
		if r.head != nil {
			status = r.head.status
		}
		if w.Error != nil {
			code = w.Error.Code
		}
		c.judge(RuleHTTPHeaderMismatch, status == 400 && code == codeHeaderMismatch,
			"a "+r.method+" request: "+r.headers+", and was answered HTTP "+strconv.Itoa(status)+" "+answerText(w)+", want HTTP 400 with -32020", r.rec, rec.Index)
		return
	}
	if r.caps == capsNoTasks && r.wantsTasks {
		// Servers MUST return -32021 to non-declaring clients issuing
		// tasks/get, tasks/update, tasks/cancel or listening for task ids
		// (Error Handling, "Protocol Errors").
		c.judge(RuleS2663Capability, w.Error != nil && w.Error.Code == codeMissingCapability,
			"a "+r.method+" whose capabilities do not declare "+extTasks+" was answered "+answerText(w)+", want -32021", r.rec, rec.Index)
		return
	}
	switch r.method {
	case "tasks/result", "tasks/list":
		c.judge(RuleS2663RemovedMethods, w.Error != nil && w.Error.Code == codeMethodNotFound,
			r.method+" was answered "+answerText(w)+"; the revision has no "+r.method+", want -32601", r.rec, rec.Index)
		return
	}
	if w.Error != nil {
		c.error26(r, rec, w.Error)
		return
	}
	res := decode26Result(w.Result)
	if res == nil {
		return
	}
	c.resultType(r, res, rec)
	switch r.method {
	case "tools/call":
		if r.caps == capsNoTasks {
			// "A server MUST NOT return CreateTaskResult to a client that
			// did not include the extension capability on its request"
			// (Capability Negotiation).
			c.judge(RuleS2663Capability, !res.isCreate(), "a tools/call whose capabilities do not declare "+extTasks+" was answered with a CreateTaskResult (task "+res.str("taskId")+")", r.rec, rec.Index)
		}
		if res.isCreate() {
			c.taskFields(res, rec, r.rec)
			c.created26(res, rec)
		}
	case m26Get:
		c.getAnswer(r, res, rec)
	case m26Update, m26Cancel:
		c.ack(r, res, rec)
	}
}

// answerText says how a request was answered, for a finding.
func answerText(w *wireMsg) string {
	if w.Error != nil {
		return "error " + strconv.Itoa(w.Error.Code)
	}
	return "with a result"
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
	c.rev26.tasks[id] = t
	c.rev26.ids = append(c.rev26.ids, taskIDSeen{id, rec.Index})
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
	}
	if isTerminal(status) && t.terminal == "" {
		t.terminal, t.terminalBody, t.terminalRec = status, body, rec.Index
	}
	c.inputKeys(t, r, res, rec)
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

func sortedKeys(m map[string]json.RawMessage) []string { return slices.Sorted(maps.Keys(m)) }

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
