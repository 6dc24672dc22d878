package suite

import (
	"github.com/tasksim/tasksim/mcp"
	"github.com/tasksim/tasksim/mcp/sse"
)

// getResumeTasks bounds the tasks httpResumeGET creates to make the
// server send events on its standalone GET stream.
const getResumeTasks = 3

// getEvent is one event read from a GET stream.
type getEvent struct {
	ev  sse.Event
	msg *mcp.Message
	err error
}

// httpResumeGET is http-resume for a server that answers tools/call as
// JSON: the one SSE stream to resume is the standalone GET stream, and
// resumption "applies regardless of how the original stream was
// initiated (via POST or GET)" (2025-11-25 Transports › Streamable HTTP ›
// Resumability and Redelivery). Tasks make the server send on it
// (notifications/tasks/status, which the spec lets a server send there);
// once two events with ids have come, the stream is cut and resumed after
// the first. The replay must carry every event the stream was seen to
// send after that id (HTTP-RESUME-COMPLETE) and no response, which
// belongs to the POST that asked for it (HTTP-RESUME-SAME-STREAM: "MUST
// NOT replay messages that would have been delivered on a different
// stream").
//
// Whether a status notification comes at all is the server's choice, and
// it may come after tasks/result has answered: the wait for the events
// is the scenario's timeout, and running out of it is a SKIP, never a
// verdict. A server that stored events replays them at once; one that
// does not within the timeout fails HTTP-RESUME-COMPLETE with the reason.
func httpResumeGET(e *Env, s *rawSession, why string) error {
	if !e.probe.init.Capabilities.Tasks.ToolCall() {
		return e.Skip("%s, and the server declares no tasks to make it send on its GET stream: no stream to resume", why)
	}
	tc, err := e.needTask()
	if err != nil {
		return err
	}
	respG, err := s.get("")
	if err != nil {
		return err
	}
	if !isEventStream(respG) {
		respG.Body.Close()
		return e.Skip("%s, and GET opens no event stream (HTTP %d): no stream to resume", why, respG.StatusCode)
	}
	stG := newEventStream(respG)
	events := readEvents(stG)
	defer stG.close()
	if err := s.runTasks(tc, getResumeTasks); err != nil {
		return err
	}
	seen, err := awaitTwoIDs(e, events, why)
	if err != nil {
		return err
	}
	stG.close() // cut the GET stream after its second event
	for g := range events {
		if g.err == nil && g.ev.HasID && g.msg != nil {
			seen = append(seen, g)
		}
	}
	return checkGETReplay(e, s, seen)
}

// runTasks runs n task-augmented calls of tc to their results, so that
// the server has status to send on its GET stream.
func (s *rawSession) runTasks(tc toolChoice, n int) error {
	for i := 0; i < n; i++ {
		m, err := s.call(mcp.MethodToolsCall, map[string]any{"name": tc.name, "arguments": tc.argsFor(1, 10, -1), "task": map[string]any{}})
		if err != nil {
			return err
		}
		if id, _ := answerInfo(m); id != "" {
			if _, err := s.call(mcp.MethodTasksResult, mcp.TaskResultParams{TaskID: id}); err != nil {
				return err
			}
		}
	}
	return nil
}

// awaitTwoIDs returns the first two events of the GET stream with ids
// and a message; the stream's end or the scenario's timeout before them
// is a SKIP.
func awaitTwoIDs(e *Env, events <-chan getEvent, why string) ([]getEvent, error) {
	var seen []getEvent
	for len(seen) < 2 {
		select {
		case g, ok := <-events:
			if !ok || g.err != nil {
				return nil, e.Skip("%s, and the GET stream ended after %d events with ids: nothing to resume from", why, len(seen))
			}
			if g.ev.HasID && g.msg != nil {
				seen = append(seen, g)
			}
		case <-e.Ctx.Done():
			return nil, e.Skip("%s, and the GET stream carried %d events with ids while %d tasks ran: nothing to resume from", why, len(seen), getResumeTasks)
		}
	}
	return seen, nil
}

// checkGETReplay resumes the GET stream after the first of seen, the
// events it was seen to send with ids and a message: the replay must
// carry every one after it, and no response.
func checkGETReplay(e *Env, s *rawSession, seen []getEvent) error {
	first := seen[0].ev.ID
	respR, err := s.get(first)
	if err != nil {
		return err
	}
	if !e.Expect("HTTP-RESUME-COMPLETE", isEventStream(respR), "GET with Last-Event-ID %s answered HTTP %d %s", first, respR.StatusCode, respR.Header.Get("Content-Type")) {
		respR.Body.Close()
		return nil
	}
	stR := newEventStream(respR)
	defer stR.close()
	want := map[string]bool{}
	for _, g := range seen[1:] {
		want[g.ev.Data] = true
	}
	if replayCarries(e, readEvents(stR), first, want) {
		e.Expect("HTTP-RESUME-COMPLETE", true, "")
		e.Expect("HTTP-RESUME-SAME-STREAM", true, "")
	}
	return nil
}

// replayCarries reads the replay of the GET stream after event first
// until it has carried every event of want (by data); a response in it
// is an HTTP-RESUME-SAME-STREAM finding. It reports whether all came: an
// end or the scenario's timeout before is an HTTP-RESUME-COMPLETE
// finding.
func replayCarries(e *Env, replay <-chan getEvent, first string, want map[string]bool) bool {
	for len(want) > 0 {
		select {
		case g, ok := <-replay:
			if !ok || g.err != nil {
				e.Expect("HTTP-RESUME-COMPLETE", false, "the replay of the GET stream after Last-Event-ID %s ended without %d of the events it sent after that id", first, len(want))
				return false
			}
			if g.msg != nil && g.msg.Kind() == mcp.KindResponse {
				e.Expect("HTTP-RESUME-SAME-STREAM", false, "the replay of the GET stream after Last-Event-ID %s carries the response to request %s, which belongs to its POST", first, g.msg.ID)
			}
			delete(want, g.ev.Data)
		case <-e.Ctx.Done():
			e.Expect("HTTP-RESUME-COMPLETE", false, "the replay of the GET stream after Last-Event-ID %s did not carry %d of the events it sent after that id within the scenario's timeout", first, len(want))
			return false
		}
	}
	return true
}

// readEvents reads st on its own until it ends or fails (the last value
// carries the error), at most maxEvents events; closing st ends it.
func readEvents(st *eventStream) <-chan getEvent {
	out := make(chan getEvent, maxEvents)
	go func() {
		defer close(out)
		for i := 0; i < maxEvents; i++ {
			ev, m, err := st.next()
			out <- getEvent{ev, m, err}
			if err != nil {
				return
			}
		}
	}()
	return out
}
