package interop

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tasksim/tasksim/traces"
)

// extTasksJSON is the line ext-tasks-client.mjs prints.
type extTasksJSON struct {
	Era              string   `json:"era"`
	ProtocolVersion  string   `json:"protocolVersion"`
	ServerExtensions []string `json:"serverExtensions"`
	Kind             string   `json:"kind"`
	TaskID           string   `json:"taskId"`
	Events           []string `json:"events"`
	Outcome          string   `json:"outcome"`
	Result           *struct {
		ResultType string `json:"resultType"`
		Content    []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		} `json:"content"`
		IsError bool `json:"isError"`
	} `json:"result"`
	Error     string `json:"error"`
	Cancelled *struct {
		Status string `json:"status"`
	} `json:"cancelled"`
	Wire     []extTasksPost `json:"wire"`
	Failures []string       `json:"failures"`
}

// extTasksPost is one HTTP POST the client sent, as it saw it.
type extTasksPost struct {
	ProtocolVersion string `json:"protocolVersion"`
	McpMethod       string `json:"mcpMethod"`
	McpName         string `json:"mcpName"`
	Method          string `json:"method"`
	Status          int    `json:"status"`
	ResultType      string `json:"resultType"`
	TaskStatus      string `json:"taskStatus"`
	ErrorCode       int    `json:"errorCode"`
	// Aborted: the client aborted the POST before its answer came (the
	// extension drops a poll in flight when the task ends, and closing
	// the transport aborts it).
	Aborted bool `json:"aborted"`
}

// extTasksPackages returns the Node 22 of the interop install, or skips
// the test when the tasks extension's client is not installed (a failure
// under TASKSIM_INTEROP=require).
func extTasksPackages(t *testing.T) (node string) {
	t.Helper()
	dir := nodeModules(t)
	for _, p := range []string{filepath.Join(".bin", "node"), filepath.Join("@modelcontextprotocol", "ext-tasks", "package.json"),
		filepath.Join("@modelcontextprotocol", "client", "package.json")} {
		if _, err := os.Stat(filepath.Join(dir, p)); err != nil {
			if os.Getenv("TASKSIM_INTEROP") == "require" {
				t.Fatalf("interop packages incomplete (%v): run (cd interop && npm ci)", err)
			}
			t.Skip("@modelcontextprotocol/ext-tasks not installed: run (cd interop && npm ci) to enable")
		}
	}
	return filepath.Join(dir, ".bin", "node")
}

// runExtTasksClient runs ext-tasks-client.mjs against url and returns what
// it printed.
func runExtTasksClient(t *testing.T, node, url string, args ...string) *extTasksJSON {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, node, append([]string{"ext-tasks-client.mjs", url}, args...)...).Output()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		t.Fatalf("run ext-tasks-client: %v", err)
	}
	var got extTasksJSON
	if jerr := json.Unmarshal(lastLine(out), &got); jerr != nil {
		t.Fatalf("ext-tasks-client output is not JSON: %v\n%s\nstderr: %s", jerr, out, stderrOf(err))
	}
	if err != nil || len(got.Failures) > 0 {
		t.Fatalf("ext-tasks-client failed (%v): %q\n%s\nstderr: %s", err, got.Failures, out, stderrOf(err))
	}
	return &got
}

