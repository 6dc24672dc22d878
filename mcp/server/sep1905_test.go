package server_test

import (
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/tasksim/tasksim/mcp"
	"github.com/tasksim/tasksim/mcp/server"
)

// Each test here is one of SEP-1905's test scenarios (section "Test
// Scenarios"), checked from the server's side over real HTTP.

// streamAnswer collects the responses of a streaming call and checks the
// invariants every such answer has: same id, seqNr from 1 strictly
// increasing with no repeat, isComplete only on the last response
// (S1905-SEQNR, S1905-COMPLETE).
func streamAnswer(t *testing.T, a *answer) (task mcp.Task, segs []mcp.Segment, last mcp.ToolCallResponse) {
	t.Helper()
	rs := a.responses()
	if len(rs) == 0 {
		t.Fatal("no response")
	}
	for i, m := range rs {
		if m.ID != rs[0].ID {
			t.Errorf("response %d has id %s, want the request's %s", i, m.ID, rs[0].ID)
		}
		if m.Error != nil {
			t.Fatalf("response %d is an error: %v", i, m.Error)
		}
		r := decode[mcp.ToolCallResponse](t, m.Result)
		if i == 0 {
			if r.Task == nil {
				t.Fatalf("initial streaming response has no task: %s", m.Result)
			}
			task = *r.Task
		}
		if id, ok := r.Meta.RelatedTaskID(); !ok || id != task.TaskID {
			t.Errorf("response %d: related-task meta %q, want %q", i, id, task.TaskID)
		}
		complete := r.IsComplete != nil && *r.IsComplete
		if complete != (i == len(rs)-1) {
			t.Errorf("response %d of %d: isComplete=%v", i+1, len(rs), complete)
		}
		segs = append(segs, r.PartialContent...)
		last = r
	}
	for i, s := range segs {
		if s.SeqNr != int64(i+1) {
			t.Errorf("segment %d has seqNr %d, want %d (from 1, +1, no repeat)", i, s.SeqNr, i+1)
		}
	}
	return task, segs, last
}

func TestSEP1905Scenario1ImmediateComplete(t *testing.T) {
	// On a clock nobody moves the immediate window never closes: the
	// instant tool is in time however slowly it is scheduled.
	url, _ := serve(t, &server.Options{Clock: newSimClock()})
	c := connect(t, url, mcp.ClientCapabilities{})
	a := c.post(mcp.MethodToolsCall, callParams(server.ToolInstant, map[string]any{"text": "now"}, modes(mcp.ModeImmediate)))
	if a.sse {
		t.Error("an immediate answer came as an SSE stream; want application/json")
	}
	res := decode[mcp.ToolCallResponse](t, a.last().Result)
	if got := texts(res.Content); !slices.Equal(got, []string{"now"}) {
		t.Fatalf("content %q, want [now]", got)
	}
	if res.PartialContent != nil || res.Task != nil {
		t.Errorf("immediate result must use content only: %s", a.last().Result)
	}
	id, ok := res.Meta.RelatedTaskID()
	if !ok {
		t.Fatal("immediate result without related-task meta, yet a task was created")
	}
	task := result[mcp.Task](c, mcp.MethodTasksGet, map[string]any{"taskId": id})
	if task.Status != mcp.StatusCompleted {
		t.Errorf("task status %s, want completed", task.Status)
	}
	again := result[mcp.CallToolResult](c, mcp.MethodTasksResult, map[string]any{"taskId": id})
	if diff := cmp.Diff(texts(res.Content), texts(again.Content)); diff != "" {
		t.Errorf("tasks/result differs from the immediate result (-immediate +tasks/result):\n%s", diff)
	}
}

