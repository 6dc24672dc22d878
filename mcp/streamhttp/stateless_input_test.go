package streamhttp_test

import (
	"context"
	"encoding/json"
	"errors"
	"maps"
	"net/http"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/tasksim/tasksim/clock"
	"github.com/tasksim/tasksim/mcp"
	rev "github.com/tasksim/tasksim/mcp/rev20260728"
	"github.com/tasksim/tasksim/mcp/rev20260728/tasks"
	"github.com/tasksim/tasksim/mcp/server"
)

// These tests drive the client's input in 2026-07-28 through the built-in
// conformance fixtures, with raw HTTP requests inside synctest bubbles:
// input asked by a running task (tasks/get shows it, tasks/update answers
// it) and input asked before a task by a multi round-trip request.

// metaTasksElicit is a well-formed _meta that declares the tasks
// extension and elicitation.
func metaTasksElicit() string {
	return strings.Replace(metaTasks(), `"io.modelcontextprotocol/clientCapabilities":{`,
		`"io.modelcontextprotocol/clientCapabilities":{"elicitation":{},`, 1)
}

// callWith sends a tools/call of tool with the params' other members
// fields and meta.
func (s *statelessServer) callWith(tool, fields, meta string) *answer {
	s.t.Helper()
	return s.do(http.MethodPost, request(mcp.MethodToolsCall, `"name":"`+tool+`",`+fields, meta), headers(mcp.MethodToolsCall, tool))
}

// createWith calls tool with fields, declaring the extension and
// elicitation, and returns the task the server created.
func (s *statelessServer) createWith(tool, fields string) tasks.CreateTaskResult {
	s.t.Helper()
	m := s.callWith(tool, fields, metaTasksElicit()).last(s.t)
	var c tasks.CreateTaskResult
	if m.Error != nil || json.Unmarshal(m.Result, &c) != nil || c.Validate() != nil {
		s.t.Fatalf("tools/call %s: %s %v, want a CreateTaskResult", tool, m.Result, m.Error)
	}
	return c
}

// update sends tasks/update for id with the inputResponses answers and
// checks the empty ack.
func (s *statelessServer) update(id, answers string) {
	s.t.Helper()
	a := s.do(http.MethodPost, request(tasks.MethodUpdate, `"taskId":"`+id+`","inputResponses":`+answers, metaTasks()), headers(tasks.MethodUpdate, id))
	m := a.last(s.t)
	var members map[string]json.RawMessage
	if m.Error != nil || json.Unmarshal(m.Result, &members) != nil {
		s.t.Fatalf("tasks/update: %s %v", m.Result, m.Error)
	}
	delete(members, "_meta")
	if len(members) != 1 || string(members["resultType"]) != `"complete"` {
		s.t.Errorf("tasks/update answered %s, want the empty ack (Tasks, \"Task Update Requests\")", m.Result)
	}
}

// resultText is the text of the one content block of an inlined result.
func resultText(t *testing.T, raw json.RawMessage) (string, bool) {
	t.Helper()
	var res mcp.CallToolResult
	if err := json.Unmarshal(raw, &res); err != nil || len(res.Content) != 1 {
		t.Fatalf("inlined result %s (%v), want one content block", raw, err)
	}
	return res.Content[0].Text, res.IsError
}

func accept(content string) string { return `{"action":"accept","content":` + content + `}` }

// A task that asks for input is input_required with the request under a
// server-minted key, shown again on every tasks/get until answered;
// tasks/update is acked with the empty result and the task resumes to
// its result (Tasks, "Task Status", "Task Update Requests").
func TestStatelessTaskAsksInput(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newMemStatelessServer(t, nil)
		c := s.createWith(server.ToolConfirmDelete, `"arguments":{"filename":"a.txt"}`)
		synctest.Wait()
		g := s.get(c.TaskID)
		if g.Status != tasks.InputRequired || len(g.InputRequests) != 1 {
			t.Fatalf("task %+v, want input_required with one input request", g)
		}
		var key string
		for k, q := range g.InputRequests {
			key = k
			if q.Method != rev.MethodElicitationCreate || !strings.Contains(string(q.Params), "Delete a.txt?") {
				t.Errorf("input request %s: %s %s, want the elicitation asking to delete a.txt", k, q.Method, q.Params)
			}
		}
		if again := s.get(c.TaskID); !slices.Equal(slices.Collect(maps.Keys(again.InputRequests)), []string{key}) {
			t.Errorf("second tasks/get shows %v, want the same key %s again", again.InputRequests, key)
		}
		s.update(c.TaskID, `{"`+key+`":`+accept(`{"confirm":true}`)+`}`)
		synctest.Wait()
		g = s.get(c.TaskID)
		if g.Status != tasks.Completed {
			t.Fatalf("after the answer: %q, want completed", g.Status)
		}
		if text, isErr := resultText(t, g.Result); isErr || text != "Deleted a.txt (pretend)." {
			t.Errorf("result %q (isError %v), want the confirmed deletion", text, isErr)
		}
	})
}