// TestExtTasksClient: a real client of 2026-07-28 with the tasks
// extension, @modelcontextprotocol/ext-tasks 0.2.2 on the TypeScript SDK v2
// client (@modelcontextprotocol/client 2.4.0), drives tasksim serve through
// tasksim record over Streamable HTTP. It connects pinned to 2026-07-28
// (server/discover), calls slow_compute, which the server makes a task
// (resultType "task"), and polls tasks/get to the completed task and its
// inlined result; a second call is cancelled with tasks/cancel and read
// back cancelled; a tool error and a JSON-RPC error of the tool end as the
// extension's completed (isError) and failed outcomes. What the client
// saw and what the recorder wrote must agree: stateless requests with the
// routing headers, no session.
func TestExtTasksClient(t *testing.T) {
	node := extTasksPackages(t)
	url := startServe(t, "--poll-interval", "20ms")
	trace := filepath.Join(t.TempDir(), "ext-tasks.trace")
	proxy, stop := startRecorder(t, url, trace)

	const label = "ext-tasks 0.2.2"
	done := runExtTasksClient(t, node, proxy, "slow_compute", `{"seconds":0.05,"label":"`+label+`"}`)
	checkModernSession(t, "completed call", done)
	if done.Kind != "task" || done.TaskID == "" {
		t.Fatalf("the call is %q (task %q), want a task: %+v", done.Kind, done.TaskID, done)
	}
	if done.Outcome != "completed" || len(done.Events) == 0 || done.Events[len(done.Events)-1] != "completed" {
		t.Fatalf("outcome %q after statuses %q (%s), want completed", done.Outcome, done.Events, done.Error)
	}
	want := `Computed "` + label + `" in 0.05s`
	if r := done.Result; r == nil || r.ResultType != "complete" || r.IsError || len(r.Content) != 1 || r.Content[0].Type != "text" || r.Content[0].Text != want {
		t.Errorf("inlined result %+v, want resultType complete and the one text %q", r, want)
	}
	checkClientWire(t, done, "slow_compute", "tasks/get")
	if last := lastPost(done.Wire, "tasks/get"); last == nil || last.TaskStatus != "completed" {
		t.Errorf("the last tasks/get was answered %+v, want status completed", last)
	}

	cancelled := runExtTasksClient(t, node, proxy, "slow_compute", `{"seconds":3600,"label":"never"}`, "--cancel")
	checkModernSession(t, "cancelled call", cancelled)
	if cancelled.Kind != "task" || cancelled.Outcome != "cancelled" || cancelled.Cancelled == nil || cancelled.Cancelled.Status != "cancelled" {
		t.Fatalf("cancel: kind %q, outcome %q, read back %+v; want a task, cancelled, and tasks/get saying cancelled", cancelled.Kind, cancelled.Outcome, cancelled.Cancelled)
	}
	checkClientWire(t, cancelled, "slow_compute", "tasks/cancel")
	if c := lastPost(cancelled.Wire, "tasks/cancel"); c == nil || c.ResultType != "complete" || c.TaskStatus != "" {
		t.Errorf("tasks/cancel answered %+v, want the empty ack (resultType complete, no task)", c)
	}

	// A tool error is a completed task whose result has isError; a
	// JSON-RPC error of the tool is a failed task carrying the error
	// (Tasks, "Task Execution Errors"): the extension's outcomes.
	toolErr := runExtTasksClient(t, node, proxy, "failing_job", `{}`)
	checkClientWire(t, toolErr, "failing_job", "tasks/get")
	if r := toolErr.Result; toolErr.Outcome != "completed" || r == nil || !r.IsError || r.ResultType != "complete" {
		t.Errorf("failing_job: outcome %q, result %+v; want completed with isError", toolErr.Outcome, r)
	}
	failed := runExtTasksClient(t, node, proxy, "protocol_error_job", `{}`)
	checkClientWire(t, failed, "protocol_error_job", "tasks/get")
	if failed.Outcome != "failed" || !strings.Contains(failed.Error, "-32603") {
		t.Errorf("protocol_error_job: outcome %q, error %q; want failed with the -32603 error", failed.Outcome, failed.Error)
	}

	if err := stop(); err != nil {
		t.Fatalf("tasksim record on SIGINT: %v", err)
	}
	checkRecordedStateless(t, trace, map[string]string{done.TaskID: "completed", cancelled.TaskID: "cancelled",
		toolErr.TaskID: "completed", failed.TaskID: "failed"})
}

// checkModernSession checks that the client negotiated 2026-07-28 and saw
// the tasks extension in server/discover.
func checkModernSession(t *testing.T, name string, got *extTasksJSON) {
	t.Helper()
	if got.Era != "modern" || got.ProtocolVersion != "2026-07-28" || !strings.Contains(strings.Join(got.ServerExtensions, ","), "io.modelcontextprotocol/tasks") {
		t.Errorf("%s: era %q, version %q, server extensions %q; want modern, 2026-07-28, the tasks extension", name, got.Era, got.ProtocolVersion, got.ServerExtensions)
	}
}

