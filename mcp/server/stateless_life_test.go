package server

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/tasksim/tasksim/clock"
	"github.com/tasksim/tasksim/mcp"
)

// statelessPeer sends stateless requests straight to a Server inside a
// synctest bubble and takes each final answer once the bubble is idle.
type statelessPeer struct {
	t    *testing.T
	s    *Server
	next int
	// declared: the requests declare the tasks extension.
	declared bool
}

// send hands the server one request of method with the given params
// members (a JSON fragment ending in a comma, or empty) and returns its
// final answer, nil when there is none.
func (p *statelessPeer) send(method, fields string) *mcp.Message {
	p.t.Helper()
	caps := `{}`
	if p.declared {
		caps = `{"extensions":{"io.modelcontextprotocol/tasks":{}}}`
	}
	p.next++
	msg, err := mcp.DecodeMessage([]byte(`{"jsonrpc":"2.0","id":` + strconv.Itoa(p.next) + `,"method":"` + method +
		`","params":{` + fields + `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28",` +
		`"io.modelcontextprotocol/clientCapabilities":` + caps + `}}}`))
	if err != nil {
		p.t.Fatal(err)
	}
	r := make(finals, 1)
	p.s.HandleStateless(p.t.Context(), msg, r)
	synctest.Wait()
	select {
	case m := <-r:
		return m
	default:
		return nil
	}
}

// createTask calls tool as a task and returns the task's id.
func (p *statelessPeer) createTask(tool string) string {
	p.t.Helper()
	var c struct {
		TaskID string `json:"taskId"`
	}
	m := p.send(mcp.MethodToolsCall, `"name":"`+tool+`",`)
	if m == nil || m.Error != nil || json.Unmarshal(m.Result, &c) != nil || c.TaskID == "" {
		p.t.Fatalf("tools/call %s: %+v, want a task", tool, m)
	}
	return c.TaskID
}

// statelessDetail is the part of a tasks/get answer the tests read.
type statelessDetail struct {
	Status        mcp.TaskStatus `json:"status"`
	StatusMessage string         `json:"statusMessage"`
	Error         *mcp.Error     `json:"error"`
}

// get answers tasks/get for id: the task, or the error.
func (p *statelessPeer) get(id string) (statelessDetail, *mcp.Error) {
	p.t.Helper()
	m := p.send("tasks/get", `"taskId":"`+id+`",`)
	if m == nil {
		p.t.Fatal("tasks/get: no answer")
	}
	var d statelessDetail
	if m.Error != nil {
		return d, m.Error
	}
	if err := json.Unmarshal(m.Result, &d); err != nil {
		p.t.Fatal(err)
	}
	return d, nil
}

// testTool is a task tool whose run is run.
func testTool(name string, run RunFunc) *Tool {
	return &Tool{
		Tool:    mcp.Tool{Name: name, Execution: &mcp.ToolExecution{TaskSupport: mcp.TaskSupportOptional}},
		Prepare: func(json.RawMessage) (RunFunc, error) { return run, nil },
	}
}

// waitTool runs until its context ends and sends that context on ctxs.
func waitTool(ctxs chan<- context.Context) *Tool {
	return testTool("wait", func(ctx context.Context, _ *Call) (*mcp.CallToolResult, error) {
		ctxs <- ctx
		<-ctx.Done()
		return nil, ctx.Err()
	})
}