// Two requests at once, answered one at a time: the task stays
// input_required with only the unanswered key; keys never issued and keys
// answered already are ignored; the last answer resumes it (Tasks, "Task
// Update Requests").
func TestStatelessTaskPartialUpdate(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newMemStatelessServer(t, nil)
		c := s.createWith(server.ToolMultiInput, `"arguments":{}`)
		synctest.Wait()
		keys := slices.Sorted(maps.Keys(s.get(c.TaskID).InputRequests))
		if len(keys) != 2 {
			t.Fatalf("keys %v, want two outstanding", keys)
		}
		s.update(c.TaskID, `{"`+keys[0]+`":`+accept(`{"name":"one"}`)+`,"never-issued":`+accept(`{"name":"x"}`)+`}`)
		synctest.Wait()
		g := s.get(c.TaskID)
		if got := slices.Collect(maps.Keys(g.InputRequests)); g.Status != tasks.InputRequired || !slices.Equal(got, keys[1:]) {
			t.Fatalf("after a partial answer: %q with keys %v, want input_required with %v only", g.Status, got, keys[1:])
		}
		s.update(c.TaskID, `{"`+keys[0]+`":`+accept(`{"name":"again"}`)+`}`)
		s.update(c.TaskID, `{"`+keys[1]+`":`+accept(`{"name":"two"}`)+`}`)
		synctest.Wait()
		g = s.get(c.TaskID)
		if g.Status != tasks.Completed {
			t.Fatalf("after both answers: %q, want completed", g.Status)
		}
		if text, _ := resultText(t, g.Result); text != "Received: one, two" {
			t.Errorf("result %q, want the first answer to each key", text)
		}
	})
}

// A task whose creating request did not declare elicitation does not ask
// for it: the task fails with -32021 naming elicitation (2026-07-28 Multi
// Round-Trip Requests, "Server Requirements" 7).
func TestStatelessTaskInputNeedsElicitation(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newMemStatelessServer(t, nil)
		m := s.callWith(server.ToolConfirmDelete, `"arguments":{"filename":"a.txt"}`, metaTasks()).last(t)
		var c tasks.CreateTaskResult
		if m.Error != nil || json.Unmarshal(m.Result, &c) != nil || c.TaskID == "" {
			t.Fatalf("tools/call: %s %v", m.Result, m.Error)
		}
		synctest.Wait()
		g := s.get(c.TaskID)
		if g.Status != tasks.Failed || g.Error == nil || g.Error.Code != rev.CodeMissingRequiredClientCapability {
			t.Fatalf("task %+v, want failed with -32021", g)
		}
		var data rev.MissingCapabilityData
		if err := rev.DecodeErrorData(g.Error, &data); err != nil || !data.RequiredCapabilities.HasElicitation() {
			t.Errorf("error data %s (%v), want requiredCapabilities.elicitation", g.Error.Data, err)
		}
	})
}

// A task cancelled while it waits for input is cancelled with nothing
// outstanding, and a late answer changes nothing (Tasks, "Task Status":
// terminal statuses never change).
func TestStatelessTaskCancelWhileInputRequired(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newMemStatelessServer(t, nil)
		c := s.createWith(server.ToolConfirmDelete, `"arguments":{"filename":"a.txt"}`)
		synctest.Wait()
		keys := slices.Collect(maps.Keys(s.get(c.TaskID).InputRequests))
		if m := s.taskCall(tasks.MethodCancel, c.TaskID, metaTasks()).last(t); m.Error != nil {
			t.Fatalf("tasks/cancel: %v", m.Error)
		}
		s.update(c.TaskID, `{"`+keys[0]+`":`+accept(`{"confirm":true}`)+`}`)
		synctest.Wait()
		if g := s.get(c.TaskID); g.Status != tasks.Cancelled || g.InputRequests != nil || g.Result != nil {
			t.Errorf("task %+v, want cancelled with nothing inlined", g)
		}
		if st := s.srv.Stats(); st.Live != 0 {
			t.Errorf("%d live tasks after cancel", st.Live)
		}
	})
}

