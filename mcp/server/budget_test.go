package server_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/tasksim/tasksim/mcp"
	"github.com/tasksim/tasksim/mcp/server"
)

// Arguments that ask for more than a task may hold are refused with
// -32602 before anything runs or is stored (Hardening item 1): slow_text
// with a million chunks of 1 MiB, no interval, ran the server out of
// memory in 6 s.
func TestOversizedResultRefused(t *testing.T) {
	url, srv := serve(t, nil)
	c := connect(t, url, mcp.ClientCapabilities{})
	cases := map[string]map[string]any{
		"the issue's call":         {"chunks": 1_000_000, "chunkSize": 1 << 20, "intervalMs": 0},
		"just over 64 MiB":         {"chunks": 64, "chunkSize": 1 << 20, "intervalMs": 0},
		"many small chunks":        {"chunks": 1_000_000, "chunkSize": 100, "intervalMs": 0},
		"over, with a long period": {"chunks": 100, "chunkSize": 1 << 20, "durationMs": 3_600_000},
	}
	for name, args := range cases {
		t.Run(name, func(t *testing.T) {
			for _, task := range []*mcp.TaskParams{nil, {}, modes(mcp.ModeStreaming)} {
				e := rpcError(c, mcp.MethodToolsCall, callParams(server.ToolSlowText, args, task))
				if e.Code != mcp.CodeInvalidParams || !strings.Contains(e.Message, "limit") {
					t.Errorf("task %v: error %d %q, want %d naming the limit", task, e.Code, e.Message, mcp.CodeInvalidParams)
				}
			}
			if st := srv.Stats(); st.Tasks != 0 || st.Bytes != 0 {
				t.Errorf("after refusals the server holds %+v, want nothing", st)
			}
		})
	}
	// Within the budget is fine.
	res := result[mcp.CallToolResult](c, mcp.MethodToolsCall,
		callParams(server.ToolSlowText, map[string]any{"chunks": 3, "chunkSize": 1 << 20, "intervalMs": 0}, nil))
	if len(res.Content) != 3 || len(res.Content[2].Text) != 1<<20 {
		t.Errorf("a 3 MiB call: %d blocks", len(res.Content))
	}
}

// The tasks of a session, and of the server, together hold no more than
// their budgets: a call whose result would not fit gets -32603 at once,
// another session still gets its share, and deleting a task's session or
// letting it expire gives its bytes back (Hardening item 1).
func TestSessionAndServerBudgets(t *testing.T) {
	const mib = 1 << 20
	url, srv := serve(t, &server.Options{MaxTaskBytes: 2 * mib, MaxSessionBytes: 3 * mib, MaxServerBytes: 5 * mib})
	a := connect(t, url, mcp.ClientCapabilities{})
	b := connect(t, url, mcp.ClientCapabilities{})
	// 20 chunks of 100 kB, one per hour: each task reserves ~2 MB and
	// stays running.
	slow := map[string]any{"chunks": 20, "chunkSize": 100_000, "intervalMs": 3_600_000}
	result[mcp.CreateTaskResult](a, mcp.MethodToolsCall, callParams(server.ToolSlowText, slow, &mcp.TaskParams{}))
	if e := rpcError(a, mcp.MethodToolsCall, callParams(server.ToolSlowText, slow, &mcp.TaskParams{})); e.Code != mcp.CodeInternalError || !strings.Contains(e.Message, "budget") {
		t.Errorf("over the session budget: %d %q, want -32603 naming the budget", e.Code, e.Message)
	}
	result[mcp.CreateTaskResult](b, mcp.MethodToolsCall, callParams(server.ToolSlowText, slow, &mcp.TaskParams{}))
	c := connect(t, url, mcp.ClientCapabilities{})
	if e := rpcError(c, mcp.MethodToolsCall, callParams(server.ToolSlowText, slow, &mcp.TaskParams{})); e.Code != mcp.CodeInternalError {
		t.Errorf("over the server budget: %d %q, want -32603", e.Code, e.Message)
	}
	if st := srv.Stats(); st.Tasks != 2 || st.Bytes > 5*mib || st.Bytes < 4_000_000 {
		t.Errorf("stats %+v, want 2 tasks holding about 4 MB", st)
	}
	// Nobody can read a's task once its session is gone: it stops, and
	// its bytes are free for c.
	if st := a.do(a.httpReq(http.MethodDelete, nil)).status; st != http.StatusOK {
		t.Fatalf("DELETE: %d", st)
	}
	result[mcp.CreateTaskResult](c, mcp.MethodToolsCall, callParams(server.ToolSlowText, slow, &mcp.TaskParams{}))
	if st := srv.Stats(); st.Tasks != 2 || st.Live != 2 {
		t.Errorf("stats %+v after the DELETE and a new task, want 2 live tasks", st)
	}
}

// A tool without Size that emits more than its task may hold fails with
// the budget's message instead of growing without end.
func TestEmitOverBudgetFails(t *testing.T) {
	endless := &server.Tool{
		Tool: mcp.Tool{Name: "endless", Execution: &mcp.ToolExecution{TaskSupport: mcp.TaskSupportOptional}},
		Prepare: func(json.RawMessage) (server.RunFunc, error) {
			return func(ctx context.Context, c *server.Call) (*mcp.CallToolResult, error) {
				for {
					if err := c.Emit(ctx, mcp.TextBlock(strings.Repeat("x", 64<<10))); err != nil {
						return nil, err
					}
				}
			}, nil
		},
	}
	url, srv := serve(t, &server.Options{Tools: []*server.Tool{endless}, MaxTaskBytes: 1 << 20})
	c := connect(t, url, mcp.ClientCapabilities{})
	created := result[mcp.CreateTaskResult](c, mcp.MethodToolsCall, callParams("endless", nil, &mcp.TaskParams{}))
	res := result[mcp.CallToolResult](c, mcp.MethodTasksResult, map[string]any{"taskId": created.Task.TaskID})
	if got := texts(res.Content); !res.IsError || !strings.Contains(got[len(got)-1], server.ErrBudget.Error()) {
		t.Fatalf("an endless tool ended with isError %v, last block %q", res.IsError, got[len(got)-1])
	}
	if st := srv.Stats(); st.Bytes > 1<<20+1024 {
		t.Errorf("held %d bytes, over the 1 MiB task budget", st.Bytes)
	}
	plain := rpcOrResult(c, callParams("endless", nil, nil))
	if !plain.IsError {
		t.Errorf("a plain endless call did not fail")
	}
}

func rpcOrResult(c *client, params any) mcp.CallToolResult {
	c.t.Helper()
	return result[mcp.CallToolResult](c, mcp.MethodToolsCall, params)
}
