package suite

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strconv"

	"github.com/tasksim/tasksim/mcp"
)

// http-resume: a stream that answers a request is cut and resumed with
// GET and Last-Event-ID while another stream of the session runs.

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
	var idA, idB int64
	resps, why, err := s.postStreams(func(scale int) [][]byte {
		var bodyA, bodyB []byte
		bodyA, idA = s.streamingCall(tc, tc.argsFor(6, 60*scale, -1))
		bodyB, idB = s.streamingCall(tc, tc.argsFor(3, 30*scale, -1))
		return [][]byte{bodyA, bodyB}
	})
	if err != nil {
		return err
	}
	if why != "" {
		return e.Skip("%s", why)
	}
	respA, respB := resps[0], resps[1]
	defer respB.Body.Close()
	cut, err := cutStreaming(e, newEventStream(respA))
	if err != nil {
		return err
	}
	// Resume from the first response's event, not the last one read: the
	// replay must repeat what followed it, on this stream alone.
	stR, err := s.resumeAfterB(respB, cut.first)
	if stR == nil || err != nil {
		return err
	}
	defer stR.close()
	cut.checkReplay(e, stR, idA, idB)
	return nil
}

// postPair posts the calls of streams A and B, each answered on its own
// connection; when B's fails, A's answer is closed.
func (s *rawSession) postPair(bodyA, bodyB []byte) (respA, respB *http.Response, err error) {
	respA, err = s.post(bodyA, nil)
	if err != nil {
		return nil, nil, err
	}
	respB, err = s.post(bodyB, nil)
	if err != nil {
		respA.Body.Close()
		return nil, nil, err
	}
	return respA, respB, nil
}

// streamCut is where a SEP-1905 stream A was cut, and what its replay
// has carried so far.
type streamCut struct {
	// first is the id of the event of A's first response, the one the
	// replay resumes after.
	first string
	// firstSeg is the first seqNr A carried after that event (-1: none
	// was read).
	firstSeg int64
	// prev is the last seqNr the replay carried (-1: none yet).
	prev int64
}

// cutStreaming reads stream A until a response after its first one
// carries a segment, and cuts it there, mid-task.
func cutStreaming(e *Env, stA *eventStream) (*streamCut, error) {
	defer stA.close() // cut stream A mid-task
	cut := &streamCut{firstSeg: -1, prev: -1}
	for i := 0; i < maxEvents && cut.firstSeg < 0; i++ {
		ev, m, err := stA.next()
		if err != nil {
			return nil, e.Skip("stream A ended before it could be cut: %v", err)
		}
		if m == nil || m.Kind() != mcp.KindResponse || !ev.HasID {
			continue
		}
		if _, final := answerInfo(m); final {
			return nil, e.Skip("stream A ended before a segment and more to come: nothing left to resume")
		}
		if cut.first == "" {
			cut.first = ev.ID
		} else if ns := seqNrs(m); len(ns) > 0 {
			cut.firstSeg = ns[0]
		}
	}
	if cut.first == "" {
		return nil, e.Skip("the server's events carry no ids: streams cannot be resumed")
	}
	return cut, nil
}

// checkReplay reads the replay of stream A (request idA): it carries
// A's responses alone, goes on from the cut without losing a segment,
// and ends with A's final response.
func (c *streamCut) checkReplay(e *Env, stR *eventStream, idA, idB int64) {
	complete := false
	for i := 0; i < maxEvents && !complete; i++ {
		_, m, err := stR.next()
		if err != nil {
			break
		}
		if m == nil || m.Kind() != mcp.KindResponse {
			continue
		}
		mine := m.ID.String() == strconv.FormatInt(idA, 10)
		e.Expect("HTTP-RESUME-SAME-STREAM", mine, "the replay of stream A (request %d) carries the response to request %s (stream B is %d)", idA, m.ID, idB)
		if mine {
			complete = c.replayed(e, m)
		}
	}
	e.Expect("HTTP-RESUME-COMPLETE", complete, "the replay after Last-Event-ID %s ended without request %d's final response", c.first, idA)
}

