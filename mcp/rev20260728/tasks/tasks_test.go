package tasks_test

import (
	"encoding/json"
	"errors"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/tasksim/tasksim/mcp"
	rev "github.com/tasksim/tasksim/mcp/rev20260728"
	"github.com/tasksim/tasksim/mcp/rev20260728/tasks"
)

func ms(n int64) *int64 { return &n }

func base(status tasks.Status) tasks.Task {
	return tasks.Task{TaskID: "t1", Status: status, CreatedAt: "2025-11-25T10:30:00Z", LastUpdatedAt: "2025-11-25T10:40:00Z", TTLMs: ms(60000), PollIntervalMs: ms(5000)}
}

func TestDetailedTaskValidate(t *testing.T) {
	result := json.RawMessage(`{"content":[],"isError":true}`)
	rpcErr := &mcp.Error{Code: -32603, Message: "boom"}
	input := rev.InputRequests{"name": {Method: rev.MethodElicitationCreate}}
	for _, tc := range []struct {
		name  string
		d     tasks.DetailedTask
		valid bool
	}{
		{"working", tasks.DetailedTask{Task: base(tasks.Working)}, true},
		{"working with a result", tasks.DetailedTask{Task: base(tasks.Working), Result: result}, false},
		{"input_required with requests", tasks.DetailedTask{Task: base(tasks.InputRequired), InputRequests: input}, true},
		{"input_required without requests", tasks.DetailedTask{Task: base(tasks.InputRequired)}, false},
		{"completed with a tool error", tasks.DetailedTask{Task: base(tasks.Completed), Result: result}, true},
		{"completed without result", tasks.DetailedTask{Task: base(tasks.Completed)}, false},
		{"completed with an error", tasks.DetailedTask{Task: base(tasks.Completed), Result: result, Error: rpcErr}, false},
		{"failed with an error", tasks.DetailedTask{Task: base(tasks.Failed), Error: rpcErr}, true},
		{"failed without error", tasks.DetailedTask{Task: base(tasks.Failed)}, false},
		{"failed with a result", tasks.DetailedTask{Task: base(tasks.Failed), Error: rpcErr, Result: result}, false},
		{"cancelled", tasks.DetailedTask{Task: base(tasks.Cancelled)}, true},
		{"cancelled with requests", tasks.DetailedTask{Task: base(tasks.Cancelled), InputRequests: input}, false},
		{"unknown status", tasks.DetailedTask{Task: base("done")}, false},
		{"no id", tasks.DetailedTask{Task: tasks.Task{Status: tasks.Working, CreatedAt: "x", LastUpdatedAt: "x"}}, false},
		{"no timestamps", tasks.DetailedTask{Task: tasks.Task{TaskID: "t", Status: tasks.Working}}, false},
		{"unlimited ttl", tasks.DetailedTask{Task: func() tasks.Task { t := base(tasks.Working); t.TTLMs = nil; return t }()}, true},
		{"zero ttl", tasks.DetailedTask{Task: func() tasks.Task { t := base(tasks.Working); t.TTLMs = ms(0); return t }()}, false},
		{"zero poll interval", tasks.DetailedTask{Task: func() tasks.Task { t := base(tasks.Working); t.PollIntervalMs = ms(0); return t }()}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := tc.d.Validate(); (err == nil) != tc.valid {
				t.Fatalf("Validate = %v; want valid=%v", err, tc.valid)
			}
		})
	}
}

