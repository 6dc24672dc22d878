package server_test

import (
	"fmt"
	"net/http"
	"regexp"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/tasksim/tasksim/mcp"
	"github.com/tasksim/tasksim/mcp/server"
)

func TestTaskFields(t *testing.T) {
	url, _ := serve(t, &server.Options{PollInterval: 250 * time.Millisecond})
	c := connect(t, url, mcp.ClientCapabilities{})
	created := result[mcp.CreateTaskResult](c, mcp.MethodToolsCall, callParams(server.ToolSleep, map[string]any{"durationMs": 1}, &mcp.TaskParams{TTL: ptr[int64](90_000_000)}))
	task := created.Task
	// TASK-FIELDS: timestamps in ISO 8601, ttl present (capped at the max).
	for name, ts := range map[string]string{"createdAt": task.CreatedAt, "lastUpdatedAt": task.LastUpdatedAt} {
		if _, err := mcp.ParseTime(ts); err != nil {
			t.Errorf("%s %q is not ISO 8601: %v", name, ts, err)
		}
	}
	if task.TTL == nil || *task.TTL != server.DefaultMaxTTL.Milliseconds() {
		t.Errorf("ttl %v, want the max %d", task.TTL, server.DefaultMaxTTL.Milliseconds())
	}
	if task.PollInterval == nil || *task.PollInterval != 250 {
		t.Errorf("pollInterval %v, want 250", task.PollInterval)
	}
	// TASK-STATUS-TRANSITION: tasks begin working.
	if task.Status != mcp.StatusWorking {
		t.Errorf("new task status %s", task.Status)
	}
	// TASK-RESULT: blocks until terminal, then the result with related-task.
	res := result[mcp.CallToolResult](c, mcp.MethodTasksResult, map[string]any{"taskId": task.TaskID})
	if id, _ := res.Meta.RelatedTaskID(); id != task.TaskID {
		t.Errorf("related-task %q", id)
	}
	if _, ok := res.Meta[mcp.MetaCompletedAt]; !ok {
		t.Errorf("no %s meta", mcp.MetaCompletedAt)
	}
	done := result[mcp.Task](c, mcp.MethodTasksGet, map[string]any{"taskId": task.TaskID})
	if done.Status != mcp.StatusCompleted || done.LastUpdatedAt < done.CreatedAt {
		t.Errorf("after result: %+v", done)
	}
}

var uuidV4 = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)

func TestTaskIDEntropy(t *testing.T) {
	url, _ := serve(t, nil)
	c := connect(t, url, mcp.ClientCapabilities{})
	seen := map[string]bool{}
	for i := 0; i < 200; i++ {
		created := result[mcp.CreateTaskResult](c, mcp.MethodToolsCall, callParams(server.ToolInstant, nil, &mcp.TaskParams{}))
		id := created.Task.TaskID
		if !uuidV4.MatchString(id) || seen[id] {
			t.Fatalf("task id %q: not a fresh version 4 UUID (122 random bits)", id)
		}
		seen[id] = true
	}
}

func TestSessionIsolation(t *testing.T) {
	url, _ := serve(t, &server.Options{Clock: newSimClock()}) // the task works until the test ends
	a := connect(t, url, mcp.ClientCapabilities{})
	b := connect(t, url, mcp.ClientCapabilities{})
	created := result[mcp.CreateTaskResult](a, mcp.MethodToolsCall, callParams(server.ToolSleep, map[string]any{"durationMs": 5000}, &mcp.TaskParams{}))
	id := created.Task.TaskID
	for _, m := range []string{mcp.MethodTasksGet, mcp.MethodTasksResult, mcp.MethodTasksCancel} {
		e := rpcError(b, m, map[string]any{"taskId": id})
		if e.Code != mcp.CodeInvalidParams || e.Message != "Failed to retrieve task: Task not found" {
			t.Errorf("%s of another session's task: %d %q", m, e.Code, e.Message)
		}
	}
	if l := result[mcp.ListTasksResult](b, mcp.MethodTasksList, nil); len(l.Tasks) != 0 {
		t.Errorf("tasks/list of session b shows %d tasks of session a", len(l.Tasks))
	}
	if got := result[mcp.Task](a, mcp.MethodTasksGet, map[string]any{"taskId": id}); got.Status != mcp.StatusWorking {
		t.Errorf("owner sees status %s", got.Status)
	}
}