// At its ttl a stateless task still working fails with an inlined -32603
// that says the ttl passed, its tool stops, and a poll reads that for
// ttlGrace; then it is deleted and a poll gets -32602 "expired" (ext-tasks
// "Task Polling"; docs/server.md, "Tasks in 2026-07-28"). A finished task
// is deleted at its ttl at once.
func TestStatelessTaskFailsAtItsTTL(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctxs := make(chan context.Context, 2)
		sim := clock.NewSim(time.Unix(1_700_000_000, 0))
		const ttl, poll = time.Minute, 45 * time.Second
		s := New(&Options{Clock: sim, DefaultTTL: ttl, PollInterval: poll,
			Tools: []*Tool{waitTool(ctxs), testTool("done", func(context.Context, *Call) (*mcp.CallToolResult, error) {
				return &mcp.CallToolResult{Content: []mcp.ContentBlock{mcp.TextBlock("ok")}}, nil
			})}})
		defer s.Close()
		p := &statelessPeer{t: t, s: s, declared: true}
		id := p.createTask("wait")
		done := p.createTask("done")
		run := <-ctxs

		sim.Advance(ttl - time.Millisecond)
		synctest.Wait()
		if d, err := p.get(id); err != nil || d.Status != mcp.StatusWorking {
			t.Fatalf("before its ttl: %+v %v, want working", d, err)
		}
		sim.Advance(time.Millisecond)
		synctest.Wait()
		d, err := p.get(id)
		if err != nil || d.Status != mcp.StatusFailed || d.Error == nil || d.Error.Code != mcp.CodeInternalError ||
			!strings.Contains(d.Error.Message, "ttl") {
			t.Fatalf("at its ttl: %+v %v, want failed with a -32603 naming the ttl", d, err)
		}
		if run.Err() == nil {
			t.Error("the tool of a task failed by its ttl still runs")
		}
		if _, err := p.get(done); err == nil || err.Code != mcp.CodeInvalidParams || !strings.Contains(err.Message, "expired") {
			t.Errorf("a completed task at its ttl: %v, want -32602 expired", err)
		}
		if st := s.Stats(); st.Live != 0 || st.Tasks != 1 {
			t.Errorf("during the grace: %+v, want one task stored, none live", st)
		}

		grace := ttlGrace(poll)
		if grace != 2*poll {
			t.Fatalf("ttlGrace(%s) = %s", poll, grace)
		}
		sim.Advance(grace - time.Millisecond)
		if d, err := p.get(id); err != nil || d.Status != mcp.StatusFailed {
			t.Fatalf("before the grace ends: %+v %v, want failed", d, err)
		}
		sim.Advance(time.Millisecond)
		if _, err := p.get(id); err == nil || err.Code != mcp.CodeInvalidParams || !strings.Contains(err.Message, "expired") {
			t.Errorf("after the grace: %v, want -32602 expired", err)
		}
		if st := s.Stats(); st != (Stats{}) {
			t.Errorf("after the grace: %+v, want nothing held", st)
		}
		if g := ttlGrace(time.Second); g != time.Minute {
			t.Errorf("ttlGrace(1s) = %s, want the minute floor", g)
		}
	})
}

// A task whose tool returns has its run's context ended then, not at its
// ttl: a finished task keeps no child of the board's context.
func TestStatelessTaskEndsItsRunWhenDone(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctxs := make(chan context.Context, 1)
		s := New(&Options{Clock: clock.NewSim(time.Unix(0, 0)), Tools: []*Tool{
			testTool("quick", func(ctx context.Context, _ *Call) (*mcp.CallToolResult, error) {
				ctxs <- ctx
				return &mcp.CallToolResult{}, nil
			})}})
		defer s.Close()
		p := &statelessPeer{t: t, s: s, declared: true}
		id := p.createTask("quick")
		if d, err := p.get(id); err != nil || d.Status != mcp.StatusCompleted {
			t.Fatalf("tasks/get: %+v %v, want completed", d, err)
		}
		if ctx := <-ctxs; ctx.Err() == nil {
			t.Error("a completed task's run context is still live")
		}
	})
}

// A tool that reports an error in its result leaves its task completed,
// and the status message does not read like a JSON-RPC failure (ext-tasks
// "Task Status": failed is for JSON-RPC errors).
func TestStatelessToolErrorStatusMessage(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := New(&Options{Clock: clock.NewSim(time.Unix(0, 0)), Tools: []*Tool{
			testTool("oops", func(context.Context, *Call) (*mcp.CallToolResult, error) {
				return &mcp.CallToolResult{IsError: true, Content: []mcp.ContentBlock{mcp.TextBlock("no")}}, nil
			})}})
		defer s.Close()
		p := &statelessPeer{t: t, s: s, declared: true}
		d, err := p.get(p.createTask("oops"))
		if err != nil || d.Status != mcp.StatusCompleted || d.StatusMessage != "The tool reported an error." {
			t.Errorf("tasks/get: %+v %v, want completed, \"The tool reported an error.\"", d, err)
		}
	})
}

// Options.MaxTasks caps the tasks of both eras together: a task of a
// session and a stateless one draw on one count (docs/server.md,
// "Limits").
func TestMaxTasksCountsBothEras(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctxs := make(chan context.Context, 4)
		s := New(&Options{Clock: clock.NewSim(time.Unix(0, 0)), MaxTasks: 2, Tools: []*Tool{waitTool(ctxs)}})
		defer s.Close()
		owner := &session{srv: s}
		if err := s.store.add(&task{id: "legacy", owner: owner}, 10, 2); err != nil {
			t.Fatal(err)
		}
		p := &statelessPeer{t: t, s: s, declared: true}
		p.createTask("wait")
		m := p.send(mcp.MethodToolsCall, `"name":"wait",`)
		if m == nil || m.Error == nil || m.Error.Code != mcp.CodeInternalError || !strings.Contains(m.Error.Message, "server busy") {
			t.Fatalf("a stateless task past MaxTasks of both eras: %+v, want -32603 server busy", m)
		}
		if err := s.store.add(&task{id: "legacy2", owner: owner}, 10, 2); err == nil {
			t.Error("a session's task past MaxTasks of both eras was stored")
		}
		s.store.removeSession(owner)
		p.createTask("wait") // the session's slot is free again
	})
}