func TestSEP1905Scenario2TaskMode(t *testing.T) {
	clk := newSimClock()
	url, _ := serve(t, &server.Options{Clock: clk})
	c := connect(t, url, mcp.ClientCapabilities{})
	for i, tp := range []*mcp.TaskParams{modes(mcp.ModeTask), {}} {
		created := result[mcp.CreateTaskResult](c, mcp.MethodToolsCall, callParams(server.ToolSlowText, map[string]any{"chunks": 2, "chunkSize": 8, "intervalMs": 1}, tp))
		if created.Task.Status != mcp.StatusWorking || created.Task.TaskID == "" {
			t.Fatalf("CreateTaskResult task %+v, want a working task", created.Task)
		}
		// A poll while the tool waits for its chunks finds it working.
		start := time.Duration(i) * 2 * time.Millisecond // the clock moved 2 ms per round
		clk.waitTimer(t, start+time.Millisecond)
		if got := result[mcp.Task](c, mcp.MethodTasksGet, map[string]any{"taskId": created.Task.TaskID}); got.Status != mcp.StatusWorking {
			t.Fatalf("status %s while polling, want working", got.Status)
		}
		clk.fire(t, start+time.Millisecond)
		clk.fire(t, start+2*time.Millisecond)
		res := result[mcp.ToolCallResponse](c, mcp.MethodTasksResult, map[string]any{"taskId": created.Task.TaskID})
		if diff := cmp.Diff(chunkTexts(2, 8), texts(res.Content)); diff != "" || res.PartialContent != nil {
			t.Errorf("final result not in content format (-want +got):\n%s", diff)
		}
		if got := result[mcp.Task](c, mcp.MethodTasksGet, map[string]any{"taskId": created.Task.TaskID}); got.Status != mcp.StatusCompleted {
			t.Errorf("status %s after tasks/result, want completed", got.Status)
		}
	}
}

func TestSEP1905Scenario3InitialResponseOnly(t *testing.T) {
	url, _ := serve(t, &server.Options{Clock: newSimClock()}) // the window never closes

	c := connect(t, url, mcp.ClientCapabilities{})
	a := c.post(mcp.MethodToolsCall, callParams(server.ToolInstant, map[string]any{"text": "all at once"}, modes(mcp.ModeStreaming)))
	rs := a.responses()
	if len(rs) != 1 {
		t.Fatalf("got %d responses, want one initial response with isComplete", len(rs))
	}
	task, segs, last := streamAnswer(t, a)
	if !*last.IsComplete || task.Status != mcp.StatusCompleted {
		t.Errorf("isComplete=%v status=%s, want true and completed", *last.IsComplete, task.Status)
	}
	if got := texts(mcp.MergeSegments(segs)); !slices.Equal(got, []string{"all at once"}) {
		t.Errorf("segments %q", got)
	}
}

func TestSEP1905Scenario4And5MultipleResponsesOverSSE(t *testing.T) {
	clk := newSimClock()
	url, _ := serve(t, &server.Options{Clock: clk})
	c := connect(t, url, mcp.ClientCapabilities{})
	// The first chunk (at 2 ms, inside the window) decides: the initial
	// response carries it, each later chunk is a response of its own, and
	// the final response (isComplete) follows the last.
	first := clk.fireLater(t, 2*time.Millisecond, 2*time.Millisecond)
	s := c.open(mcp.MethodToolsCall, callParams(server.ToolSlowText, map[string]any{"chunks": 4, "chunkSize": 10, "intervalMs": 2}, modes(mcp.ModeStreaming)))
	<-first
	a := &answer{sse: true, msgs: []*mcp.Message{s.next()}}
	for i := 2; i <= 4; i++ {
		clk.fire(t, time.Duration(2*i)*time.Millisecond)
		a.msgs = append(a.msgs, s.next())
	}
	a.msgs = append(a.msgs, s.rest()...)
	if len(a.responses()) != 5 {
		t.Fatalf("got %d responses, want 5: one per chunk and the final one", len(a.responses()))
	}
	task, segs, last := streamAnswer(t, a)
	if diff := cmp.Diff(chunkTexts(4, 10), texts(mcp.MergeSegments(segs))); diff != "" {
		t.Errorf("segments (-want +got):\n%s", diff)
	}
	if last.IsError {
		t.Error("last response isError")
	}
	if _, ok := last.Meta[mcp.MetaCompletedAt]; !ok {
		t.Errorf("final streaming response lacks %s (discovery delay needs it)", mcp.MetaCompletedAt)
	}
	got := result[mcp.Task](c, mcp.MethodTasksGet, map[string]any{"taskId": task.TaskID})
	if got.Status != mcp.StatusCompleted {
		t.Errorf("status after isComplete: %s, want completed", got.Status)
	}
	// S1905-MERGE: tasks/result without lastSeqNr is the merged segments.
	final := result[mcp.CallToolResult](c, mcp.MethodTasksResult, map[string]any{"taskId": task.TaskID})
	if diff := cmp.Diff(texts(mcp.MergeSegments(segs)), texts(final.Content)); diff != "" {
		t.Errorf("tasks/result vs merged segments (-segments +result):\n%s", diff)
	}
}