func TestTTLExpiryInjectedClock(t *testing.T) {
	clk := newSimClock()
	url, _ := serve(t, &server.Options{Clock: clk})
	c := connect(t, url, mcp.ClientCapabilities{})
	done := result[mcp.CreateTaskResult](c, mcp.MethodToolsCall, callParams(server.ToolInstant, nil, &mcp.TaskParams{TTL: ptr[int64](1000)}))
	running := result[mcp.CreateTaskResult](c, mcp.MethodToolsCall, callParams(server.ToolSleep, map[string]any{"durationMs": 60000}, &mcp.TaskParams{TTL: ptr[int64](2000)}))
	result[mcp.CallToolResult](c, mcp.MethodTasksResult, map[string]any{"taskId": done.Task.TaskID}) // until terminal

	clk.advance(999 * time.Millisecond)
	if got := result[mcp.Task](c, mcp.MethodTasksGet, map[string]any{"taskId": done.Task.TaskID}); got.Status != mcp.StatusCompleted {
		t.Fatalf("before its ttl the task is %s", got.Status)
	}
	// Expiry deletes the task as the clock passes the ttl: the next
	// lookup already says so.
	clk.advance(time.Millisecond)
	expectExpired(t, c, done.Task.TaskID)
	if l := result[mcp.ListTasksResult](c, mcp.MethodTasksList, nil); len(l.Tasks) != 1 || l.Tasks[0].TaskID != running.Task.TaskID {
		t.Errorf("tasks/list after expiry: %+v", l.Tasks)
	}
	// A running task expires too. A tasks/result for it is answered with
	// the same error whether it reached the server before the expiry (and
	// waited) or after; TestExpiryAnswersWaiter covers the wait itself.
	blocked := make(chan *answer, 1)
	req := c.request(mcp.MethodTasksResult, map[string]any{"taskId": running.Task.TaskID})
	go func() { blocked <- c.send(req) }()
	clk.advance(time.Second)
	expectExpired(t, c, running.Task.TaskID)
	if e := (<-blocked).last().Error; e == nil || e.Code != mcp.CodeInvalidParams || e.Message != "Failed to retrieve task: Task has expired" {
		t.Errorf("tasks/result of an expired task answered %v", e)
	}
}

// expectExpired checks that tasks/get says the task expired.
func expectExpired(t *testing.T, c *client, id string) {
	t.Helper()
	e := rpcError(c, mcp.MethodTasksGet, map[string]any{"taskId": id})
	if e.Code != mcp.CodeInvalidParams || e.Message != "Failed to retrieve task: Task has expired" {
		t.Fatalf("expired task: %d %q", e.Code, e.Message)
	}
}

func TestTasksListPagination(t *testing.T) {
	url, _ := serve(t, &server.Options{ListPageSize: 7})
	c := connect(t, url, mcp.ClientCapabilities{})
	var want []string
	for i := 0; i < 20; i++ {
		created := result[mcp.CreateTaskResult](c, mcp.MethodToolsCall, callParams(server.ToolInstant, nil, &mcp.TaskParams{}))
		want = append(want, created.Task.TaskID)
	}
	var got []string
	cursor := ""
	for pages := 0; ; pages++ {
		if pages > 5 {
			t.Fatal("pagination does not end")
		}
		l := result[mcp.ListTasksResult](c, mcp.MethodTasksList, map[string]any{"cursor": cursor})
		for _, task := range l.Tasks {
			got = append(got, task.TaskID)
		}
		if l.NextCursor == "" {
			break
		}
		cursor = l.NextCursor
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("tasks/list pages in creation order (-want +got):\n%s", diff)
	}
	if e := rpcError(c, mcp.MethodTasksList, map[string]any{"cursor": "not-a-cursor"}); e.Code != mcp.CodeInvalidParams {
		t.Errorf("invalid cursor: code %d", e.Code)
	}
}

func TestMaxTasksPerSession(t *testing.T) {
	url, _ := serve(t, &server.Options{MaxTasksPerSession: 2, Clock: newSimClock()}) // the tasks stay live
	c := connect(t, url, mcp.ClientCapabilities{})
	for i := 0; i < 2; i++ {
		result[mcp.CreateTaskResult](c, mcp.MethodToolsCall, callParams(server.ToolSleep, map[string]any{"durationMs": 60000}, &mcp.TaskParams{}))
	}
	e := rpcError(c, mcp.MethodToolsCall, callParams(server.ToolSleep, nil, &mcp.TaskParams{}))
	if e.Code != mcp.CodeInternalError {
		t.Errorf("over the limit: code %d %q", e.Code, e.Message)
	}
	other := connect(t, url, mcp.ClientCapabilities{})
	result[mcp.CreateTaskResult](other, mcp.MethodToolsCall, callParams(server.ToolInstant, nil, &mcp.TaskParams{}))
}

