package faults

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/tasksim/tasksim/internal/refserver"
	"github.com/tasksim/tasksim/mcp"
	"github.com/tasksim/tasksim/mcp/client"
	rev "github.com/tasksim/tasksim/mcp/rev20260728"
	"github.com/tasksim/tasksim/mcp/rev20260728/tasks"
	"github.com/tasksim/tasksim/mcp/streamhttp"
	"github.com/tasksim/tasksim/traces"
)

// meta26 is the per-request _meta of a 2026-07-28 request that declares
// the tasks extension.
const meta26 = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28",` +
	`"io.modelcontextprotocol/clientCapabilities":{"extensions":{"io.modelcontextprotocol/tasks":{}}}}`

// wire26 sends 2026-07-28 requests over real HTTP, each a POST of its own,
// and reads their answers message by message.
type wire26 struct {
	t  *testing.T
	u  string
	c  *http.Client
	id int
}

func newWire26(t *testing.T, u string) *wire26 {
	tr := &http.Transport{}
	t.Cleanup(tr.CloseIdleConnections)
	return &wire26{t: t, u: u, c: &http.Client{Transport: tr}}
}

// answer26 is what came back for one request: the status, the messages
// in order, and the error that ended the read (nil: it ended cleanly).
type answer26 struct {
	status int
	msgs   []*mcp.Message
	err    error
}

// methods names the messages of the answer in order: a notification by
// its method, a response "response".
func (a answer26) methods() []string {
	var out []string
	for _, m := range a.msgs {
		if m.Method != "" {
			out = append(out, m.Method)
		} else {
			out = append(out, "response")
		}
	}
	return out
}

// response is the answer's JSON-RPC response, or nil.
func (a answer26) response() *mcp.Message {
	for _, m := range a.msgs {
		if m.Method == "" {
			return m
		}
	}
	return nil
}

// post sends method with params (JSON members after _meta) and the
// Mcp-Name header name ("" for none), with a new id.
func (w *wire26) post(method, params, name string) answer26 {
	w.t.Helper()
	w.id++
	if params != "" {
		params = "," + params
	}
	body := `{"jsonrpc":"2.0","id":` + strconv.Itoa(w.id) + `,"method":"` + method + `","params":{` + meta26 + params + `}}`
	req, err := http.NewRequest(http.MethodPost, w.u, strings.NewReader(body))
	if err != nil {
		w.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("MCP-Protocol-Version", string(mcp.Revision20260728))
	req.Header.Set("Mcp-Method", method)
	if name != "" {
		req.Header.Set(rev.HeaderName, name)
	}
	resp, err := w.c.Do(req)
	if err != nil {
		return answer26{err: err}
	}
	defer resp.Body.Close()
	a := answer26{status: resp.StatusCode}
	if !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		b, err := io.ReadAll(resp.Body)
		if a.err = err; len(bytes.TrimSpace(b)) > 0 {
			a.add(w.t, b)
		}
		return a
	}
	sc := bufio.NewScanner(resp.Body)
	var data []byte
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "" && data != nil:
			a.add(w.t, data)
			data = nil
		case strings.HasPrefix(line, "data:"):
			data = append(data, strings.TrimPrefix(strings.TrimPrefix(line, "data:"), " ")...)
		}
	}
	a.err = sc.Err()
	return a
}

func (a *answer26) add(t *testing.T, raw []byte) {
	t.Helper()
	m, err := mcp.DecodeMessage(raw)
	if err != nil {
		t.Fatalf("answer %q: %v", raw, err)
	}
	a.msgs = append(a.msgs, m)
}