func TestSEP1905Scenario6ResumeWithLastSeqNr(t *testing.T) {
	clk := newSimClock()
	url, _ := serve(t, &server.Options{Clock: clk})
	c := connect(t, url, mcp.ClientCapabilities{})
	window := clk.fireLater(t, 100*time.Millisecond, server.DefaultImmediateWindow)
	s := c.open(mcp.MethodToolsCall, callParams(server.ToolSlowText, map[string]any{"chunks": 5, "chunkSize": 8, "intervalMs": 100}, modes(mcp.ModeStreaming)))
	<-window
	initial := decode[mcp.ToolCallResponse](t, s.next().Result)
	taskID := initial.Task.TaskID
	for i := 1; i <= 3; i++ {
		clk.fire(t, time.Duration(i)*100*time.Millisecond)
		r := decode[mcp.ToolCallResponse](t, s.next().Result)
		if len(r.PartialContent) != 1 || r.PartialContent[0].SeqNr != int64(i) {
			t.Fatalf("response %d: %+v", i, r.PartialContent)
		}
	}
	s.cut()
	clk.fire(t, 400*time.Millisecond)      // chunk 4 produced while disconnected
	clk.waitTimer(t, 500*time.Millisecond) // the tool emitted it and waits for 5
	got := result[mcp.PartialResult](c, mcp.MethodTasksResult, map[string]any{"taskId": taskID, "lastSeqNr": 3})
	if len(got.PartialContent) != 1 || got.PartialContent[0].SeqNr != 4 || got.IsComplete {
		t.Fatalf("resume after 3: %+v complete=%v, want segment 4 and isComplete false", got.PartialContent, got.IsComplete)
	}
	// At the end: lastSeqNr equal to the highest -> empty with the right isComplete.
	empty := result[mcp.PartialResult](c, mcp.MethodTasksResult, map[string]any{"taskId": taskID, "lastSeqNr": 4})
	if len(empty.PartialContent) != 0 || empty.IsComplete {
		t.Errorf("lastSeqNr at the highest while working: %+v complete=%v, want [] false", empty.PartialContent, empty.IsComplete)
	}
	clk.fire(t, 500*time.Millisecond)
	result[mcp.CallToolResult](c, mcp.MethodTasksResult, map[string]any{"taskId": taskID}) // until terminal
	for _, last := range []int{5, 7} {
		done := result[mcp.PartialResult](c, mcp.MethodTasksResult, map[string]any{"taskId": taskID, "lastSeqNr": last})
		if len(done.PartialContent) != 0 || !done.IsComplete {
			t.Errorf("lastSeqNr %d after completion: %+v complete=%v, want [] true", last, done.PartialContent, done.IsComplete)
		}
	}
}

func TestSEP1905Scenario7GapFill(t *testing.T) {
	url, _ := serve(t, nil)
	c := connect(t, url, mcp.ClientCapabilities{})
	a := c.post(mcp.MethodToolsCall, callParams(server.ToolSlowText, map[string]any{"chunks": 5, "chunkSize": 8, "intervalMs": 1}, modes(mcp.ModeStreaming)))
	task, _, _ := streamAnswer(t, a)
	// A client that holds 1, 3 and 5 asks from its highest contiguous seqNr.
	got := result[mcp.PartialResult](c, mcp.MethodTasksResult, map[string]any{"taskId": task.TaskID, "lastSeqNr": 1})
	var nrs []int64
	for _, s := range got.PartialContent {
		nrs = append(nrs, s.SeqNr)
	}
	if !slices.Equal(nrs, []int64{2, 3, 4, 5}) || !got.IsComplete {
		t.Errorf("lastSeqNr 1 gave %v complete=%v, want [2 3 4 5] true", nrs, got.IsComplete)
	}
	if id, _ := got.Meta.RelatedTaskID(); id != task.TaskID {
		t.Errorf("related-task meta %q", id)
	}
}