// TASK-SURVIVES-REQUEST and HTTP-RESUME-*: a streaming answer whose
// connection is cut twice; the task runs on, and GET with Last-Event-ID
// replays exactly what was missed on that stream.
func TestStreamCutTwiceResumes(t *testing.T) {
	clk := newSimClock()
	url, _ := serve(t, &server.Options{Clock: clk})
	c := connect(t, url, wantPartials)
	get := collect(c.listen())
	window := clk.fireLater(t, 100*time.Millisecond, server.DefaultImmediateWindow)
	s := c.open(mcp.MethodToolsCall, callParams(server.ToolSlowText, map[string]any{"chunks": 6, "chunkSize": 8, "intervalMs": 100}, modes(mcp.ModeStreaming)))
	<-window
	var seen []int64
	take := func(s *stream) {
		r := decode[mcp.ToolCallResponse](t, s.next().Result)
		for _, seg := range r.PartialContent {
			seen = append(seen, seg.SeqNr)
		}
	}
	initial := decode[mcp.ToolCallResponse](t, s.next().Result)
	ms := time.Millisecond
	clk.fire(t, 100*ms)
	take(s)
	s.cut()
	clk.fire(t, 200*ms) // chunks 2 and 3 while cut
	clk.fire(t, 300*ms)
	clk.waitTimer(t, 400*ms) // the tool emitted chunk 3 and waits for 4
	r1 := c.resume(s.lastID)
	take(r1)
	take(r1)
	r1.cut()
	clk.fire(t, 400*ms) // chunk 4 while cut again
	clk.waitTimer(t, 500*ms)
	r2 := c.resume(r1.lastID)
	take(r2)
	clk.fire(t, 500*ms) // 5, 6 and the end, live
	clk.fire(t, 600*ms)
	for _, m := range r2.rest() {
		r := decode[mcp.ToolCallResponse](t, m.Result)
		if m.Method != "" {
			t.Errorf("resumed stream carries %s, which belongs to another stream", m.Method)
		}
		for _, seg := range r.PartialContent {
			seen = append(seen, seg.SeqNr)
		}
	}
	if diff := cmp.Diff([]int64{1, 2, 3, 4, 5, 6}, seen); diff != "" {
		t.Errorf("seqNr over two cuts (-want +got):\n%s", diff)
	}
	// Partials went to the GET stream only (HTTP-NO-BROADCAST).
	msgs := get.waitFor(t, "terminal status", func(ms []*mcp.Message) bool { return terminalStatus(t, ms, initial.Task.TaskID) })
	if n := len(partialsOf(t, msgs, initial.Task.TaskID)); n != 6 {
		t.Errorf("%d partials on the GET stream, want 6", n)
	}
}