// createTask calls the instant tool, which the reference server makes a
// task for a request that declares the extension, and returns the task's
// id.
func (w *wire26) createTask() string {
	w.t.Helper()
	a := w.post(mcp.MethodToolsCall, `"name":"instant","arguments":{"text":"hi"}`, "instant")
	r := a.response()
	if a.err != nil || r == nil || r.Error != nil {
		w.t.Fatalf("tools/call instant: %+v", a)
	}
	var c tasks.CreateTaskResult
	if err := json.Unmarshal(r.Result, &c); err != nil || c.ResultType != tasks.ResultTypeTask || c.TaskID == "" {
		w.t.Fatalf("tools/call instant: %s, want a CreateTaskResult", r.Result)
	}
	return c.TaskID
}

// getTask sends tasks/get for id.
func (w *wire26) getTask(id string) answer26 {
	return w.post(tasks.MethodGet, `"taskId":`+strconv.Quote(id), id)
}

// listen opens a subscriptions/listen for task id and reads its stream to
// its end: the reference server closes it gracefully once the task's
// terminal state is pushed.
func (w *wire26) listen(id string) answer26 {
	return w.post(rev.MethodSubscriptionsListen, `"notifications":{"taskIds":[`+strconv.Quote(id)+`]}`, "")
}

// verbsOf returns the names and verbs of the decisions set took.
func verbsOf(set *Set) []string {
	var out []string
	for _, a := range set.Applied() {
		out = append(out, a.Name+" "+a.Action.Verb.String()+" "+a.Target.Method)
	}
	return out
}

// TestCutRequest26: cut-request closes the stream of a 2026-07-28
// tools/call, which is its cancellation. before-create: the server gets
// the request on a stream already closed and the client no answer;
// after-create: the server created a task, the CreateTaskResult never
// reaches the client, the task lives on (a tasks/get by its id finds it:
// an orphan), and the client's re-issue creates a second task.
func TestCutRequest26(t *testing.T) {
	for _, tc := range []struct {
		when, verb string
	}{
		{"before-create", "cut-after"},
		{"after-create", "cut-before"},
	} {
		t.Run(tc.when, func(t *testing.T) {
			set := setOf(t, "cut-request:when="+tc.when+",count=1")
			w := newWire26(t, dualEra(t, set))
			a := w.post(mcp.MethodToolsCall, `"name":"instant","arguments":{"text":"hi"}`, "instant")
			if a.err == nil || a.response() != nil {
				t.Fatalf("cut call: %+v, want a broken stream and no answer", a)
			}
			applied := set.Applied()
			if got, want := verbsOf(set), []string{"cut-request " + tc.verb + " tools/call"}; !slices.Equal(got, want) {
				t.Fatalf("decisions %v, want %v", got, want)
			}
			again := w.createTask() // the re-issue, with a new id
			orphan := applied[0].Target.TaskID
			if tc.when == "before-create" {
				if orphan != "" {
					t.Errorf("cut before create: the decision names task %q", orphan)
				}
				return
			}
			if orphan == "" || orphan == again {
				t.Fatalf("orphan task %q, re-issued task %q: want two tasks", orphan, again)
			}
			g := w.getTask(orphan)
			r := g.response()
			if g.err != nil || r == nil || r.Error != nil {
				t.Fatalf("tasks/get of the orphan task: %+v, want it found", g)
			}
			var d tasks.DetailedTask
			if err := json.Unmarshal(r.Result, &d); err != nil || d.TaskID != orphan {
				t.Fatalf("tasks/get of the orphan task: %s", r.Result)
			}
		})
	}
}

