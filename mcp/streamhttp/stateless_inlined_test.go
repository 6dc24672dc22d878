package streamhttp_test

import (
	"encoding/json"
	"errors"
	"testing"
	"testing/synctest"

	"github.com/tasksim/tasksim/mcp"
	rev "github.com/tasksim/tasksim/mcp/rev20260728"
	"github.com/tasksim/tasksim/mcp/rev20260728/tasks"
	"github.com/tasksim/tasksim/mcp/server"
)

// The result a completed task inlines is the CallToolResult the call
// would have returned (Tasks, "Task Polling", CompletedTask.result: "The
// structure matches the result type of the original request"), so in this
// revision it carries resultType "complete" (schema.ts Result.resultType:
// "Servers implementing this protocol version MUST include this field"),
// a tool error as well. A client that decodes it by the schema
// (@modelcontextprotocol/ext-tasks 0.2.2) refuses it otherwise.
func TestStatelessTaskInlinedResultType(t *testing.T) {
	for _, tc := range []struct {
		name    string
		end     func() (*mcp.CallToolResult, error)
		isError bool
	}{
		{"result", text("hello"), false},
		{"tool error", func() (*mcp.CallToolResult, error) { return nil, errors.New("no luck") }, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				g := newGate()
				s := newMemStatelessServer(t, &server.Options{
					Tools: []*server.Tool{g.tool("job", mcp.TaskSupportOptional, tc.end)}})
				c := s.create("job")
				close(g.open)
				synctest.Wait()
				got := s.get(c.TaskID)
				if got.Status != tasks.Completed {
					t.Fatalf("status %q, want completed", got.Status)
				}
				var res struct {
					ResultType *rev.ResultType `json:"resultType"`
					rev.CallToolResult
				}
				if err := json.Unmarshal(got.Result, &res); err != nil {
					t.Fatalf("inlined result %s: %v", got.Result, err)
				}
				if res.ResultType == nil || *res.ResultType != rev.ResultComplete {
					t.Errorf("inlined result %s: want resultType %q", got.Result, rev.ResultComplete)
				}
				if len(res.Content) != 1 || res.IsError != tc.isError {
					t.Errorf("inlined result %s: want one content block, isError %v", got.Result, tc.isError)
				}
			})
		})
	}
}