// TestResultTypeOfTaskResults checks the discriminator rules on the
// results of the extension (Tasks, "Polymorphic Results", "Task Polling"):
// "task" only on a CreateTaskResult, "complete" on tasks/get.
func TestResultTypeOfTaskResults(t *testing.T) {
	const created = `{"resultType":"task","taskId":"t1","status":"working","createdAt":"2025-11-25T10:30:00Z","lastUpdatedAt":"2025-11-25T10:30:00Z","ttlMs":null}`
	// The draft copy of the extension (ext-tasks specification/draft/tasks.md
	// @e434597, "Task Execution Errors") shows a failed tasks/get result
	// with resultType "task"; the dated copy and the normative text say
	// "complete". Such a result is invalid.
	const draftFailed = `{"resultType":"task","taskId":"t1","status":"failed","createdAt":"2025-11-25T10:30:00Z","lastUpdatedAt":"2025-11-25T10:40:00Z","ttlMs":3600000,"error":{"code":-32603,"message":"API rate limit exceeded"}}`

	var c tasks.CreateTaskResult
	if err := json.Unmarshal([]byte(created), &c); err != nil || c.Validate() != nil {
		t.Fatalf("create result: %v, %v", err, c.Validate())
	}
	if rt, err := rev.ResultTypeOf(json.RawMessage(created), tasks.ResultTypeTask); err != nil || rt != tasks.ResultTypeTask {
		t.Fatalf("ResultTypeOf(create) = %q, %v", rt, err)
	}
	if _, err := rev.ResultTypeOf(json.RawMessage(created)); !errors.Is(err, rev.ErrUnknownResultType) {
		t.Fatalf("a client without the extension read %q: %v", "task", err)
	}
	c.ResultType = rev.ResultComplete
	if c.Validate() == nil {
		t.Fatal("a CreateTaskResult with resultType complete validated")
	}

	var g tasks.GetTaskResult
	if err := json.Unmarshal([]byte(draftFailed), &g); err != nil {
		t.Fatal(err)
	}
	if g.Validate() == nil {
		t.Fatal(`a tasks/get result with resultType "task" validated`)
	}
	g.ResultType = rev.ResultComplete
	if err := g.Validate(); err != nil {
		t.Fatalf("the dated copy's failed result: %v", err)
	}
}

func TestCapability(t *testing.T) {
	if tasks.Declared(nil) || tasks.Declared(&rev.ClientCapabilities{}) {
		t.Fatal("declared without the extension")
	}
	caps := rev.ClientCapabilities{}.WithExtension(tasks.ExtensionID)
	if !tasks.Declared(&caps) {
		t.Fatal("not declared with the extension")
	}
	// The 2025-11-25 capability does not count (SEP-2663, "Backward
	// Compatibility"): it is not even a member of this revision's type.
	var legacy rev.ClientCapabilities
	if err := json.Unmarshal([]byte(`{"tasks":{"requests":{"tools":{"call":{}}}}}`), &legacy); err != nil || tasks.Declared(&legacy) {
		t.Fatalf("legacy tasks capability: %v, declared=%v", err, tasks.Declared(&legacy))
	}
	e := tasks.MissingCapability()
	if e.Code != rev.CodeMissingRequiredClientCapability ||
		string(e.Data) != `{"requiredCapabilities":{"extensions":{"io.modelcontextprotocol/tasks":{}}}}` {
		t.Fatalf("MissingCapability = %d %s", e.Code, e.Data)
	}
}

func TestRemovedAndReservedMethods(t *testing.T) {
	for m, want := range map[string]bool{"tasks/result": true, "tasks/list": true, "notifications/tasks/status": true, "tasks/get": false, "tasks/update": false, "tasks/cancel": false, "notifications/tasks": false} {
		if got := tasks.IsRemovedMethod(m); got != want {
			t.Errorf("IsRemovedMethod(%q) = %v", m, got)
		}
	}
	for m, want := range map[string]bool{"tasks/stream": true, "notifications/tasks/partial": true, "notifications/tasks": false, "tools/call": false, "taskslist": false} {
		if got := tasks.IsReserved(m); got != want {
			t.Errorf("IsReserved(%q) = %v", m, got)
		}
	}
}

func TestTaskIDsInListenFilter(t *testing.T) {
	var f rev.SubscriptionFilter
	if err := json.Unmarshal([]byte(`{"toolsListChanged":true,"taskIds":["a","b"]}`), &f); err != nil {
		t.Fatal(err)
	}
	ids, err := tasks.TaskIDs(f)
	if err != nil || !slices.Equal(ids, []string{"a", "b"}) {
		t.Fatalf("TaskIDs = %v, %v", ids, err)
	}
	g := tasks.WithTaskIDs(f, []string{"c"})
	if ids, _ := tasks.TaskIDs(f); !slices.Equal(ids, []string{"a", "b"}) {
		t.Fatal("WithTaskIDs changed its argument")
	}
	b, _ := json.Marshal(g)
	if string(b) != `{"taskIds":["c"],"toolsListChanged":true}` { // members of Extra are written in key order
		t.Fatalf("with c: %s", b)
	}
	b, _ = json.Marshal(tasks.WithTaskIDs(g, nil))
	if string(b) != `{"toolsListChanged":true}` {
		t.Fatalf("without ids: %s", b)
	}
	if err := json.Unmarshal([]byte(`{"taskIds":"a"}`), &f); err != nil {
		t.Fatal(err)
	}
	if _, err := tasks.TaskIDs(f); err == nil {
		t.Fatal("taskIds as a string read")
	}
}