func TestSEP1905Scenario8ImmediateFallback(t *testing.T) {
	cases := []struct {
		name  string
		tool  string
		modes []mcp.ResponseMode
		want  string // "task" or "streaming"
	}{
		{"not incremental -> task", server.ToolSleep, []mcp.ResponseMode{mcp.ModeImmediate, mcp.ModeStreaming}, "task"},
		{"incremental, streaming allowed -> streaming", server.ToolSlowText, []mcp.ResponseMode{mcp.ModeImmediate, mcp.ModeStreaming}, "streaming"},
		{"incremental, streaming not allowed -> task", server.ToolSlowText, []mcp.ResponseMode{mcp.ModeImmediate, mcp.ModeTask}, "task"},
		{"incremental, only immediate -> task", server.ToolSlowText, []mcp.ResponseMode{mcp.ModeImmediate}, "task"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			// Both tools take far longer than the immediate window: the
			// window closes at 20 ms of simulated time, the first chunk is
			// due at 150 ms.
			clk := newSimClock()
			url, _ := serve(t, &server.Options{Clock: clk})
			c := connect(t, url, mcp.ClientCapabilities{})
			ready := 150 * time.Millisecond // slow_text's first chunk
			if tc.tool == server.ToolSleep {
				ready = 300 * time.Millisecond
			}
			window := clk.fireLater(t, ready, server.DefaultImmediateWindow)
			params := callParams(tc.tool, map[string]any{"durationMs": 300, "chunks": 2, "intervalMs": 150}, &mcp.TaskParams{ResponseModes: tc.modes})
			var a *answer
			if tc.want == "streaming" {
				// The chunks are fired only once the initial response is
				// here: the server decided on the window alone.
				s := c.open(mcp.MethodToolsCall, params)
				<-window
				a = &answer{sse: true, msgs: []*mcp.Message{s.next()}}
				clk.fire(t, 150*time.Millisecond)
				clk.fire(t, 300*time.Millisecond)
				a.msgs = append(a.msgs, s.rest()...)
			} else {
				a = c.post(mcp.MethodToolsCall, params)
				<-window
			}
			first := decode[mcp.ToolCallResponse](t, a.responses()[0].Result)
			switch tc.want {
			case "task":
				if len(a.responses()) != 1 || first.Task == nil || first.PartialContent != nil || first.Content != nil {
					t.Errorf("want a CreateTaskResult, got %s", a.responses()[0].Result)
				}
			case "streaming":
				if first.Task == nil || first.PartialContent == nil {
					t.Errorf("want a streaming initial response, got %s", a.responses()[0].Result)
				}
				streamAnswer(t, a)
			}
			if _, fellBack := first.Meta[mcp.MetaFallbackMode]; fellBack {
				t.Error("decision-process fallback must not carry the negotiation fallback warning")
			}
		})
	}
}

func TestSEP1905Scenario9TTLExpiryDuringStreaming(t *testing.T) {
	clk := newSimClock()
	url, _ := serve(t, &server.Options{Clock: clk})
	c := connect(t, url, mcp.ClientCapabilities{})
	window := clk.fireLater(t, 300*time.Millisecond, server.DefaultImmediateWindow)
	s := c.open(mcp.MethodToolsCall, callParams(server.ToolSlowText, map[string]any{"chunks": 10, "chunkSize": 8, "intervalMs": 300},
		&mcp.TaskParams{TTL: ptr[int64](1000), ResponseModes: []mcp.ResponseMode{mcp.ModeStreaming}}))
	<-window
	initial := decode[mcp.ToolCallResponse](t, s.next().Result)
	if *initial.Task.TTL != 1000 {
		t.Errorf("ttl %d, want the requested 1000", *initial.Task.TTL)
	}
	for i := 1; i <= 3; i++ {
		clk.fire(t, time.Duration(i)*300*time.Millisecond)
		s.next()
	}
	clk.fire(t, time.Second) // createdAt + ttl
	rest := s.rest()
	if len(rest) == 0 {
		t.Fatal("stream ended without a final response")
	}
	last := decode[mcp.ToolCallResponse](t, rest[len(rest)-1].Result)
	if last.IsComplete == nil || !*last.IsComplete || !last.IsError {
		t.Errorf("final response after expiry: %s, want isComplete and isError", rest[len(rest)-1].Result)
	}
	e := rpcError(c, mcp.MethodTasksGet, map[string]any{"taskId": initial.Task.TaskID})
	if e.Code != mcp.CodeInvalidParams || e.Message != "Failed to retrieve task: Task has expired" {
		t.Errorf("tasks/get of an expired task: %d %q", e.Code, e.Message)
	}
}