// TestListenFaults26: on a listen stream for a terminal task the
// reference server sends the acknowledgement, the task's state and its
// graceful close; drop-task-notification loses the push,
// duplicate-task-notification sends it twice, drop-listen-ack loses the
// acknowledgement, each on the wire of a real HTTP server, and every
// other message passes.
func TestListenFaults26(t *testing.T) {
	ack, push := rev.NotificationSubscriptionsAcknowledged, tasks.NotificationStatus
	for _, tc := range []struct {
		spec string
		want []string
	}{
		{"", []string{ack, push, "response"}},
		{"drop-task-notification", []string{ack, "response"}},
		{"duplicate-task-notification", []string{ack, push, push, "response"}},
		{"drop-listen-ack", []string{push, "response"}},
	} {
		t.Run(tc.spec, func(t *testing.T) {
			set := setOf(t, tc.spec)
			w := newWire26(t, dualEra(t, set))
			id := w.createTask()
			// The first listen ends once the task's terminal state was
			// pushed (or dropped): the task is terminal from then on.
			if a := w.listen(id); a.err != nil || a.response() == nil {
				t.Fatalf("first listen: %+v", a)
			}
			a := w.listen(id)
			if a.err != nil || !slices.Equal(a.methods(), tc.want) {
				t.Fatalf("listen stream %v (%v), want %v", a.methods(), a.err, tc.want)
			}
			for _, m := range a.msgs {
				if m.Method != push {
					continue
				}
				var d tasks.StatusParams
				if err := json.Unmarshal(m.Params, &d); err != nil || d.TaskID != id || !d.Status.IsTerminal() {
					t.Errorf("push %s, want the terminal state of %s", m.Params, id)
				}
			}
		})
	}
}

// TestWrongReplica26: wrong-replica answers a tasks/get -32602 "task not
// found" as a replica without the task would, without reaching the
// server; the next tasks/get, let through, finds the task.
func TestWrongReplica26(t *testing.T) {
	set := setOf(t, "wrong-replica:count=1")
	w := newWire26(t, dualEra(t, set))
	id := w.createTask()
	a := w.getTask(id)
	r := a.response()
	if a.err != nil || a.status != http.StatusOK || r == nil || r.Error == nil || r.Error.Code != mcp.CodeInvalidParams ||
		r.ID.String() != strconv.Itoa(w.id) {
		t.Fatalf("mis-routed tasks/get: %+v (%+v), want 200 and -32602 for id %d", a, r, w.id)
	}
	if got, want := verbsOf(set), []string{"wrong-replica status tasks/get"}; !slices.Equal(got, want) {
		t.Fatalf("decisions %v, want %v", got, want)
	}
	if a := w.getTask(id); a.response() == nil || a.response().Error != nil {
		t.Fatalf("tasks/get routed right: %+v, want the task", a)
	}
}

// TestWrongMcpName26: wrong-mcp-name rewrites the Mcp-Name of a request;
// the reference server refuses the mismatch with 400 and -32020 (2026-07-28
// Streamable HTTP, "Standard Headers").
func TestWrongMcpName26(t *testing.T) {
	set := setOf(t, "wrong-mcp-name:name=other,count=1")
	w := newWire26(t, dualEra(t, set))
	a := w.post(mcp.MethodToolsCall, `"name":"instant"`, "instant")
	r := a.response()
	if a.err != nil || a.status != http.StatusBadRequest || r == nil || r.Error == nil || r.Error.Code != rev.CodeHeaderMismatch {
		t.Fatalf("mangled call: %+v (%+v), want 400 and -32020", a, r)
	}
	if got := set.Applied(); len(got) != 1 || got[0].Action.String() != "header Mcp-Name rewritten to other" {
		t.Fatalf("decisions %+v", got)
	}
	w.createTask() // the next passes
}