// replayed checks the segments of one response of A's replay and
// reports whether it is the server's last answer to the call.
func (c *streamCut) replayed(e *Env, m *mcp.Message) bool {
	_, complete := answerInfo(m)
	// A response carrying the task's terminal status is the server's
	// last answer to the call, come through whatever its isComplete
	// says: isComplete: false beside a terminal status is
	// S1905-COMPLETE's finding, not a lost event.
	complete = complete || terminalAnswer(m)
	// The replay goes on where the cut left: no segment of stream A is
	// missing.
	for _, n := range seqNrs(m) {
		if c.prev < 0 {
			e.Expect("HTTP-RESUME-COMPLETE", n == c.firstSeg, "the replay after Last-Event-ID %s starts at seqNr %d; the stream carried seqNr %d after that event", c.first, n, c.firstSeg)
		} else {
			e.Expect("HTTP-RESUME-COMPLETE", n <= c.prev+1, // a repeat is S1905-SEQNR's alone
				"the replay after Last-Event-ID %s carries seqNr %d after seqNr %d: events are lost", c.first, n, c.prev)
		}
		c.prev = n
	}
	return complete
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

// The progress tokens of httpResumeBase's streams A and B.
const resumeTokenA, resumeTokenB = "tasksim-resume-a", "tasksim-resume-b"

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
	bodyA, idA, err := s.baseCall(tc, resumeTokenA)
	if err != nil {
		return err
	}
	bodyB, idB, _ := s.baseCall(tc, resumeTokenB)
	respA, respB, err := s.postPair(bodyA, bodyB)
	if err != nil {
		return err
	}
	defer respB.Body.Close()
	if !isEventStream(respA) {
		respA.Body.Close()
		return httpResumeGET(e, s, fmt.Sprintf("the server answered tools/call with HTTP %d %s, not an event stream", respA.StatusCode, respA.Header.Get("Content-Type")))
	}
	firstA, err := cutBase(e, newEventStream(respA))
	if err != nil {
		return err
	}
	stR, err := s.resumeAfterB(respB, firstA)
	if stR == nil || err != nil {
		return err
	}
	defer stR.close()
	checkBaseReplay(e, stR, firstA, idA, idB)
	return nil
}

// cutBase reads stream A to its first event with an id and cuts it
// there, before its response; it returns that event's id.
func cutBase(e *Env, stA *eventStream) (string, error) {
	defer stA.close() // cut stream A before its response
	for i := 0; i < maxEvents; i++ {
		ev, m, err := stA.next()
		if err != nil {
			return "", e.Skip("stream A ended before an event with an id and more to come (%v): the server's events carry no ids to resume from", err)
		}
		final := m != nil && m.Kind() == mcp.KindResponse && !mcp.MoreToFollow(m.Result)
		switch {
		case final && ev.HasID:
			return "", e.Skip("stream A carried its response in its first event with an id: nothing left to resume")
		case final:
			return "", e.Skip("stream A carried its response before any event with an id: the server's events carry no ids to resume from")
		case ev.HasID:
			return ev.ID, nil
		}
	}
	return "", nil
}

// checkBaseReplay reads the replay of stream A (request idA, resumed
// after event firstA): it carries nothing of stream B, and A's response.
func checkBaseReplay(e *Env, stR *eventStream, firstA string, idA, idB int64) {
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
			e.Expect("HTTP-RESUME-SAME-STREAM", tok == resumeTokenA, "the replay of stream A (request %d) carries progress of token %s (stream B's is %s)", idA, tok, resumeTokenB)
		}
		if m.Kind() == mcp.KindResponse {
			mine := m.ID.String() == strconv.FormatInt(idA, 10)
			e.Expect("HTTP-RESUME-SAME-STREAM", mine, "the replay of stream A (request %d) carries the response to request %s (stream B is %d)", idA, m.ID, idB)
			complete = mine && !mcp.MoreToFollow(m.Result)
		}
	}
	e.Expect("HTTP-RESUME-COMPLETE", complete, "the replay after Last-Event-ID %s ended without request %d's response", firstA, idA)
}
