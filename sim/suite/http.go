package suite

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
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

// longerCalls is how much longer postStreams makes the calls of each
// try than those of the one before, and maxCallScale the longest.
const (
	longerCalls  = 4
	maxCallScale = longerCalls * longerCalls
)

// postStreams posts the streaming calls that calls makes for a scale, one
// after the other, and returns the answers once each is an event stream.
// A server answers a streaming call whole, as one JSON response, when the
// work ended before its first response (SEP-1905, test scenario 3); on a
// loaded machine the server's first response can come after a short
// call's work. So when every answer that is not an event stream is such a
// whole answer, the calls are made again longerCalls times as long (the
// scale multiplies their durations), up to maxCallScale; the answers of a
// try are closed before the next. Otherwise, or past the longest, it
// returns why no event streams came, naming each call's answer.
func (s *rawSession) postStreams(calls func(scale int) [][]byte) (resps []*http.Response, why string, err error) {
	for scale := 1; ; scale *= longerCalls {
		resps = resps[:0]
		for _, body := range calls(scale) {
			resp, err := s.post(body, nil)
			if err != nil {
				closeAnswers(resps)
				return nil, "", err
			}
			resps = append(resps, resp)
		}
		why, whole := "", true
		for i, r := range resps {
			if isEventStream(r) {
				continue
			}
			why += fmt.Sprintf("; call %d: HTTP %d %s", i+1, r.StatusCode, r.Header.Get("Content-Type"))
			whole = whole && r.StatusCode == http.StatusOK && strings.HasPrefix(r.Header.Get("Content-Type"), "application/json")
		}
		if why == "" {
			return resps, "", nil
		}
		closeAnswers(resps)
		if !whole || scale >= maxCallScale {
			return nil, fmt.Sprintf("the server answered a streaming call without an event stream (at %d× the calls' durations%s)", scale, why), nil
		}
	}
}

// closeAnswers closes the bodies of resps.
func closeAnswers(resps []*http.Response) {
	for _, r := range resps {
		r.Body.Close()
	}
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
	resps, why, err := s.postStreams(func(scale int) [][]byte {
		body, _ := s.streamingCall(tc, tc.argsFor(5, 60*scale, -1))
		return [][]byte{body}
	})
	if err != nil {
		return err
	}
	if why != "" {
		return e.Skip("%s", why)
	}
	st := newEventStream(resps[0])
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
