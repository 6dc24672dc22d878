package server

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"testing"
	"testing/synctest"

	"github.com/tasksim/tasksim/mcp"
)

// Which stateless tools/call runs as a task, by policy, taskSupport and
// whether the request declared the extension (docs/server.md, "Tasks in 2026-07-28").
func TestRunsAsTask(t *testing.T) {
	tool := func(support string) *Tool {
		return &Tool{Tool: mcp.Tool{Name: "x", Execution: &mcp.ToolExecution{TaskSupport: support}}}
	}
	for _, tc := range []struct {
		policy   TaskPolicy
		support  string
		declared bool
		want     bool
		refused  bool
	}{
		{TasksByTool, mcp.TaskSupportOptional, true, true, false},
		{TasksByTool, mcp.TaskSupportOptional, false, false, false},
		{TasksByTool, mcp.TaskSupportForbidden, true, false, false},
		{TasksByTool, mcp.TaskSupportRequired, true, true, false},
		{TasksByTool, mcp.TaskSupportRequired, false, false, true},
		{TasksRequired, mcp.TaskSupportOptional, true, false, false},
		{TasksRequired, mcp.TaskSupportRequired, true, true, false},
		{TasksAll, mcp.TaskSupportForbidden, true, true, false},
		{TasksAll, mcp.TaskSupportForbidden, false, false, false},
		{TasksAll, mcp.TaskSupportRequired, false, false, true},
	} {
		s := &Server{opts: Options{StatelessTasks: tc.policy}}
		got, err := s.runsAsTask(tool(tc.support), tc.declared)
		if got != tc.want || (err != nil) != tc.refused {
			t.Errorf("%s, %s, declared %v: task %v, error %v; want %v, refused %v", tc.policy, tc.support, tc.declared, got, err, tc.want, tc.refused)
		}
	}
	for _, name := range []string{"tool", "required", "all"} {
		if p, err := ParseTaskPolicy(name); err != nil || p.String() != name {
			t.Errorf("ParseTaskPolicy(%q) = %v, %v", name, p, err)
		}
	}
	if _, err := ParseTaskPolicy("sometimes"); err == nil {
		t.Error("ParseTaskPolicy(sometimes) succeeded")
	}
}

// finals is a Replier that keeps the final messages it is given.
type finals chan *mcp.Message

func (f finals) Reply(_ context.Context, msg *mcp.Message, final bool) error {
	if final && msg != nil {
		f <- msg
	}
	return nil
}

// A stateless task is charged once for its bytes: what it emits within
// the bytes reserved for its arguments at creation is not charged again,
// so a task that fits the budget alone completes (docs/server.md, "Tasks
// in 2026-07-28": the result bytes come from the stateless share).
func TestStatelessTaskChargesItsBytesOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		block := mcp.TextBlock(strings.Repeat("x", 1000))
		size := blockBytes(block)
		tool := &Tool{
			Tool: mcp.Tool{Name: "emit", Execution: &mcp.ToolExecution{TaskSupport: mcp.TaskSupportOptional}},
			Prepare: func(json.RawMessage) (RunFunc, error) {
				return func(ctx context.Context, c *Call) (*mcp.CallToolResult, error) {
					return nil, c.Emit(ctx, block)
				}, nil
			},
			Size: func(json.RawMessage) int64 { return size },
		}
		s := New(&Options{Tools: []*Tool{tool}, MaxSessionBytes: size + size/2})
		defer s.Close()
		meta := `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28",` +
			`"io.modelcontextprotocol/clientCapabilities":{"extensions":{"io.modelcontextprotocol/tasks":{}}}}`
		send := func(id int, method, fields string) *mcp.Message {
			t.Helper()
			msg, err := mcp.DecodeMessage([]byte(`{"jsonrpc":"2.0","id":` + strconv.Itoa(id) + `,"method":"` + method + `","params":{` + fields + meta + `}}`))
			if err != nil {
				t.Fatal(err)
			}
			r := make(finals, 1)
			s.HandleStateless(t.Context(), msg, r)
			synctest.Wait()
			select {
			case m := <-r:
				return m
			default:
				t.Fatalf("%s: no answer", method)
				return nil
			}
		}
		var c struct {
			TaskID string `json:"taskId"`
		}
		if m := send(1, mcp.MethodToolsCall, `"name":"emit",`); m.Error != nil || json.Unmarshal(m.Result, &c) != nil || c.TaskID == "" {
			t.Fatalf("tools/call: %s %v, want a task", m.Result, m.Error)
		}
		m := send(2, "tasks/get", `"taskId":"`+c.TaskID+`",`)
		var got struct {
			Status string              `json:"status"`
			Result *mcp.CallToolResult `json:"result"`
		}
		if err := json.Unmarshal(m.Result, &got); err != nil || got.Status != string(mcp.StatusCompleted) ||
			got.Result == nil || got.Result.IsError || len(got.Result.Content) != 1 || got.Result.Content[0].Text != block.Text {
			t.Errorf("a task of %d bytes under a budget of %d: %s, want completed with its text", size, size+size/2, m.Result)
		}
	})
}
