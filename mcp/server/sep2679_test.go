package server_test

import (
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/tasksim/tasksim/mcp"
	"github.com/tasksim/tasksim/mcp/server"
)

// SEP-2679's behavioural requirements (§1.3) and negotiation rules (§2.3),
// checked over real HTTP with the session's standalone GET stream.

func partialsOf(t *testing.T, msgs []*mcp.Message, taskID string) []mcp.TaskPartialParams {
	var out []mcp.TaskPartialParams
	for _, m := range ofMethod(msgs, mcp.NotificationTaskPartial) {
		p := decode[mcp.TaskPartialParams](t, m.Params)
		if p.TaskID == taskID {
			out = append(out, p)
		}
	}
	return out
}

func TestSEP2679Partials(t *testing.T) {
	url, srv := serve(t, nil)
	if !srv.Capabilities().Tasks.PartialStreaming() {
		t.Fatal("server does not declare tasks.streaming.partial")
	}
	c := connect(t, url, wantPartials)
	get := collect(c.listen())
	created := result[mcp.CreateTaskResult](c, mcp.MethodToolsCall, callParams(server.ToolSlowText, map[string]any{"chunks": 6, "chunkSize": 10, "intervalMs": 2}, &mcp.TaskParams{}))
	id := created.Task.TaskID
	msgs := get.waitFor(t, "terminal status", func(ms []*mcp.Message) bool { return terminalStatus(t, ms, id) })

	ps := partialsOf(t, msgs, id)
	var got []string
	for i, p := range ps {
		if p.Seq != int64(i) { // rule 4: from 0, +1
			t.Errorf("partial %d has seq %d", i, p.Seq)
		}
		if len(p.Content) == 0 { // rule 5
			t.Errorf("partial %d has empty content", i)
		}
		got = append(got, texts(p.Content)...)
	}
	if diff := cmp.Diff(chunkTexts(6, 10), got); diff != "" {
		t.Errorf("partials (-want +got):\n%s", diff)
	}
	// Rules 2 and 3: all partials before the terminal status, none after.
	terminalAt := slices.IndexFunc(msgs, func(m *mcp.Message) bool {
		return m.Method == mcp.NotificationTaskStatus && decode[mcp.TaskStatusParams](t, m.Params).Status.IsTerminal()
	})
	for i, m := range msgs {
		if m.Method == mcp.NotificationTaskPartial && i > terminalAt {
			t.Errorf("partial notification after the terminal status (message %d > %d)", i, terminalAt)
		}
	}
	// Rule 6: tasks/result is the canonical result.
	res := result[mcp.CallToolResult](c, mcp.MethodTasksResult, map[string]any{"taskId": id})
	if diff := cmp.Diff(chunkTexts(6, 10), texts(res.Content)); diff != "" {
		t.Errorf("tasks/result (-want +got):\n%s", diff)
	}
	if id2, _ := res.Meta.RelatedTaskID(); id2 != id {
		t.Errorf("tasks/result related-task %q, want %q", id2, id)
	}
}

func TestSEP2679NegotiationNoPartialsForUndeclaredClient(t *testing.T) {
	url, _ := serve(t, nil)
	c := connect(t, url, mcp.ClientCapabilities{}) // no tasks.streaming.partial
	get := collect(c.listen())
	created := result[mcp.CreateTaskResult](c, mcp.MethodToolsCall, callParams(server.ToolSlowText, map[string]any{"chunks": 3, "intervalMs": 1}, &mcp.TaskParams{}))
	msgs := get.waitFor(t, "terminal status", func(ms []*mcp.Message) bool { return terminalStatus(t, ms, created.Task.TaskID) })
	if n := len(ofMethod(msgs, mcp.NotificationTaskPartial)); n != 0 {
		t.Errorf("%d partial notifications to a client that did not declare tasks.streaming.partial", n)
	}
}

func TestSEP2679ServerWithoutPartial(t *testing.T) {
	url, srv := serve(t, &server.Options{NoPartial: true})
	if srv.Capabilities().Tasks.PartialStreaming() {
		t.Fatal("NoPartial server declares tasks.streaming.partial")
	}
	c := connect(t, url, wantPartials)
	get := collect(c.listen())
	created := result[mcp.CreateTaskResult](c, mcp.MethodToolsCall, callParams(server.ToolSlowText, map[string]any{"chunks": 3, "intervalMs": 1}, &mcp.TaskParams{}))
	msgs := get.waitFor(t, "terminal status", func(ms []*mcp.Message) bool { return terminalStatus(t, ms, created.Task.TaskID) })
	if n := len(ofMethod(msgs, mcp.NotificationTaskPartial)); n != 0 {
		t.Errorf("%d partial notifications from a server without SEP-2679", n)
	}
}

func TestSEP2679NoPartialAfterCancel(t *testing.T) {
	clk := newSimClock()
	url, _ := serve(t, &server.Options{Clock: clk})
	c := connect(t, url, wantPartials)
	get := collect(c.listen())
	created := result[mcp.CreateTaskResult](c, mcp.MethodToolsCall, callParams(server.ToolSlowText, map[string]any{"chunks": 10, "intervalMs": 100}, &mcp.TaskParams{}))
	id := created.Task.TaskID
	clk.fire(t, 100*time.Millisecond)
	get.waitFor(t, "first partial", func(ms []*mcp.Message) bool { return len(partialsOf(t, ms, id)) == 1 })
	result[mcp.Task](c, mcp.MethodTasksCancel, map[string]any{"taskId": id})
	get.waitFor(t, "cancelled status", func(ms []*mcp.Message) bool { return terminalStatus(t, ms, id) })
	clk.advance(time.Second) // the tool would have produced 9 more
	// A partial sent after this point would trail the terminal status on
	// the same stream; ping through the session to flush the ordering.
	result[struct{}](c, mcp.MethodPing, nil)
	if n := len(partialsOf(t, get.snapshot(), id)); n != 1 {
		t.Errorf("%d partials, want 1: none after cancellation", n)
	}
}

func TestProgressTokenValidForTaskLife(t *testing.T) {
	url, _ := serve(t, nil)
	c := connect(t, url, mcp.ClientCapabilities{})
	get := collect(c.listen())
	params := callParams(server.ToolSlowText, map[string]any{"chunks": 3, "intervalMs": 2}, &mcp.TaskParams{})
	params["_meta"] = map[string]any{"progressToken": "tok-7"}
	created := result[mcp.CreateTaskResult](c, mcp.MethodToolsCall, params)
	msgs := get.waitFor(t, "terminal status", func(ms []*mcp.Message) bool { return terminalStatus(t, ms, created.Task.TaskID) })
	ps := ofMethod(msgs, mcp.NotificationProgress)
	if len(ps) != 3 {
		t.Fatalf("got %d progress notifications after CreateTaskResult, want 3", len(ps))
	}
	for i, m := range ps {
		p := decode[mcp.ProgressParams](t, m.Params)
		if string(p.ProgressToken) != `"tok-7"` || p.Progress != float64(i+1) {
			t.Errorf("progress %d: token %s progress %v", i, p.ProgressToken, p.Progress)
		}
	}
}