// The board refuses a task past MaxTasksPerSession running (all stateless
// requests are one requestor) and a task whose arguments ask for more bytes
// than the stateless share holds, with -32603 and nothing kept.
func TestStatelessTaskRefusals(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctxs := make(chan context.Context, 4)
		big := testTool("big", func(context.Context, *Call) (*mcp.CallToolResult, error) { return &mcp.CallToolResult{}, nil })
		big.Size = func(json.RawMessage) int64 { return 2000 }
		s := New(&Options{Clock: clock.NewSim(time.Unix(0, 0)), MaxTasksPerSession: 2, MaxSessionBytes: 1000,
			Tools: []*Tool{waitTool(ctxs), big}})
		defer s.Close()
		p := &statelessPeer{t: t, s: s, declared: true}
		busy := func(what, want string) {
			t.Helper()
			m := p.send(mcp.MethodToolsCall, `"name":"`+what+`",`)
			if m == nil || m.Error == nil || m.Error.Code != mcp.CodeInternalError || !strings.Contains(m.Error.Message, want) {
				t.Errorf("tools/call %s: %+v, want -32603 %q", what, m, want)
			}
		}
		busy("big", "does not fit the memory budget")
		p.createTask("wait")
		p.createTask("wait")
		busy("wait", "2 stateless tasks are running")
		if st := s.Stats(); st.Tasks != 2 || st.Live != 2 || st.Bytes != 0 {
			t.Errorf("after the refusals: %+v, want the two running tasks only", st)
		}
	})
}

// Close stops the tools of the stateless tasks still running and leaves
// nothing held; a request after it is refused.
func TestStatelessCloseStopsTasks(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctxs := make(chan context.Context, 4)
		s := New(&Options{Clock: clock.NewSim(time.Unix(0, 0)), Tools: []*Tool{waitTool(ctxs)}})
		p := &statelessPeer{t: t, s: s, declared: true}
		p.createTask("wait")
		p.createTask("wait")
		a, b := <-ctxs, <-ctxs
		s.Close()
		synctest.Wait()
		if a.Err() == nil || b.Err() == nil {
			t.Error("a stateless task's tool runs on after Close")
		}
		if st := s.Stats(); st != (Stats{}) {
			t.Errorf("after Close: %+v, want nothing held", st)
		}
		if m := p.send(mcp.MethodToolsCall, `"name":"wait",`); m == nil || m.Error == nil {
			t.Errorf("a task after Close: %+v, want an error", m)
		}
	})
}

// A plain stateless call cancelled by its request's context and requests
// refused for bad input leave no bytes and no task behind.
func TestStatelessNothingHeldAfterCancelOrRefusal(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := New(&Options{Clock: clock.NewSim(time.Unix(0, 0))})
		defer s.Close()
		p := &statelessPeer{t: t, s: s}
		ctx, cancel := context.WithCancel(t.Context())
		msg, err := mcp.DecodeMessage([]byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"slow_text",` +
			`"arguments":{"chunks":3,"chunkSize":100,"intervalMs":60000},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28",` +
			`"io.modelcontextprotocol/clientCapabilities":{}}}}`))
		if err != nil {
			t.Fatal(err)
		}
		r := make(finals, 1)
		s.HandleStateless(ctx, msg, r)
		synctest.Wait()
		cancel()
		synctest.Wait()
		select {
		case m := <-r:
			t.Errorf("a cancelled plain call answered %+v", m)
		default:
		}
		for _, bad := range []struct{ method, fields string }{
			{mcp.MethodToolsCall, `"name":"nope",`},
			{mcp.MethodToolsCall, `"name":"slow_text","arguments":{"chunks":-1},`},
			{"tasks/get", `"taskId":"nope",`},
			{"tasks/result", `"taskId":"nope",`},
		} {
			if m := p.send(bad.method, bad.fields); m == nil || m.Error == nil {
				t.Errorf("%s %s: %+v, want an error", bad.method, bad.fields, m)
			}
		}
		if st := s.Stats(); st != (Stats{}) {
			t.Errorf("after a cancelled call and refusals: %+v, want nothing held", st)
		}
	})
}
