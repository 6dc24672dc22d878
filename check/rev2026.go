package check

import (
	"encoding/json"
	"maps"
	"slices"
	"strconv"
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
//
// The rules are in tasks2026.go (results and tasks), listen2026.go
// (notifications and listen streams) and http2026.go (routing headers, no
// sessions); wire2026.go decodes what they read.

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
	// clients are the clients, by clientInfo (client2026.go).
	clients map[string]*client26
}

func newRev26() *rev26 {
	return &rev26{heads: map[exKey]*head26{}, reqs: map[req26Key]*req26{}, tasks: map[string]*task26{},
		exReq: map[exKey]*req26{}, listens: map[req26Key]*req26{}, clients: map[string]*client26{}}
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
	for k, cl := range v.clients {
		d.clients[k] = cl.clone()
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
	// client names the client that sent it, asked what it asks (its
	// method and params, _meta aside) (client2026.go).
	client, asked string
	taskID        string
	rec           uint64
	at            time.Duration
	head          *head26
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

// task26 is what the history shows of one task.
type task26 struct {
	id         string
	createdRec uint64
	createdAt  time.Duration
	ttl        time.Duration // 0: unlimited (ttlMs null) or unknown
	// poll is the last pollIntervalMs given for it (0: none).
	poll time.Duration
	gets int
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
	case traces.KindBodyEnd, traces.KindConnError:
		if rec.Dir != traces.DirClientToServer {
			c.streamBroke(rec)
		}
		if rec.Kind == traces.KindConnError {
			c.freeIDs(rec.Conn, "")
		}
	case traces.KindConnClose:
		c.freeIDs(rec.Conn, "")
	}
}

// message26 handles one JSON-RPC message of the revision.
func (c *Checker) message26(rec traces.Record, raw []byte) {
	w := decodeWire(raw)
	if w == nil {
		return
	}
	if rec.Dir == traces.DirClientToServer {
		switch {
		case w.Method != "" && len(w.ID) > 0:
			c.request26(rec, w)
		case w.Method == "notifications/cancelled":
			var p struct {
				RequestID json.RawMessage `json:"requestId"`
			}
			if json.Unmarshal(w.Params, &p) == nil && len(p.RequestID) > 0 {
				c.freeIDs(rec.Conn, canonical(p.RequestID))
			}
		}
		return
	}
	if w.Method != "" {
		if len(w.ID) == 0 {
			c.notification26(rec, w)
		}
		return
	}
	key := req26Key{rec.Conn, rec.Exchange, canonical(w.ID)}
	r := c.rev26.reqs[key]
	if r == nil {
		return
	}
	var res *wire26Result
	if w.Error == nil {
		res = decode26Result(w.Result)
	}
	c.answered(r, key.id, res, w, rec)
	c.answer26(r, rec, w)
	// The request is answered, and its exchange over: keep only what is
	// open (a listen's stream ends with its answer too).
	delete(c.rev26.reqs, key)
	if rec.Exchange != 0 {
		ex := exKey{rec.Conn, rec.Exchange}
		delete(c.rev26.exReq, ex)
		delete(c.rev26.heads, ex)
	}
	if r.method == "subscriptions/listen" {
		delete(c.rev26.listens, req26Key{conn: rec.Conn, id: key.id})
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
	r.client = p.clientKey()
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
	c.clientRequest(r, rec, key.id, &p, w.Params)
	c.rev26.reqs[key] = r
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