// mrtrRound1 calls test_tool_with_task and returns its
// InputRequiredResult.
func mrtrRound1(t *testing.T, s *statelessServer, meta string) rev.InputRequiredResult {
	t.Helper()
	m := s.callWith(server.ToolWithTask, `"arguments":{}`, meta).last(t)
	var ir rev.InputRequiredResult
	if m.Error != nil || json.Unmarshal(m.Result, &ir) != nil || ir.Validate() != nil {
		t.Fatalf("round 1: %s %v, want an InputRequiredResult", m.Result, m.Error)
	}
	if strings.Contains(string(m.Result), `"taskId"`) {
		t.Errorf("round 1 carries a taskId: %s", m.Result)
	}
	return ir
}

// retryFields are the params members of a retry answering user_name
// with name, echoing state.
func retryFields(args, name, state string) string {
	f := `"arguments":` + args + `,"inputResponses":{"user_name":` + accept(`{"name":"`+name+`"}`) + `}`
	if state != "" {
		f += `,"requestState":"` + state + `"`
	}
	return f
}

// Input before a task: round 1 is an InputRequiredResult with
// inputRequests and a requestState and no task; the retry (a new id, the
// answers, the state echoed) gets the CreateTaskResult, without
// requestState, and the task's result holds the answer (2026-07-28 Multi
// Round-Trip Requests; Tasks, "Task Creation").
func TestStatelessMRTRBeforeTask(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newMemStatelessServer(t, nil)
		ir := mrtrRound1(t, s, metaTasksElicit())
		if q, ok := ir.InputRequests["user_name"]; !ok || q.Method != rev.MethodElicitationCreate || ir.RequestState == "" {
			t.Fatalf("round 1 %+v, want an elicitation under user_name and a requestState", ir)
		}
		if st := s.srv.Stats(); st.Tasks != 0 {
			t.Errorf("round 1 made %d tasks, want none", st.Tasks)
		}
		body := strings.Replace(request(mcp.MethodToolsCall, `"name":"test_tool_with_task",`+retryFields(`{}`, "Alice", ir.RequestState), metaTasksElicit()),
			`"id":7`, `"id":8`, 1)
		m := s.do(http.MethodPost, body, headers(mcp.MethodToolsCall, server.ToolWithTask)).last(t)
		var c tasks.CreateTaskResult
		if m.Error != nil || json.Unmarshal(m.Result, &c) != nil || c.Validate() != nil {
			t.Fatalf("round 2: %s %v, want a CreateTaskResult", m.Result, m.Error)
		}
		for _, k := range []string{`"requestState"`, `"inputRequests"`} {
			if strings.Contains(string(m.Result), k) {
				t.Errorf("round 2 CreateTaskResult carries %s: %s", k, m.Result)
			}
		}
		synctest.Wait()
		g := s.get(c.TaskID)
		if text, _ := resultText(t, g.Result); g.Status != tasks.Completed || !strings.Contains(text, "Alice") {
			t.Errorf("task %q with %q, want completed with the gathered name", g.Status, text)
		}
	})
}

// The requestState is attacker-controlled input: a changed one, one made
// for other arguments and an expired one are refused with -32602; a retry
// without it is asked again; a request that cannot be asked (no
// elicitation declared) is -32021 naming elicitation, and one without the
// tasks extension -32021 naming it before any round (2026-07-28 Multi
// Round-Trip Requests, "Server Requirements" 4, 5 and 7).
func TestStatelessMRTRRequestStateChecked(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		sim := clock.NewSim(time.Date(2026, 7, 28, 12, 0, 0, 0, time.UTC))
		s := newMemStatelessServer(t, &server.Options{Clock: sim})
		state := mrtrRound1(t, s, metaTasksElicit()).RequestState
		flip := "A"
		if strings.HasSuffix(state, flip) {
			flip = "B"
		}
		tampered := state[:len(state)-1] + flip
		for _, tc := range []struct{ name, fields, says string }{
			{"tampered", retryFields(`{}`, "Alice", tampered), "fails verification"},
			{"other arguments", retryFields(`{"x":1}`, "Alice", state), "another request"},
		} {
			wantError(t, s.callWith(server.ToolWithTask, tc.fields, metaTasksElicit()), http.StatusOK, mcp.CodeInvalidParams, tc.says)
		}
		m := s.callWith(server.ToolWithTask, retryFields(`{}`, "Alice", ""), metaTasksElicit()).last(t)
		if typ, err := rev.ResultTypeOf(m.Result); err != nil || typ != rev.ResultInputRequired {
			t.Errorf("retry without requestState: %s %v, want to be asked again", m.Result, m.Error)
		}
		e := wantError(t, s.callWith(server.ToolWithTask, `"arguments":{}`, metaTasks()), http.StatusBadRequest, rev.CodeMissingRequiredClientCapability)
		var data rev.MissingCapabilityData
		if err := rev.DecodeErrorData(e, &data); err != nil || !data.RequiredCapabilities.HasElicitation() {
			t.Errorf("error data %s (%v), want requiredCapabilities.elicitation", e.Data, err)
		}
		plain := strings.Replace(metaJSON(rev.ProtocolVersion), `"io.modelcontextprotocol/clientCapabilities":{}`,
			`"io.modelcontextprotocol/clientCapabilities":{"elicitation":{}}`, 1)
		e = wantError(t, s.callWith(server.ToolWithTask, `"arguments":{}`, plain), http.StatusBadRequest, rev.CodeMissingRequiredClientCapability)
		if err := rev.DecodeErrorData(e, &data); err != nil || !data.RequiredCapabilities.HasExtension(tasks.ExtensionID) {
			t.Errorf("error data %s (%v), want requiredCapabilities naming the tasks extension", e.Data, err)
		}
		sim.Advance(10*time.Minute + time.Millisecond)
		wantError(t, s.callWith(server.ToolWithTask, retryFields(`{}`, "Alice", state), metaTasksElicit()), http.StatusOK, mcp.CodeInvalidParams, "expired")
		if st := s.srv.Stats(); st.Tasks != 0 {
			t.Errorf("refused retries made %d tasks, want none", st.Tasks)
		}
	})
}