func TestSEP1905Scenario10CancelDuringStreaming(t *testing.T) {
	clk := newSimClock()
	url, _ := serve(t, &server.Options{Clock: clk})
	c := connect(t, url, mcp.ClientCapabilities{})
	window := clk.fireLater(t, 100*time.Millisecond, server.DefaultImmediateWindow)
	s := c.open(mcp.MethodToolsCall, callParams(server.ToolSlowText, map[string]any{"chunks": 10, "chunkSize": 8, "intervalMs": 100}, modes(mcp.ModeStreaming)))
	<-window
	taskID := decode[mcp.ToolCallResponse](t, s.next().Result).Task.TaskID
	clk.fire(t, 100*time.Millisecond)
	s.next()
	cancelled := result[mcp.Task](c, mcp.MethodTasksCancel, map[string]any{"taskId": taskID})
	if cancelled.Status != mcp.StatusCancelled {
		t.Fatalf("tasks/cancel answered status %s", cancelled.Status)
	}
	clk.advance(time.Second) // the tool would have produced more
	rest := s.rest()
	if len(rest) != 1 {
		t.Fatalf("after cancel got %d messages, want just the final one", len(rest))
	}
	final := decode[mcp.ToolCallResponse](t, rest[0].Result)
	if final.IsComplete == nil || !*final.IsComplete || len(final.PartialContent) != 0 {
		t.Errorf("final response after cancel: %s", rest[0].Result)
	}
	if got := result[mcp.Task](c, mcp.MethodTasksGet, map[string]any{"taskId": taskID}); got.Status != mcp.StatusCancelled {
		t.Errorf("status %s, want cancelled", got.Status)
	}
	// TASK-CANCEL-TERMINAL
	e := rpcError(c, mcp.MethodTasksCancel, map[string]any{"taskId": taskID})
	if e.Code != mcp.CodeInvalidParams {
		t.Errorf("cancel of a cancelled task: code %d, want -32602", e.Code)
	}
}

func TestSEP1905Scenario11FailureDuringStreaming(t *testing.T) {
	url, _ := serve(t, nil)
	c := connect(t, url, mcp.ClientCapabilities{})
	a := c.post(mcp.MethodToolsCall, callParams(server.ToolSlowText, map[string]any{"chunks": 5, "chunkSize": 8, "intervalMs": 1, "failAfter": 2}, modes(mcp.ModeStreaming)))
	task, segs, last := streamAnswer(t, a)
	if !last.IsError || !*last.IsComplete {
		t.Errorf("final response isError=%v isComplete=%v, want both true", last.IsError, *last.IsComplete)
	}
	if len(segs) != 3 || segs[2].Text == "" {
		t.Errorf("want 2 chunks then the error as segment 3, got %+v", segs)
	}
	if got := result[mcp.Task](c, mcp.MethodTasksGet, map[string]any{"taskId": task.TaskID}); got.Status != mcp.StatusFailed || got.StatusMessage == "" {
		t.Errorf("status %s %q, want failed with a message", got.Status, got.StatusMessage)
	}
	res := result[mcp.CallToolResult](c, mcp.MethodTasksResult, map[string]any{"taskId": task.TaskID})
	if !res.IsError || len(res.Content) != 3 {
		t.Errorf("tasks/result of a failed task: %+v", res)
	}
	// A failure before any chunk: the error in content format.
	a = c.post(mcp.MethodToolsCall, callParams(server.ToolSlowText, map[string]any{"chunks": 5, "intervalMs": 1, "failAfter": 0}, modes(mcp.ModeStreaming)))
	_, segs, last = streamAnswer(t, a)
	if len(segs) != 0 || len(last.Content) != 1 || !last.IsError {
		t.Errorf("failure without partial results: segments %v content %v", segs, last.Content)
	}
}

func TestSEP1905Scenario12NoDuplicateSeqNr(t *testing.T) {
	url, _ := serve(t, nil)
	c := connect(t, url, mcp.ClientCapabilities{})
	a := c.post(mcp.MethodToolsCall, callParams(server.ToolSlowText, map[string]any{"chunks": 20, "chunkSize": 4, "intervalMs": 0}, modes(mcp.ModeStreaming)))
	_, segs, _ := streamAnswer(t, a) // fails on any repeat across initial response and SSE
	if len(segs) != 20 {
		t.Errorf("got %d segments, want 20", len(segs))
	}
}

