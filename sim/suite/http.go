package suite

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/tasksim/tasksim/mcp"
	"github.com/tasksim/tasksim/mcp/client"
)

// Streamable HTTP scenarios, driven request by request.

// streamingCallBody is a tools/call asking for SEP-1905 streaming.
func (s *rawSession) streamingCall(tc toolChoice, args any) ([]byte, int64) {
	b := s.request(mcp.MethodToolsCall, map[string]any{
		"name": tc.name, "arguments": args,
		"task": map[string]any{"responseModes": []string{"streaming"}},
	})
	return b, s.nextID
}

// answerInfo reads what the suite needs of an answer: its task id and
// whether it is final (a result that is not a partial response, a
// partial response with isComplete, or an error).
func answerInfo(m *mcp.Message) (taskID string, final bool) {
	if m.Error != nil {
		return "", true
	}
	var r mcp.ToolCallResponse
	if json.Unmarshal(m.Result, &r) != nil {
		return "", true
	}
	if r.Task != nil {
		taskID = r.Task.TaskID
	}
	if r.IsComplete != nil {
		return taskID, *r.IsComplete
	}
	return taskID, r.PartialContent == nil && r.Task == nil || r.Content != nil
}

// terminalAnswer reports whether response m carries a task in a terminal
// status.
func terminalAnswer(m *mcp.Message) bool {
	var r mcp.ToolCallResponse
	return m.Error == nil && json.Unmarshal(m.Result, &r) == nil && r.Task != nil && r.Task.Status.IsTerminal()
}

func notificationTask(m *mcp.Message) string {
	var p struct {
		TaskID string `json:"taskId"`
	}
	json.Unmarshal(m.Params, &p)
	return p.TaskID
}

func isEventStream(resp *http.Response) bool {
	return resp.StatusCode == http.StatusOK && strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream")
}

// scenarioHTTPResume cuts a stream that answers a request and resumes it
// with GET and Last-Event-ID while another stream of the session runs
// (2025-11-25 Transports › Streamable HTTP › Resumability and
// Redelivery: the server "MUST NOT replay messages that would have been
// delivered on a different stream"). Resumption is base Streamable HTTP:
// a server with SEP-1905 streaming is cut between segments, any other
// between any two events of a call answered as an event stream with ids.
func scenarioHTTPResume(e *Env) error {
	if e.needModes(mcp.ModeStreaming) != nil {
		return httpResumeBase(e)
	}
	tc, err := e.need(needs{modes: []mcp.ResponseMode{mcp.ModeStreaming}})
	if err != nil {
		return err
	}
	s, err := e.rawSession(nil)
	if err != nil {
		return err
	}
	bodyA, idA := s.streamingCall(tc, tc.argsFor(6, 60, -1))
	respA, err := s.post(bodyA, nil)
	if err != nil {
		return err
	}
	bodyB, idB := s.streamingCall(tc, tc.argsFor(3, 30, -1))
	respB, err := s.post(bodyB, nil)
	if err != nil {
		respA.Body.Close()
		return err
	}
	defer respB.Body.Close()
	if !isEventStream(respA) || !isEventStream(respB) {
		respA.Body.Close()
		return e.Skip("the server answered a streaming call without an event stream (HTTP %d, %s)", respA.StatusCode, respA.Header.Get("Content-Type"))
	}
	stA := newEventStream(respA)
	lastA, firstA := "", ""
	firstSeg := int64(-1) // the first seqNr stream A carried after firstA's event
	for i := 0; i < maxEvents && firstSeg < 0; i++ {
		ev, m, err := stA.next()
		if err != nil {
			stA.close()
			return e.Skip("stream A ended before it could be cut: %v", err)
		}
		if m == nil || m.Kind() != mcp.KindResponse || !ev.HasID {
			continue
		}
		if _, final := answerInfo(m); final {
			stA.close()
			return e.Skip("stream A ended before a segment and more to come: nothing left to resume")
		}
		lastA = ev.ID
		if firstA == "" {
			firstA = ev.ID
		} else if ns := seqNrs(m); len(ns) > 0 {
			firstSeg = ns[0]
		}
	}
	stA.close() // cut stream A mid-task
	if lastA == "" {
		return e.Skip("the server's events carry no ids: streams cannot be resumed")
	}
	// Resume from the first response's event, not the last one read: the
	// replay must repeat what followed it, on this stream alone.
	stR, err := s.resumeAfterB(respB, firstA)
	if stR == nil || err != nil {
		return err
	}
	defer stR.close()
	complete := false
	prev := int64(-1)
	for i := 0; i < maxEvents && !complete; i++ {
		_, m, err := stR.next()
		if err != nil {
			break
		}
		switch {
		case m == nil:
		case m.Kind() == mcp.KindResponse:
			e.Expect("HTTP-RESUME-SAME-STREAM", m.ID.String() == strconv.FormatInt(idA, 10), "the replay of stream A (request %d) carries the response to request %s (stream B is %d)", idA, m.ID, idB)
			if m.ID.String() == strconv.FormatInt(idA, 10) {
				_, complete = answerInfo(m)
				// A response carrying the task's terminal status is the
				// server's last answer to the call, come through whatever
				// its isComplete says: isComplete: false beside a terminal
				// status is S1905-COMPLETE's finding, not a lost event.
				complete = complete || terminalAnswer(m)
				// The replay goes on where the cut left: no segment of
				// stream A is missing.
				for _, n := range seqNrs(m) {
					if prev < 0 {
						e.Expect("HTTP-RESUME-COMPLETE", n == firstSeg, "the replay after Last-Event-ID %s starts at seqNr %d; the stream carried seqNr %d after that event", firstA, n, firstSeg)
					} else {
						e.Expect("HTTP-RESUME-COMPLETE", n <= prev+1, // a repeat is S1905-SEQNR's alone
							"the replay after Last-Event-ID %s carries seqNr %d after seqNr %d: events are lost", firstA, n, prev)
					}
					prev = n
				}
			}
		}
	}
	e.Expect("HTTP-RESUME-COMPLETE", complete, "the replay after Last-Event-ID %s ended without request %d's final response", firstA, idA)
	return nil
}