// The conformance suite's tasks fixtures behave as its scenarios expect:
// greet plain; slow_compute a task that completes after its seconds on
// the server's clock, or ends cancelled when cancelled; failing_job
// completed with isError after a second; protocol_error_job failed with
// the error inlined and no result.
func TestStatelessConformanceFixtures(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		sim := clock.NewSim(time.Date(2026, 7, 28, 12, 0, 0, 0, time.UTC))
		s := newMemStatelessServer(t, &server.Options{Clock: sim})
		var res rev.CallToolResult
		raw := s.callWith(server.ToolGreet, `"arguments":{"name":"World"}`, metaTasks()).last(t).Result
		if err := json.Unmarshal(raw, &res); err != nil ||
			res.ResultType != rev.ResultComplete || len(res.Content) != 1 || res.Content[0].Text != "Hello, World!" {
			t.Errorf("greet: %+v (%v), want a complete Hello, World!", res, err)
		}
		if strings.Contains(string(raw), `"taskId"`) {
			t.Errorf("greet made a task: %s", raw)
		}
		done := s.createWith(server.ToolSlowCompute, `"arguments":{"seconds":2,"label":"x"}`)
		cancelled := s.createWith(server.ToolSlowCompute, `"arguments":{"seconds":60}`)
		failing := s.createWith(server.ToolFailingJob, `"arguments":{}`)
		broken := s.createWith(server.ToolProtocolErrorJob, `"arguments":{}`)
		if m := s.taskCall(tasks.MethodCancel, cancelled.TaskID, metaTasks()).last(t); m.Error != nil {
			t.Fatalf("tasks/cancel: %v", m.Error)
		}
		synctest.Wait()
		if g := s.get(failing.TaskID); g.Status != tasks.Working {
			t.Errorf("failing_job before its second: %q, want working", g.Status)
		}
		sim.Advance(2 * time.Second)
		synctest.Wait()
		if g := s.get(done.TaskID); g.Status != tasks.Completed {
			t.Errorf("slow_compute after its seconds: %q, want completed", g.Status)
		} else if text, isErr := resultText(t, g.Result); isErr || !strings.Contains(text, `"x"`) {
			t.Errorf("slow_compute result %q (isError %v), want its label", text, isErr)
		}
		if g := s.get(cancelled.TaskID); g.Status != tasks.Cancelled {
			t.Errorf("slow_compute cancelled: %q, want cancelled", g.Status)
		}
		if g := s.get(failing.TaskID); g.Status != tasks.Completed {
			t.Errorf("failing_job: %q, want completed", g.Status)
		} else if _, isErr := resultText(t, g.Result); !isErr {
			t.Error("failing_job: result without isError")
		}
		if g := s.get(broken.TaskID); g.Status != tasks.Failed || g.Error == nil || g.Error.Code != mcp.CodeInternalError || g.Result != nil {
			t.Errorf("protocol_error_job: %+v, want failed with -32603 inlined and no result", g)
		}
		if st := s.srv.Stats(); st.Live != 0 {
			t.Errorf("%d live tasks at the end", st.Live)
		}
	})
}