// TestErrors covers every JSON-RPC error the server answers.
func TestErrors(t *testing.T) {
	url, _ := serve(t, nil)
	c := connect(t, url, mcp.ClientCapabilities{})
	cases := []struct {
		name   string
		method string
		params any
		code   int
	}{
		{"unknown method", "tasks/frobnicate", nil, mcp.CodeMethodNotFound},
		{"unknown tool", mcp.MethodToolsCall, callParams("nope", nil, nil), mcp.CodeInvalidParams},
		{"tool name missing", mcp.MethodToolsCall, map[string]any{}, mcp.CodeInvalidParams},
		{"name of the wrong type", mcp.MethodToolsCall, map[string]any{"name": 7}, mcp.CodeInvalidParams},
		{"bad arguments", mcp.MethodToolsCall, callParams(server.ToolSlowText, map[string]any{"chunks": "many"}, nil), mcp.CodeInvalidParams},
		{"out of range arguments", mcp.MethodToolsCall, callParams(server.ToolSlowText, map[string]any{"chunkSize": 0}, nil), mcp.CodeInvalidParams},
		{"task for a tool that forbids it", mcp.MethodToolsCall, callParams(server.ToolEcho, nil, &mcp.TaskParams{}), mcp.CodeMethodNotFound},
		{"no task for a tool that requires one", mcp.MethodToolsCall, callParams(server.ToolTaskOnly, nil, nil), mcp.CodeMethodNotFound},
		{"tasks/get unknown", mcp.MethodTasksGet, map[string]any{"taskId": "nope"}, mcp.CodeInvalidParams},
		{"tasks/get no id", mcp.MethodTasksGet, map[string]any{}, mcp.CodeInvalidParams},
		{"tasks/result unknown", mcp.MethodTasksResult, map[string]any{"taskId": "nope"}, mcp.CodeInvalidParams},
		{"tasks/cancel unknown", mcp.MethodTasksCancel, map[string]any{"taskId": "nope"}, mcp.CodeInvalidParams},
		{"initialize without version", mcp.MethodInitialize, map[string]any{}, mcp.CodeInvalidParams},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := rpcError(c, tc.method, tc.params)
			if e.Code != tc.code || e.Message == "" {
				t.Errorf("code %d %q, want %d with a message", e.Code, e.Message, tc.code)
			}
		})
	}
	// TASK-CANCEL-TERMINAL on a completed task.
	created := result[mcp.CreateTaskResult](c, mcp.MethodToolsCall, callParams(server.ToolInstant, nil, &mcp.TaskParams{}))
	result[mcp.CallToolResult](c, mcp.MethodTasksResult, map[string]any{"taskId": created.Task.TaskID}) // until terminal
	e := rpcError(c, mcp.MethodTasksCancel, map[string]any{"taskId": created.Task.TaskID})
	if e.Code != mcp.CodeInvalidParams || e.Message != "Cannot cancel task: already in terminal status 'completed'" {
		t.Errorf("cancel completed: %d %q", e.Code, e.Message)
	}
	// Parse errors and invalid requests over HTTP: 400 with the JSON-RPC error.
	for _, raw := range []struct {
		body string
		code int
	}{{`{"jsonrpc":"2.0","id":1,"method":`, mcp.CodeParseError}, {`{"jsonrpc":"1.0","id":1,"method":"ping"}`, mcp.CodeInvalidRequest}} {
		a := c.do(c.httpReq(http.MethodPost, []byte(raw.body)))
		if a.status != http.StatusBadRequest {
			t.Errorf("%s: status %d, want 400", raw.body, a.status)
		}
		if e := a.last().Error; e == nil || e.Code != raw.code {
			t.Errorf("%s: error %v, want code %d", raw.body, e, raw.code)
		}
	}
}

func TestPlainCallsAndTools(t *testing.T) {
	url, srv := serve(t, nil)
	c := connect(t, url, mcp.ClientCapabilities{})
	list := result[mcp.ListToolsResult](c, mcp.MethodToolsList, nil)
	if len(list.Tools) != len(srv.Tools()) {
		t.Fatalf("tools/list has %d tools", len(list.Tools))
	}
	for _, tool := range list.Tools {
		if tool.Description == "" || len(tool.InputSchema) == 0 {
			t.Errorf("tool %s lacks a description or input schema", tool.Name)
		}
	}
	res := result[mcp.CallToolResult](c, mcp.MethodToolsCall, callParams(server.ToolSlowText, map[string]any{"chunks": 3, "chunkSize": 9, "intervalMs": 0}, nil))
	if diff := cmp.Diff(chunkTexts(3, 9), texts(res.Content)); diff != "" {
		t.Errorf("plain call (-want +got):\n%s", diff)
	}
	fail := result[mcp.CallToolResult](c, mcp.MethodToolsCall, callParams(server.ToolSlowText, map[string]any{"chunks": 3, "intervalMs": 0, "failAfter": 1}, nil))
	if !fail.IsError || len(fail.Content) != 2 {
		t.Errorf("failing plain call: %+v", fail)
	}
	if got := result[map[string]any](c, mcp.MethodPing, nil); len(got) != 0 {
		t.Errorf("ping answered %v, want {}", got)
	}
	echo := result[mcp.CallToolResult](c, mcp.MethodToolsCall, callParams(server.ToolEcho, map[string]any{"a": 1}, nil))
	if fmt.Sprint(texts(echo.Content)) != `[{"a":1}]` {
		t.Errorf("echo: %v", texts(echo.Content))
	}
}