// resumeAfterB reads stream B (respB), which goes on on its own
// connection, to its end, then resumes stream A after event lastID. A
// GET answered without an event stream is an HTTP-RESUME-COMPLETE
// finding, and returns no stream.
func (s *rawSession) resumeAfterB(respB *http.Response, lastID string) (*eventStream, error) {
	if isEventStream(respB) {
		stB := newEventStream(respB)
		for i := 0; i < maxEvents; i++ {
			if _, _, err := stB.next(); err != nil {
				break
			}
		}
	}
	respR, err := s.get(lastID)
	if err != nil {
		return nil, err
	}
	if !s.e.Expect("HTTP-RESUME-COMPLETE", isEventStream(respR), "GET with Last-Event-ID %s answered HTTP %d %s", lastID, respR.StatusCode, respR.Header.Get("Content-Type")) {
		respR.Body.Close()
		return nil, nil
	}
	return newEventStream(respR), nil
}

// baseCall is a tools/call of tc without SEP-1905, with progressToken
// token: task-augmented only where the tool requires it, which the server
// must then declare (Tasks › Capabilities: a client MUST NOT use task
// augmentation the server did not declare).
func (s *rawSession) baseCall(tc toolChoice, token string) ([]byte, int64, error) {
	params := map[string]any{"name": tc.name, "arguments": tc.argsFor(6, 60, -1), "_meta": map[string]any{"progressToken": token}}
	if i := slices.IndexFunc(s.e.probe.tools, func(t mcp.Tool) bool { return t.Name == tc.name }); i >= 0 {
		if x := s.e.probe.tools[i].Execution; x != nil && x.TaskSupport == mcp.TaskSupportRequired {
			if !s.e.probe.init.Capabilities.Tasks.ToolCall() {
				return nil, 0, s.e.Skip("tool %s requires a task and the server declares no tasks.requests.tools.call", tc.name)
			}
			params["task"] = map[string]any{}
		}
	}
	return s.request(mcp.MethodToolsCall, params), s.nextID, nil
}

// progressToken returns the progressToken of a progress notification.
func progressToken(m *mcp.Message) (string, bool) {
	if m.Method != "notifications/progress" {
		return "", false
	}
	var p struct {
		Token json.RawMessage `json:"progressToken"`
	}
	if json.Unmarshal(m.Params, &p) != nil || p.Token == nil {
		return "", false
	}
	var str string
	if json.Unmarshal(p.Token, &str) == nil {
		return str, true
	}
	return string(p.Token), true
}

