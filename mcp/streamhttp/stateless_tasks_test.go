package streamhttp_test

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/tasksim/tasksim/clock"
	"github.com/tasksim/tasksim/mcp"
	rev "github.com/tasksim/tasksim/mcp/rev20260728"
	"github.com/tasksim/tasksim/mcp/rev20260728/tasks"
	"github.com/tasksim/tasksim/mcp/server"
	"github.com/tasksim/tasksim/mcp/streamhttp"
)

// These tests drive the tasks extension (io.modelcontextprotocol/tasks)
// of 2026-07-28 with raw HTTP requests, through the in-memory transport
// inside synctest bubbles: a tool finishing is awaited with
// synctest.Wait, and ttl passes on a clock.Sim, never on the wall clock.

// newMemStatelessServer is a reference server behind a Handler, reached
// through the in-memory transport. Make it inside the bubble.
func newMemStatelessServer(t *testing.T, o *server.Options) *statelessServer {
	t.Helper()
	srv := server.New(o)
	h := streamhttp.NewHandler(srv, &streamhttp.Options{Logger: slog.New(slog.DiscardHandler)})
	t.Cleanup(func() {
		h.Close()
		srv.Close()
	})
	return &statelessServer{t: t, srv: srv, h: h, url: "http://" + streamhttp.MemoryHost + streamhttp.DefaultPath,
		client: &http.Client{Transport: streamhttp.NewMemoryTransport(h)}}
}

// metaTasks is a well-formed _meta that declares the tasks extension.
func metaTasks() string {
	return strings.Replace(metaJSON(rev.ProtocolVersion), `"io.modelcontextprotocol/clientCapabilities":{}`,
		`"io.modelcontextprotocol/clientCapabilities":{"extensions":{"`+tasks.ExtensionID+`":{}}}`, 1)
}

// gate is a tool that runs until its test opens the gate, then ends as
// end says; its context ending closes stopped.
type gate struct {
	open    chan struct{}
	stopped chan struct{}
}

func newGate() *gate { return &gate{open: make(chan struct{}), stopped: make(chan struct{})} }

func (g *gate) tool(name, support string, end func() (*mcp.CallToolResult, error)) *server.Tool {
	return &server.Tool{
		Tool: mcp.Tool{Name: name, InputSchema: json.RawMessage(`{"type":"object"}`),
			Execution: &mcp.ToolExecution{TaskSupport: support}},
		Prepare: func(json.RawMessage) (server.RunFunc, error) {
			return func(ctx context.Context, _ *server.Call) (*mcp.CallToolResult, error) {
				select {
				case <-g.open:
					return end()
				case <-ctx.Done():
					close(g.stopped)
					return nil, ctx.Err()
				}
			}, nil
		},
	}
}

func text(s string) func() (*mcp.CallToolResult, error) {
	return func() (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{Content: []mcp.ContentBlock{mcp.TextBlock(s)}}, nil
	}
}

// call sends a tools/call of tool with meta and returns its result.
func (s *statelessServer) call(tool, meta string) json.RawMessage {
	s.t.Helper()
	a := s.do(http.MethodPost, request(mcp.MethodToolsCall, `"name":"`+tool+`","arguments":{}`, meta), headers(mcp.MethodToolsCall, tool))
	m := a.last(s.t)
	if a.status != http.StatusOK || m.Error != nil {
		s.t.Fatalf("tools/call %s: status %d, error %v", tool, a.status, m.Error)
	}
	return m.Result
}

// create calls tool, declaring the extension, and returns the task the
// server created.
func (s *statelessServer) create(tool string) tasks.CreateTaskResult {
	s.t.Helper()
	raw := s.call(tool, metaTasks())
	var c tasks.CreateTaskResult
	if err := json.Unmarshal(raw, &c); err != nil {
		s.t.Fatal(err)
	}
	if err := c.Validate(); err != nil {
		s.t.Fatalf("CreateTaskResult %s: %v", raw, err)
	}
	var members map[string]json.RawMessage
	_ = json.Unmarshal(raw, &members)
	for _, k := range []string{"task", "result", "error", "inputRequests"} {
		if _, ok := members[k]; ok {
			s.t.Errorf("CreateTaskResult carries %q: it is flat, a Task only (Tasks, \"Task Creation\")", k)
		}
	}
	return c
}

// taskCall sends a tasks/* method for id with meta and returns the answer.
func (s *statelessServer) taskCall(method, id, meta string) *answer {
	s.t.Helper()
	fields := `"taskId":"` + id + `"`
	if method == tasks.MethodUpdate {
		fields += `,"inputResponses":{}`
	}
	return s.do(http.MethodPost, request(method, fields, meta), headers(method, id))
}

// get answers tasks/get for id, declaring the extension.
func (s *statelessServer) get(id string) tasks.GetTaskResult {
	s.t.Helper()
	m := s.taskCall(tasks.MethodGet, id, metaTasks()).last(s.t)
	if m.Error != nil {
		s.t.Fatalf("tasks/get %s: %d %s", id, m.Error.Code, m.Error.Message)
	}
	var g tasks.GetTaskResult
	if err := json.Unmarshal(m.Result, &g); err != nil {
		s.t.Fatal(err)
	}
	if err := g.Validate(); err != nil {
		s.t.Fatalf("tasks/get %s: %v", m.Result, err)
	}
	return g
}

