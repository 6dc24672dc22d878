package server

import (
	"testing"

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