// TestFaults26Pass2025: on a dual-era endpoint the faults of 2026-07-28,
// every one armed on every message, let a 2025-11-25 session and its task
// (tools/call, tasks/get, tasks/result) pass untouched.
func TestFaults26Pass2025(t *testing.T) {
	var bound []*Bound
	for _, k := range Builtin().ForRevision(mcp.Revision20260728, PlaceHTTP) {
		if k.Takes(mcp.Revision20251125) {
			continue
		}
		b, err := Builtin().Parse(k.Name)
		if err != nil {
			t.Fatal(err)
		}
		bound = append(bound, b)
	}
	if len(bound) != 6 {
		t.Fatalf("%d faults of 2026-07-28 alone, want 6", len(bound))
	}
	set := NewSet(1, bound...)
	ctx := context.Background()
	s, err := client.New(nil).Connect(ctx, &streamhttp.ClientTransport{URL: dualEra(t, set), MaxReconnects: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	res, err := s.CallTool(ctx, client.CallOptions{Name: "instant", Args: map[string]string{"text": "hi"}, Mode: client.ModeTask})
	if res == nil {
		t.Fatalf("2025-11-25 task call: %v", err)
	}
	if err != nil || !res.Complete || res.Answer != client.AnswerTask {
		t.Fatalf("2025-11-25 task call: answer %q, complete %v: %v", res.Answer, res.Complete, err)
	}
	if got := set.Applied(); len(got) != 0 {
		t.Errorf("faults of 2026-07-28 acted on 2025-11-25 traffic: %+v", got)
	}
}

// TestConnFaults26: through an in-process Conn of a 2026-07-28 client,
// drop-listen-ack loses the acknowledgement of a listen: the first
// message read is the task's state.
func TestConnFaults26(t *testing.T) {
	ctx := context.Background()
	u := dualEra(t, nil)
	id := newWire26(t, u).createTask()
	inner, err := (&streamhttp.ClientTransport{URL: u, Revision: mcp.Revision20260728}).Connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	set := setOf(t, "drop-listen-ack")
	c := Conn(inner, set, nil)
	defer c.Close()
	m := writeRead(t, c, `{"jsonrpc":"2.0","id":9,"method":"subscriptions/listen","params":{`+meta26+
		`,"notifications":{"taskIds":[`+strconv.Quote(id)+`]}}}`)
	if m.Method != tasks.NotificationStatus {
		t.Fatalf("first message read %s %s, want %s", m.Method, m.Params, tasks.NotificationStatus)
	}
	if got, want := verbsOf(set), []string{"drop-listen-ack drop " + rev.NotificationSubscriptionsAcknowledged}; !slices.Equal(got, want) {
		t.Fatalf("decisions %v, want %v", got, want)
	}
}

// TestRevisionRefusal: a spec confined with revision= to a revision its
// fault, a parameter or a selector has no meaning on is refused when it
// is bound, on one line naming the part; the rest are taken.
func TestRevisionRefusal(t *testing.T) {
	for _, tc := range []struct{ spec, want string }{
		{"drop-partial:revision=2026-07-28", `revision=2026-07-28: drop-partial has no meaning on 2026-07-28: it drops a SEP-2679 partial`},
		{"duplicate-seqnr:revision=2026-07-28", `duplicate-seqnr has no meaning on 2026-07-28`},
		{"server-restart:revision=2026-07-28", `server-restart has no meaning on 2026-07-28: its point is the loss of the sessions`},
		{"drop-response:seqnr=1,revision=2026-07-28", `seqnr=1 and revision=2026-07-28: no meaning on 2026-07-28: seqnr= addresses SEP-1905 segments`},
		{"delay:seq=0,revision=2026-07-28", `seq=0 and revision=2026-07-28: no meaning`},
		{"drop-sse-event:stream=get,revision=2026-07-28", `stream=get and revision=2026-07-28: no meaning on 2026-07-28: stream=get addresses the GET stream`},
		{"ttl-expiry:revision=2026-07-28", `ttl=1s and revision=2026-07-28: no meaning on 2026-07-28: ttl= rewrites params.task.ttl`},
		{"ttl-expiry:ttl=5ms,revision=2026-07-28", `ttl=5ms and revision=2026-07-28`},
		{"cut-request:revision=2025-11-25", `cut-request has no meaning on 2025-11-25`},
		{"wrong-replica:revision=2025-11-25", `wrong-replica has no meaning on 2025-11-25`},
		{"drop-task-notification:revision=2025-11-25", `drop-task-notification has no meaning on 2025-11-25`},
		{"cut-request:when=later", `when=later: want one of [before-create after-create]`},
	} {
		_, err := Builtin().Parse(tc.spec)
		var se *SpecError
		if !errors.As(err, &se) || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("Parse(%q) = %v, want one line with %q", tc.spec, err, tc.want)
		}
	}
	for _, spec := range []string{
		"drop-partial:revision=2025-11-25", "drop-response:revision=2026-07-28", "cut-request:revision=2026-07-28",
		"drop-sse-event:stream=post,revision=2026-07-28", "ttl-expiry:advance=1s,revision=2026-07-28",
		"duplicate-seqnr:seqnr=2", "wrong-mcp-name:name=x,revision=2026-07-28",
	} {
		if _, err := Builtin().Parse(spec); err != nil {
			t.Errorf("Parse(%q): %v", spec, err)
		}
	}
}

// FuzzAct26: the faults of 2026-07-28 take any message of that revision,
// at any place, without a panic, and act only on one they address.
func FuzzAct26(f *testing.F) {
	f.Add([]byte(`{"jsonrpc":"2.0","id":1,"result":{"resultType":"task","taskId":"t"}}`), uint8(0))
	f.Add([]byte(`{"jsonrpc":"2.0","method":"notifications/tasks","params":{"taskId":"t"}}`), uint8(1))
	f.Add([]byte(`{"jsonrpc":"2.0","id":"x","method":"tasks/get","params":{}}`), uint8(2))
	f.Add([]byte(`{"jsonrpc":"2.0","id":null,"method":"tools/call"}`), uint8(3))
	f.Add([]byte(`not json`), uint8(4))
	var kinds []Kind
	for _, k := range Builtin().Kinds() {
		if !k.Takes(mcp.Revision20251125) {
			kinds = append(kinds, k)
		}
	}
	places := []string{PlaceHTTP, PlaceStdio, PlaceConn}
	f.Fuzz(func(t *testing.T, raw []byte, pick uint8) {
		k := kinds[int(pick)%len(kinds)]
		b, err := Builtin().Parse(k.Name)
		if err != nil {
			t.Fatal(err)
		}
		for _, stream := range []string{StreamRequest, StreamPost, StreamStdout} {
			m := NewMsg(places[int(pick/8)%len(places)], stream, stream, 1, traces.DirServerToClient, raw)
			m.Revision = mcp.Revision20260728
			a, ok := b.Fault.Act(m, nil)
			if ok && m.RPC == nil {
				t.Fatalf("%s acted (%v) on a message that is no JSON-RPC: %q", k.Name, a, raw)
			}
			if ok && a.Verb == Status && !json.Valid(a.Raw) {
				t.Fatalf("%s answers with a body that is no JSON: %q", k.Name, a.Raw)
			}
		}
	})
}

// TestLoseResponse26: on 2026-07-28 a response is lost as its stream
// breaks, and disconnect:at=mid on the answer of a tools/call does that
// (its JSON body breaks off): the stateless client re-issues the call with a new id, and the
// server runs the tool twice (whether it should have is the judge's
// business; the fault only loses). drop-response, by contrast, sends a
// JSON answer's head with an empty body, which a client of this revision
// takes for a bad answer (-32700), not a lost one: it does not re-issue.
func TestLoseResponse26(t *testing.T) {
	for _, tc := range []struct {
		spec     string
		reissued bool
	}{
		{"disconnect:method=tools/call,stream=post,at=mid,revision=2026-07-28,count=1", true},
		{"drop-response:method=tools/call,revision=2026-07-28,count=1", false},
	} {
		t.Run(tc.spec, func(t *testing.T) {
			set := setOf(t, tc.spec)
			var mu sync.Mutex
			calls := 0
			u := refserver.StartHTTP(t, &refserver.Options{Handler: func(h http.Handler) http.Handler {
				counted := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					if r.Header.Get("Mcp-Method") == mcp.MethodToolsCall {
						mu.Lock()
						calls++
						mu.Unlock()
					}
					h.ServeHTTP(w, r)
				})
				return Handler(counted, set, nil)
			}}).URL
			ctx := context.Background()
			s, err := client.New(nil).ConnectStateless(ctx, &streamhttp.ClientTransport{URL: u, Revision: mcp.Revision20260728})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			res, err := s.CallTool(ctx, client.StatelessCallOptions{Name: "echo", Args: map[string]string{"text": "once"}, NoTasks: true})
			if res == nil {
				t.Fatalf("call: %v", err)
			}
			if got := len(set.Applied()); got != 1 {
				t.Fatalf("%d decisions, want 1", got)
			}
			mu.Lock()
			defer mu.Unlock()
			if !tc.reissued {
				if err == nil || res.Complete || len(res.Reissues) != 0 || calls != 1 {
					t.Errorf("call: complete %v, re-issues %v, %d tools/call, %v; want a failed call, sent once",
						res.Complete, res.Reissues, calls, err)
				}
				return
			}
			if err != nil || !res.Complete || len(res.Reissues) != 1 {
				t.Fatalf("call: complete %v, re-issues %v, %v; want complete after one re-issue", res.Complete, res.Reissues, err)
			}
			if calls != 2 {
				t.Errorf("the server got %d tools/call, want 2 (the call and its re-issue)", calls)
			}
		})
	}
}