// httpResumeBase is http-resume without SEP-1905: two calls whose answers
// are event streams; stream A is cut after its first event with an id,
// before its response, stream B read to its end; then A is resumed from
// that event. The replay must carry A's response and nothing of B (its
// response, its progress notifications).
func httpResumeBase(e *Env) error {
	tc, err := e.needStream()
	if err != nil {
		return err
	}
	s, err := e.rawSession(nil)
	if err != nil {
		return err
	}
	const tokenA, tokenB = "tasksim-resume-a", "tasksim-resume-b"
	bodyA, idA, err := s.baseCall(tc, tokenA)
	if err != nil {
		return err
	}
	respA, err := s.post(bodyA, nil)
	if err != nil {
		return err
	}
	bodyB, idB, _ := s.baseCall(tc, tokenB)
	respB, err := s.post(bodyB, nil)
	if err != nil {
		respA.Body.Close()
		return err
	}
	defer respB.Body.Close()
	if !isEventStream(respA) {
		respA.Body.Close()
		return httpResumeGET(e, s, fmt.Sprintf("the server answered tools/call with HTTP %d %s, not an event stream", respA.StatusCode, respA.Header.Get("Content-Type")))
	}
	stA := newEventStream(respA)
	firstA := ""
	for i := 0; i < maxEvents && firstA == ""; i++ {
		ev, m, err := stA.next()
		if err != nil {
			stA.close()
			return e.Skip("stream A ended before an event with an id and more to come (%v): the server's events carry no ids to resume from", err)
		}
		final := m != nil && m.Kind() == mcp.KindResponse && !mcp.MoreToFollow(m.Result)
		switch {
		case final && ev.HasID:
			stA.close()
			return e.Skip("stream A carried its response in its first event with an id: nothing left to resume")
		case final:
			stA.close()
			return e.Skip("stream A carried its response before any event with an id: the server's events carry no ids to resume from")
		case ev.HasID:
			firstA = ev.ID
		}
	}
	stA.close() // cut stream A before its response
	stR, err := s.resumeAfterB(respB, firstA)
	if stR == nil || err != nil {
		return err
	}
	defer stR.close()
	complete := false
	for i := 0; i < maxEvents && !complete; i++ {
		_, m, err := stR.next()
		if err != nil {
			break
		}
		if m == nil {
			continue
		}
		if tok, ok := progressToken(m); ok {
			e.Expect("HTTP-RESUME-SAME-STREAM", tok == tokenA, "the replay of stream A (request %d) carries progress of token %s (stream B's is %s)", idA, tok, tokenB)
		}
		if m.Kind() == mcp.KindResponse {
			mine := m.ID.String() == strconv.FormatInt(idA, 10)
			e.Expect("HTTP-RESUME-SAME-STREAM", mine, "the replay of stream A (request %d) carries the response to request %s (stream B is %d)", idA, m.ID, idB)
			complete = mine && !mcp.MoreToFollow(m.Result)
		}
	}
	e.Expect("HTTP-RESUME-COMPLETE", complete, "the replay after Last-Event-ID %s ended without request %d's response", firstA, idA)
	return nil
}

func scenarioTaskSurvives(e *Env) error {
	if !e.HTTP() || e.needModes(mcp.ModeStreaming) != nil {
		return taskSurvivesAnswer(e)
	}
	tc, err := e.need(needs{modes: []mcp.ResponseMode{mcp.ModeStreaming}, slow: "a task that outlives its stream"})
	if err != nil {
		return err
	}
	s, err := e.rawSession(nil)
	if err != nil {
		return err
	}
	body, _ := s.streamingCall(tc, tc.argsFor(5, 60, -1))
	resp, err := s.post(body, nil)
	if err != nil {
		return err
	}
	if !isEventStream(resp) {
		resp.Body.Close()
		return e.Skip("the server answered a streaming call without an event stream")
	}
	st := newEventStream(resp)
	taskID := ""
	for i := 0; i < maxEvents && taskID == ""; i++ {
		_, m, err := st.next()
		if err != nil {
			break
		}
		if m != nil && m.Kind() == mcp.KindResponse {
			taskID, _ = answerInfo(m)
		}
	}
	st.close() // the stream that created the task ends; the task must not
	if taskID == "" {
		return e.Skip("the streaming answer named no task")
	}
	// No wait here: the recording proxy's gate (harness.RecordGate) records
	// the event that named the task before it lets the next request by.
	// tasks/result blocks until the task is terminal: a task cancelled
	// or failed because its stream ended answers an error or isError.
	m, err := s.call(mcp.MethodTasksResult, mcp.TaskResultParams{TaskID: taskID})
	if err != nil {
		return err
	}
	var res mcp.CallToolResult
	if m.Error == nil {
		json.Unmarshal(m.Result, &res)
	}
	e.Expect("TASK-SURVIVES-REQUEST", m.Error == nil && !res.IsError, "the task whose stream was closed ended with %s", describeAnswer(m))
	return nil
}