func TestSEP1905Scenario13NewClientOldServer(t *testing.T) {
	cases := []struct {
		name         string
		opts         *server.Options
		wantFallback bool
	}{
		{"server without SEP-1905", &server.Options{NoModes: true}, false},
		{"server with task mode only", &server.Options{Modes: []mcp.ResponseMode{mcp.ModeTask}}, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			url, srv := serve(t, tc.opts)
			caps := srv.Capabilities()
			if tc.opts.NoModes && caps.Tasks.Responses != nil {
				t.Error("an old server must not declare tasks.responses")
			}
			c := connect(t, url, mcp.ClientCapabilities{})
			a := c.post(mcp.MethodToolsCall, callParams(server.ToolSlowText, map[string]any{"chunks": 1, "intervalMs": 0}, modes(mcp.ModeStreaming)))
			res := decode[mcp.ToolCallResponse](t, a.last().Result)
			if res.Task == nil || res.PartialContent != nil || len(a.responses()) != 1 {
				t.Fatalf("want a CreateTaskResult, got %s", a.last().Result)
			}
			_, fellBack := res.Meta[mcp.MetaFallbackMode]
			if fellBack != tc.wantFallback {
				t.Errorf("fallback warning present=%v, want %v", fellBack, tc.wantFallback)
			}
			if tc.wantFallback && res.Meta[mcp.MetaFallbackMode] != "task" {
				t.Errorf("fallback-mode = %v, want task", res.Meta[mcp.MetaFallbackMode])
			}
		})
	}
}

func TestSEP1905Scenario14OldClientNewServer(t *testing.T) {
	url, _ := serve(t, nil)
	c := connect(t, url, mcp.ClientCapabilities{})
	a := c.post(mcp.MethodToolsCall, callParams(server.ToolInstant, nil, &mcp.TaskParams{TTL: ptr[int64](60000)}))
	res := decode[mcp.ToolCallResponse](t, a.last().Result)
	if res.Task == nil || res.Content != nil || res.PartialContent != nil {
		t.Fatalf("no responseModes must give task mode, got %s", a.last().Result)
	}
	if _, ok := res.Meta[mcp.MetaFallbackMode]; ok {
		t.Error("no fallback warning for a client that named no modes")
	}
}

func TestSEP1905Scenario15MixedMechanisms(t *testing.T) {
	url, _ := serve(t, nil)
	c := connect(t, url, mcp.ClientCapabilities{})
	// intervalMs 0: the first chunk exists before the initial response.
	a := c.post(mcp.MethodToolsCall, callParams(server.ToolSlowText, map[string]any{"chunks": 6, "chunkSize": 8, "intervalMs": 0}, modes(mcp.ModeStreaming)))
	first := decode[mcp.ToolCallResponse](t, a.responses()[0].Result)
	if len(a.responses()) > 1 && len(first.PartialContent) == 0 {
		t.Errorf("initial response carries no segment though one was ready: %s", a.responses()[0].Result)
	}
	task, segs, _ := streamAnswer(t, a)
	res := result[mcp.PartialResult](c, mcp.MethodTasksResult, map[string]any{"taskId": task.TaskID, "lastSeqNr": len(segs)})
	if len(res.PartialContent) != 0 || !res.IsComplete {
		t.Errorf("tasks/result after the stream: %+v", res)
	}
	if diff := cmp.Diff(chunkTexts(6, 8), texts(mcp.MergeSegments(segs))); diff != "" {
		t.Errorf("merged (-want +got):\n%s", diff)
	}
}

func TestLastSeqNrInvalid(t *testing.T) {
	url, _ := serve(t, nil)
	c := connect(t, url, mcp.ClientCapabilities{})
	a := c.post(mcp.MethodToolsCall, callParams(server.ToolSlowText, map[string]any{"chunks": 1, "intervalMs": 0}, modes(mcp.ModeStreaming)))
	task, _, _ := streamAnswer(t, a)
	for _, bad := range []any{0, -1, "3", 1.5, true, map[string]any{}} {
		e := rpcError(c, mcp.MethodTasksResult, map[string]any{"taskId": task.TaskID, "lastSeqNr": bad})
		if e.Code != mcp.CodeInvalidParams {
			t.Errorf("lastSeqNr %v: code %d, want -32602", bad, e.Code)
		}
	}
	if st := c.post(mcp.MethodTasksResult, map[string]any{"taskId": task.TaskID, "lastSeqNr": 0}).status; st != http.StatusOK {
		t.Errorf("a JSON-RPC error travels in a 200 answer, got %d", st)
	}
}