// TestTasksRouting checks the Mcp-Name rule for tasks/* (Tasks,
// "Streamable HTTP: Routing Headers") through the core's header check.
func TestTasksRouting(t *testing.T) {
	rules := rev.CoreNameRules().With(tasks.NameRules())
	params := json.RawMessage(`{"taskId":"786512e2-9e0d-44bd-8f29-789f320fe840"}`)
	for _, m := range []string{tasks.MethodGet, tasks.MethodUpdate, tasks.MethodCancel} {
		h := http.Header{}
		if err := rev.SetHeaders(h, m, params, rev.ProtocolVersion, rules); err != nil {
			t.Fatal(err)
		}
		if h.Get(rev.HeaderName) != "786512e2-9e0d-44bd-8f29-789f320fe840" {
			t.Fatalf("%s: Mcp-Name %q", m, h.Get(rev.HeaderName))
		}
		if err := rev.CheckHeaders(h, m, params, rev.ProtocolVersion, rules); err != nil {
			t.Fatalf("%s: %v", m, err)
		}
		h.Set(rev.HeaderName, "another-task")
		if err := rev.CheckHeaders(h, m, params, rev.ProtocolVersion, rules); !errors.Is(err, rev.ErrHeaderMismatch) {
			t.Fatalf("%s with another task's Mcp-Name: %v", m, err)
		}
		h.Del(rev.HeaderName)
		if err := rev.CheckHeaders(h, m, params, rev.ProtocolVersion, rules); !errors.Is(err, rev.ErrHeaderMismatch) {
			t.Fatalf("%s without Mcp-Name: %v", m, err)
		}
	}
}

func TestPollIntervalAndDeadline(t *testing.T) {
	task := base(tasks.Working)
	if got := task.PollInterval(time.Second); got != 5*time.Second {
		t.Errorf("PollInterval = %v", got)
	}
	task.PollIntervalMs = nil
	if got := task.PollInterval(time.Second); got != time.Second {
		t.Errorf("PollInterval without a hint = %v", got)
	}
	d, ok, err := task.Deadline()
	if want := time.Date(2025, 11, 25, 10, 31, 0, 0, time.UTC); err != nil || !ok || !d.Equal(want) {
		t.Errorf("Deadline = %v, %v, %v; want %v", d, ok, err, want)
	}
	task.TTLMs = nil
	if _, ok, err := task.Deadline(); ok || err != nil {
		t.Errorf("unlimited Deadline = %v, %v", ok, err)
	}
	task.TTLMs, task.CreatedAt = ms(1), "yesterday"
	if _, _, err := task.Deadline(); err == nil {
		t.Error("Deadline with an unreadable createdAt succeeded")
	}
}

// TestWireFieldNames checks the names the extension renamed from
// 2025-11-25 (ttl → ttlMs, pollInterval → pollIntervalMs) and that
// fractional milliseconds do not decode (the schema says integer).
func TestWireFieldNames(t *testing.T) {
	b, err := json.Marshal(base(tasks.Working))
	if err != nil {
		t.Fatal(err)
	}
	const want = `{"taskId":"t1","status":"working","createdAt":"2025-11-25T10:30:00Z","lastUpdatedAt":"2025-11-25T10:40:00Z","ttlMs":60000,"pollIntervalMs":5000}`
	if string(b) != want {
		t.Fatalf("%s; want %s", b, want)
	}
	unlimited := base(tasks.Working)
	unlimited.TTLMs, unlimited.PollIntervalMs = nil, nil
	if b, _ := json.Marshal(unlimited); string(b) != `{"taskId":"t1","status":"working","createdAt":"2025-11-25T10:30:00Z","lastUpdatedAt":"2025-11-25T10:40:00Z","ttlMs":null}` {
		t.Fatalf("unlimited: %s", b)
	}
	var task tasks.Task
	if err := json.Unmarshal([]byte(`{"taskId":"t","ttlMs":1.5}`), &task); err == nil {
		t.Fatal("fractional ttlMs decoded")
	}
}