// checkClientWire checks every POST the client sent: the version header,
// Mcp-Method equal to the body's method, Mcp-Name the tool or the task id
// (2026-07-28 Streamable HTTP, "Standard Request Headers"), each answered
// 200; server/discover first, then the tools/call of tool answered with a task,
// then the method follow (tasks/get or tasks/cancel) for that task.
func checkClientWire(t *testing.T, got *extTasksJSON, tool, follow string) {
	t.Helper()
	var methods []string
	for i, p := range got.Wire {
		methods = append(methods, p.Method)
		// A poll the client itself aborted has no answer to check; any
		// other POST must have been answered 200.
		answered := p.Status == 200 || (p.Aborted && p.Status == 0 && p.Method == "tasks/get")
		if p.ProtocolVersion != "2026-07-28" || p.McpMethod != p.Method || !answered {
			t.Errorf("POST %d %s: MCP-Protocol-Version %q, Mcp-Method %q, HTTP %d", i, p.Method, p.ProtocolVersion, p.McpMethod, p.Status)
		}
		wantName := ""
		switch {
		case p.Method == "tools/call":
			wantName = tool
		case strings.HasPrefix(p.Method, "tasks/"):
			wantName = got.TaskID
		}
		if p.McpName != wantName {
			t.Errorf("POST %d %s: Mcp-Name %q, want %q", i, p.Method, p.McpName, wantName)
		}
	}
	if len(got.Wire) == 0 || got.Wire[0].Method != "server/discover" {
		t.Errorf("POSTs %q: want server/discover first", methods)
	}
	call := lastPost(got.Wire, "tools/call")
	if call == nil || call.ResultType != "task" || call.TaskStatus != "working" {
		t.Errorf("tools/call answered %+v, want resultType task, status working", call)
	}
	if lastPost(got.Wire, follow) == nil {
		t.Errorf("POSTs %q: no %s", methods, follow)
	}
	for _, m := range methods {
		if m == "initialize" || m == "tasks/result" || m == "tasks/list" {
			t.Errorf("POSTs %q: %s has no place in 2026-07-28 with the tasks extension", methods, m)
		}
	}
}

func lastPost(wire []extTasksPost, method string) *extTasksPost {
	for i := len(wire) - 1; i >= 0; i-- {
		if wire[i].Method == method {
			return &wire[i]
		}
	}
	return nil
}

// checkRecordedStateless reads the trace tasksim record wrote and checks
// that it shows the 2026-07-28 requests: every request head carries
// MCP-Protocol-Version 2026-07-28 and Mcp-Method, every request body
// the per-request _meta with that version, no response a session id;
// server/discover, tools/call and tasks/get are there, and each task in
// final reached its status in a recorded answer.
func checkRecordedStateless(t *testing.T, path string, final map[string]string) {
	t.Helper()
	r, err := traces.Open(path)
	if err != nil {
		t.Fatalf("open trace: %v", err)
	}
	defer r.Close()
	seen := map[string]int{}
	reached := map[string]bool{}
	heads := 0
	for rec, err := range r.Records() {
		if err != nil {
			t.Fatalf("read trace: %v", err)
		}
		switch {
		case rec.Kind == traces.KindRequestHead && rec.HTTP.Method == "POST":
			heads++
			if v := header(rec.HTTP, "Mcp-Protocol-Version"); v != "2026-07-28" {
				t.Errorf("record %d: POST with MCP-Protocol-Version %q", rec.Index, v)
			}
			if header(rec.HTTP, "Mcp-Method") == "" {
				t.Errorf("record %d: POST without Mcp-Method", rec.Index)
			}
		case rec.Kind == traces.KindResponseHead:
			if v := header(rec.HTTP, "Mcp-Session-Id"); v != "" {
				t.Errorf("record %d: a stateless answer names session %q", rec.Index, v)
			}
		case rec.RPC != nil && rec.Dir == traces.DirClientToServer && rec.RPC.Type == "request":
			seen[rec.RPC.Method]++
			var m struct {
				Params struct {
					Meta map[string]json.RawMessage `json:"_meta"`
				} `json:"params"`
			}
			raw := rec.Raw
			if rec.Kind == traces.KindSSEEvent {
				raw = []byte(rec.SSE.Data)
			}
			if json.Unmarshal(raw, &m) != nil || string(m.Params.Meta["io.modelcontextprotocol/protocolVersion"]) != `"2026-07-28"` {
				t.Errorf("record %d: %s without the 2026-07-28 _meta: %.300s", rec.Index, rec.RPC.Method, raw)
			}
		case rec.RPC != nil && rec.Dir == traces.DirServerToClient && rec.RPC.TaskID != "":
			if want, ok := final[rec.RPC.TaskID]; ok && rec.RPC.Status == want {
				reached[rec.RPC.TaskID] = true
			}
		}
	}
	if heads == 0 {
		t.Fatal("the trace holds no POST")
	}
	for _, m := range []string{"server/discover", "tools/call", "tasks/get", "tasks/cancel"} {
		if seen[m] == 0 {
			t.Errorf("no %s request in the trace (requests %v)", m, seen)
		}
	}
	if seen["initialize"] > 0 {
		t.Errorf("initialize in the trace (requests %v): the client was to speak 2026-07-28 only", seen)
	}
	for id, status := range final {
		if !reached[id] {
			t.Errorf("task %s: no recorded answer with status %s", id, status)
		}
	}
	t.Logf("%d POSTs, requests %v", heads, seen)
}

// header returns the value of a header field, case-insensitively.
func header(h *traces.HTTPHead, name string) string {
	for _, f := range h.Header {
		if strings.EqualFold(f.Name, name) {
			return f.Value
		}
	}
	return ""
}