// The tasks fixtures, and the other 2026-07-28 conformance fixtures, are
// served to 2026-07-28 requests only: a 2025-11-25 session's tools/list
// is as it was and a call of one is "Unknown tool".
func TestTasksFixturesNotInSessions(t *testing.T) {
	s := newStatelessServer(t)
	a := s.do(http.MethodPost, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`, nil)
	legacy := map[string]string{"Mcp-Session-Id": a.header.Get("Mcp-Session-Id"), "MCP-Protocol-Version": "2025-11-25"}
	var list mcp.ListToolsResult
	if err := json.Unmarshal(s.do(http.MethodPost, `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`, legacy).last(t).Result, &list); err != nil {
		t.Fatal(err)
	}
	fixtures := map[string]bool{}
	for _, f := range append(server.TasksConformanceTools(), server.RevisionConformanceTools()...) {
		fixtures[f.Name] = true
	}
	for _, tool := range list.Tools {
		if fixtures[tool.Name] {
			t.Errorf("a 2025-11-25 session lists %s", tool.Name)
		}
	}
	if len(list.Tools) != len(server.BuiltinTools())-len(fixtures) {
		t.Errorf("a 2025-11-25 session lists %d tools, want the %d it listed before", len(list.Tools), len(server.BuiltinTools())-len(fixtures))
	}
	m := s.do(http.MethodPost, `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"greet","arguments":{"name":"x"}}}`, legacy).last(t)
	if m.Error == nil || !strings.Contains(m.Error.Message, "Unknown tool") {
		t.Errorf("greet in a session: %s %v, want Unknown tool", m.Result, m.Error)
	}
	var stateless rev.ListToolsResult
	if err := json.Unmarshal(s.do(http.MethodPost, request(mcp.MethodToolsList, "", metaJSON(rev.ProtocolVersion)), headers(mcp.MethodToolsList, "")).last(t).Result, &stateless); err != nil {
		t.Fatal(err)
	}
	if len(stateless.Tools) != len(server.BuiltinTools()) {
		t.Errorf("a 2026-07-28 tools/list has %d tools, want all %d", len(stateless.Tools), len(server.BuiltinTools()))
	}
}

// A tool that stops waiting for its input withdraws the request: its task
// is working again with nothing outstanding, and an answer that comes
// later is ignored.
func TestStatelessTaskInputWithdrawn(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		sim := clock.NewSim(time.Date(2026, 7, 28, 12, 0, 0, 0, time.UTC))
		impatient := &server.Tool{
			Tool: mcp.Tool{Name: "impatient", InputSchema: json.RawMessage(`{"type":"object"}`),
				Execution: &mcp.ToolExecution{TaskSupport: mcp.TaskSupportRequired}},
			Prepare: func(json.RawMessage) (server.RunFunc, error) {
				return func(ctx context.Context, c *server.Call) (*mcp.CallToolResult, error) {
					askCtx, cancel := context.WithCancel(ctx)
					go func() { _ = c.Sleep(ctx, time.Second); cancel() }()
					_, err := c.Ask(askCtx, rev.InputRequest{Method: rev.MethodElicitationCreate, Params: json.RawMessage(`{"mode":"form","message":"?","requestedSchema":{"type":"object","properties":{}}}`)})
					if err == nil {
						return nil, errors.New("answered, but nobody answered")
					}
					if err := c.Sleep(ctx, time.Second); err != nil {
						return nil, err
					}
					return &mcp.CallToolResult{Content: []mcp.ContentBlock{mcp.TextBlock("gave up")}}, nil
				}, nil
			},
		}
		s := newMemStatelessServer(t, &server.Options{Clock: sim, Tools: []*server.Tool{impatient}})
		c := s.createWith("impatient", `"arguments":{}`)
		synctest.Wait()
		keys := slices.Collect(maps.Keys(s.get(c.TaskID).InputRequests))
		if len(keys) != 1 {
			t.Fatalf("keys %v, want one outstanding", keys)
		}
		sim.Advance(time.Second)
		synctest.Wait()
		if g := s.get(c.TaskID); g.Status != tasks.Working || g.InputRequests != nil {
			t.Fatalf("after the tool stopped waiting: %q with %v, want working with nothing outstanding", g.Status, g.InputRequests)
		}
		s.update(c.TaskID, `{"`+keys[0]+`":`+accept(`{}`)+`}`)
		sim.Advance(time.Second)
		synctest.Wait()
		if g := s.get(c.TaskID); g.Status != tasks.Completed {
			t.Errorf("at the end: %q, want completed", g.Status)
		} else if text, _ := resultText(t, g.Result); text != "gave up" {
			t.Errorf("result %q, want the tool's own", text)
		}
	})
}