// TestRestartPasses2026: server-restart, whose point is the sessions
// lost, acts on a client message of 2025-11-25 and lets one of
// 2026-07-28 pass; a message of no known revision still reaches it.
func TestRestartPasses2026(t *testing.T) {
	set := setOf(t, "server-restart")
	for _, tc := range []struct {
		r    mcp.Revision
		acts bool
	}{{mcp.Revision20251125, true}, {mcp.Revision20260728, false}, {"", true}} {
		m := NewMsg(PlaceConn, StreamStdin, StreamStdin, 1, traces.DirClientToServer, []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`))
		m.Revision = tc.r
		if got := len(set.Decide(m)) == 1; got != tc.acts {
			t.Errorf("revision %q: acted %v, want %v", tc.r, got, tc.acts)
		}
	}
}

// TestDeterminism26: the faults of 2026-07-28 drawn with p= take the same
// decisions on the same messages with the same seed, and others with
// another seed.
func TestDeterminism26(t *testing.T) {
	decide := func(seed uint64) []string {
		var bound []*Bound
		for _, spec := range []string{"drop-task-notification:p=0.5", "duplicate-task-notification:p=0.3", "drop-listen-ack:p=0.5", "cut-request:p=0.5"} {
			b, err := Builtin().Parse(spec)
			if err != nil {
				t.Fatal(err)
			}
			bound = append(bound, b)
		}
		set := NewSet(seed, bound...)
		var out []string
		for i := range 200 {
			raw := `{"jsonrpc":"2.0","method":"notifications/tasks","params":{"taskId":"t` + strconv.Itoa(i%7) + `","status":"working"}}`
			switch i % 3 {
			case 1:
				raw = `{"jsonrpc":"2.0","method":"notifications/subscriptions/acknowledged","params":{}}`
			case 2:
				raw = `{"jsonrpc":"2.0","id":` + strconv.Itoa(i) + `,"result":{"resultType":"task","taskId":"t"}}`
			}
			m := NewMsg(PlaceHTTP, StreamPost, "post:s0/"+strconv.Itoa(i/10), i%10+1, traces.DirServerToClient, []byte(raw))
			m.Revision = mcp.Revision20260728
			for _, a := range set.Decide(m) {
				out = append(out, strconv.Itoa(i)+" "+a.Name+" "+a.Action.String())
			}
		}
		return out
	}
	first := decide(7)
	for range 20 {
		if again := decide(7); !slices.Equal(again, first) {
			t.Fatalf("seed 7 decided %v, then %v", first, again)
		}
	}
	if other := decide(8); slices.Equal(other, first) {
		t.Errorf("seeds 7 and 8 decided alike: %v", first)
	}
	if len(first) == 0 {
		t.Errorf("no decision")
	}
}