// The extension is declared exactly when its methods are served: each
// method of each extension server/discover declares answers something
// other than -32601 (here -32602: the id names no task).
func TestStatelessDiscoverDeclaresServedExtensions(t *testing.T) {
	methodsOf := map[string][]string{tasks.ExtensionID: {tasks.MethodGet, tasks.MethodUpdate, tasks.MethodCancel}}
	s := newStatelessServer(t)
	a := s.do(http.MethodPost, request(rev.MethodServerDiscover, "", metaTasks()), headers(rev.MethodServerDiscover, ""))
	var d rev.DiscoverResult
	if err := json.Unmarshal(a.last(t).Result, &d); err != nil {
		t.Fatal(err)
	}
	if len(d.Capabilities.Extensions) == 0 {
		t.Fatal("server/discover declares no extension; the server serves the tasks extension")
	}
	for id := range d.Capabilities.Extensions {
		methods, known := methodsOf[id]
		if !known {
			t.Errorf("server/discover declares %s, whose methods this test does not know", id)
		}
		for _, m := range methods {
			wantError(t, s.taskCall(m, "no-such-task", metaTasks()), http.StatusOK, mcp.CodeInvalidParams, "not found")
		}
	}
}

// Create, then get: the task resolves at once (durable create), is
// working while its tool runs, and once the tool ends is completed with
// the result inlined, a tool error included; a JSON-RPC error is failed
// with the error inlined (Tasks, "Task Status").
func TestStatelessTaskCreateGet(t *testing.T) {
	for _, tc := range []struct {
		name   string
		end    func() (*mcp.CallToolResult, error)
		status tasks.Status
		check  func(t *testing.T, g tasks.GetTaskResult)
	}{
		{"completed", text("hello"), tasks.Completed, func(t *testing.T, g tasks.GetTaskResult) {
			var res mcp.CallToolResult
			if err := json.Unmarshal(g.Result, &res); err != nil || len(res.Content) != 1 || res.Content[0].Text != "hello" || res.IsError {
				t.Errorf("inlined result %s (%v), want the text hello", g.Result, err)
			}
			if strings.Contains(string(g.Result), mcp.MetaRelatedTask) {
				t.Errorf("inlined result %s carries the related-task _meta", g.Result)
			}
		}},
		{"tool error", func() (*mcp.CallToolResult, error) { return nil, errors.New("no luck") }, tasks.Completed, func(t *testing.T, g tasks.GetTaskResult) {
			var res mcp.CallToolResult
			if err := json.Unmarshal(g.Result, &res); err != nil || !res.IsError || len(res.Content) != 1 || res.Content[0].Text != "no luck" {
				t.Errorf("inlined result %s (%v), want isError and the error's text", g.Result, err)
			}
		}},
		{"protocol error", func() (*mcp.CallToolResult, error) {
			return nil, mcp.Errorf(mcp.CodeInternalError, "backend down")
		}, tasks.Failed, func(t *testing.T, g tasks.GetTaskResult) {
			if g.Error == nil || g.Error.Code != mcp.CodeInternalError || g.Error.Message != "backend down" {
				t.Errorf("inlined error %+v, want -32603 backend down", g.Error)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				g := newGate()
				s := newMemStatelessServer(t, &server.Options{PollInterval: 250 * time.Millisecond,
					Tools: []*server.Tool{g.tool("job", mcp.TaskSupportOptional, tc.end)}})
				c := s.create("job")
				if c.Status != tasks.Working || c.PollIntervalMs == nil || *c.PollIntervalMs != 250 ||
					c.TTLMs == nil || *c.TTLMs != server.DefaultTTL.Milliseconds() {
					t.Errorf("created %+v: want working, pollIntervalMs 250, ttlMs %d", c.Task, server.DefaultTTL.Milliseconds())
				}
				if got := s.get(c.TaskID); got.Status != tasks.Working || got.PollIntervalMs == nil || *got.PollIntervalMs != 250 {
					t.Fatalf("tasks/get right after create: %+v, want working with pollIntervalMs 250", got.Task)
				}
				close(g.open)
				synctest.Wait()
				got := s.get(c.TaskID)
				if got.Status != tc.status {
					t.Fatalf("status %q, want %q", got.Status, tc.status)
				}
				tc.check(t, got)
				if st := s.srv.Stats(); st.Tasks != 1 || st.Live != 0 || st.Sessions != 0 {
					t.Errorf("server holds %+v, want the one finished task and no session", st)
				}
			})
		})
	}
}