// taskSurvivesAnswer is task-survives-stream for a server without SEP-1905
// streaming, or over stdio: its CreateTaskResult answers the
// task-augmented call, which ends the request that created the task (over
// HTTP, its POST too) while the task works on. Nobody cancels the task,
// so it must not end cancelled (a server that runs the task on the
// request's context does: mark3labs/mcp-go#897).
func taskSurvivesAnswer(e *Env) error {
	// The slow tool, when there is one, is still working when its request
	// is answered; another task tool may be done by then (then SKIP).
	tc, err := e.needSlow("")
	if err != nil {
		tc, err = e.needTask()
	}
	if err != nil {
		return err
	}
	s, err := e.Connect(&client.Options{NoModes: true})
	if err != nil {
		return err
	}
	created, err := e.createTask(s, tc, tc.argsFor(5, 60, -1))
	if err != nil {
		return err
	}
	if created.Status.IsTerminal() {
		return e.Skip("the task was %s when its request was answered: nothing outlived the request", created.Status)
	}
	taskID := created.TaskID
	// No wait here either: over HTTP the recording proxy's gate
	// (harness.RecordGate) records the answer before it lets this request
	// through; over stdio one pipe carries both, in order.
	// tasks/result blocks until the task is terminal; tasks/get then
	// says how it ended.
	if _, err := s.Request(e.Ctx, mcp.MethodTasksResult, mcp.TaskResultParams{TaskID: taskID}); err != nil {
		return err
	}
	task, err := s.GetTask(e.Ctx, taskID)
	if err != nil {
		return fmt.Errorf("tasks/get of task %s after its result: %w", taskID, err)
	}
	e.Expect("TASK-SURVIVES-REQUEST", task.Status != mcp.StatusCancelled,
		"task %s ended cancelled (%q) after the request that created it was answered; nobody cancelled it", taskID, task.StatusMessage)
	return nil
}

func scenarioOrigin(e *Env) error {
	s := &rawSession{e: e, hc: e.httpClient(), proto: mcp.LatestProtocolVersion}
	resp, err := s.post(s.request("initialize", map[string]any{
		"protocolVersion": mcp.LatestProtocolVersion, "capabilities": map[string]any{},
		"clientInfo": map[string]any{"name": "tasksim-check", "version": "dev"},
	}), map[string]string{"Origin": "http://evil.example"})
	if err != nil {
		return err
	}
	io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
	resp.Body.Close()
	e.Expect("HTTP-ORIGIN", resp.StatusCode == http.StatusForbidden, "initialize with Origin http://evil.example answered HTTP %d, want 403", resp.StatusCode)
	return nil
}

func scenarioSession(e *Env) error {
	s, err := e.rawSession(nil)
	if err != nil {
		return err
	}
	if s.id == "" {
		return e.Skip("the server gives out no session id")
	}
	status := func(body []byte, hdr map[string]string) (int, error) {
		resp, err := s.post(body, hdr)
		if err != nil {
			return 0, err
		}
		io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
		resp.Body.Close()
		return resp.StatusCode, nil
	}
	code, err := status(s.request(mcp.MethodToolsList, map[string]any{}), map[string]string{"Mcp-Session-Id": ""})
	if err != nil {
		return err
	}
	e.Expect("HTTP-SESSION-MISSING", code == http.StatusBadRequest, "tools/list without Mcp-Session-Id answered HTTP %d, want 400", code)
	code, err = status(notification("notifications/roots/list_changed"), nil)
	if err != nil {
		return err
	}
	e.Expect("HTTP-SESSION", code == http.StatusAccepted, "a notification answered HTTP %d, want 202", code)
	resp, err := s.delete()
	if err != nil {
		return err
	}
	resp.Body.Close()
	if resp.StatusCode == http.StatusMethodNotAllowed {
		return nil // the server does not let clients end sessions
	}
	code, err = status(s.request(mcp.MethodToolsList, map[string]any{}), nil)
	if err != nil {
		return err
	}
	e.Expect("HTTP-SESSION", code == http.StatusNotFound, "tools/list in a terminated session answered HTTP %d, want 404", code)
	return nil
}

// seqNrs returns the seqNr of every segment of a SEP-1905 response.
func seqNrs(m *mcp.Message) []int64 {
	var r mcp.ToolCallResponse
	if m.Error != nil || json.Unmarshal(m.Result, &r) != nil {
		return nil
	}
	out := make([]int64, len(r.PartialContent))
	for i, s := range r.PartialContent {
		out[i] = s.SeqNr
	}
	return out
}
