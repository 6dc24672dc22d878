package server_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/tasksim/tasksim/mcp"
	"github.com/tasksim/tasksim/mcp/server"
)

// TestCallTaskID: a tool learns from Call.TaskID the task it runs as in a
// task-augmented call, and nothing in a call answered without a task.
func TestCallTaskID(t *testing.T) {
	whoami := &server.Tool{
		Tool: mcp.Tool{Name: "whoami", InputSchema: json.RawMessage(`{"type":"object"}`), Execution: &mcp.ToolExecution{TaskSupport: mcp.TaskSupportOptional}},
		Prepare: func(json.RawMessage) (server.RunFunc, error) {
			return func(_ context.Context, c *server.Call) (*mcp.CallToolResult, error) {
				return &mcp.CallToolResult{Content: []mcp.ContentBlock{mcp.TextBlock("task " + c.TaskID())}}, nil
			}, nil
		},
	}
	url, _ := serve(t, &server.Options{Tools: []*server.Tool{whoami}})
	c := connect(t, url, mcp.ClientCapabilities{})
	plain := result[mcp.CallToolResult](c, mcp.MethodToolsCall, callParams("whoami", nil, nil))
	if got := texts(plain.Content); len(got) != 1 || got[0] != "task " {
		t.Errorf("plain call: %q, want [\"task \"]", got)
	}
	created := result[mcp.CreateTaskResult](c, mcp.MethodToolsCall, callParams("whoami", nil, &mcp.TaskParams{}))
	res := result[mcp.CallToolResult](c, mcp.MethodTasksResult, map[string]any{"taskId": created.Task.TaskID})
	if got := texts(res.Content); len(got) != 1 || got[0] != "task "+created.Task.TaskID {
		t.Errorf("task call: %q, want [\"task %s\"]", got, created.Task.TaskID)
	}
}