// tasks/cancel acks with an empty result, stops the tool and leaves the
// task cancelled; cancelling it again gets the same ack (Tasks, "Task
// Cancellation").
func TestStatelessTaskCancel(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := newGate()
		s := newMemStatelessServer(t, &server.Options{Tools: []*server.Tool{g.tool("job", mcp.TaskSupportOptional, text("late"))}})
		c := s.create("job")
		for range 2 {
			m := s.taskCall(tasks.MethodCancel, c.TaskID, metaTasks()).last(t)
			if m.Error != nil || string(m.Result) != `{"resultType":"complete","_meta":{"io.modelcontextprotocol/serverInfo":{"name":"tasksim","version":"dev"}}}` {
				t.Fatalf("tasks/cancel: %s %v, want the empty ack", m.Result, m.Error)
			}
		}
		synctest.Wait()
		select {
		case <-g.stopped:
		default:
			t.Error("the tool still runs after tasks/cancel")
		}
		if got := s.get(c.TaskID); got.Status != tasks.Cancelled || got.Result != nil || got.Error != nil {
			t.Errorf("after cancel: %+v, want cancelled with nothing inlined", got)
		}
		if st := s.srv.Stats(); st.Live != 0 {
			t.Errorf("%d live tasks after cancel", st.Live)
		}
	})
}

// An id the server never made is -32602 for every tasks/* method, never
// a status a client would poll forever.
func TestStatelessTaskUnknownID(t *testing.T) {
	s := newStatelessServer(t)
	for _, m := range []string{tasks.MethodGet, tasks.MethodUpdate, tasks.MethodCancel} {
		t.Run(m, func(t *testing.T) {
			wantError(t, s.taskCall(m, "786512e2-9e0d-44bd-8f29-789f320fe840", metaTasks()), http.StatusOK, mcp.CodeInvalidParams, "Task not found")
		})
	}
	s.noState()
}

// Without the extension declared on the request itself: tasks/* and a
// tool that needs a task are -32021 naming the extension (HTTP 400); a
// tool that may run either way runs plainly, never as a task.
func TestStatelessTasksNeedCapability(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newMemStatelessServer(t, nil)
		c := s.create(server.ToolInstant)
		plain := metaJSON(rev.ProtocolVersion)
		for _, m := range []string{tasks.MethodGet, tasks.MethodUpdate, tasks.MethodCancel} {
			e := wantError(t, s.taskCall(m, c.TaskID, plain), http.StatusBadRequest, rev.CodeMissingRequiredClientCapability)
			var data rev.MissingCapabilityData
			if err := rev.DecodeErrorData(e, &data); err != nil || !data.RequiredCapabilities.HasExtension(tasks.ExtensionID) {
				t.Errorf("%s: data %s (%v), want requiredCapabilities naming %s", m, e.Data, err, tasks.ExtensionID)
			}
		}
		a := s.do(http.MethodPost, request(mcp.MethodToolsCall, `"name":"task_only","arguments":{"durationMs":0}`, plain), headers(mcp.MethodToolsCall, server.ToolTaskOnly))
		wantError(t, a, http.StatusBadRequest, rev.CodeMissingRequiredClientCapability)
		if typ, err := rev.ResultTypeOf(s.call(server.ToolInstant, plain)); err != nil || typ != rev.ResultComplete {
			t.Errorf("instant without the extension: resultType %q, %v; want a plain complete result", typ, err)
		}
		if st := s.srv.Stats(); st.Tasks != 1 {
			t.Errorf("server holds %d tasks, want only the one made with the extension declared", st.Tasks)
		}
	})
}

// A task lives out its ttl on the server's clock, not a moment less; a
// task still working then fails (-32603 inlined), its tool stopped, and is
// gone a grace period later: -32602 "expired" (docs/server.md, "Tasks in
// 2026-07-28").
func TestStatelessTaskTTLExpiry(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		sim := clock.NewSim(time.Date(2026, 7, 28, 12, 0, 0, 0, time.UTC))
		g := newGate()
		s := newMemStatelessServer(t, &server.Options{Clock: sim, DefaultTTL: time.Minute,
			Tools: []*server.Tool{g.tool("job", mcp.TaskSupportOptional, text("never"))}})
		c := s.create("job")
		if c.CreatedAt != "2026-07-28T12:00:00.000Z" {
			t.Errorf("createdAt %q, want the simulated clock's time", c.CreatedAt)
		}
		sim.Advance(time.Minute - time.Millisecond)
		if got := s.get(c.TaskID); got.Status != tasks.Working {
			t.Fatalf("a millisecond before its ttl: %q, want working", got.Status)
		}
		sim.Advance(time.Millisecond)
		if got := s.get(c.TaskID); got.Status != tasks.Failed || got.Error == nil || got.Error.Code != mcp.CodeInternalError {
			t.Fatalf("at its ttl: %q %v, want failed with -32603", got.Status, got.Error)
		}
		synctest.Wait()
		select {
		case <-g.stopped:
		default:
			t.Error("the tool of an expired task still runs")
		}
		sim.Advance(time.Minute) // the grace: one minute at a 500 ms poll interval
		wantError(t, s.taskCall(tasks.MethodGet, c.TaskID, metaTasks()), http.StatusOK, mcp.CodeInvalidParams, "expired")
		if st := s.srv.Stats(); st.Tasks != 0 || st.Live != 0 || st.Bytes != 0 {
			t.Errorf("after expiry the server holds %+v, want nothing", st)
		}
	})
}
