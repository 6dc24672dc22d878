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
	for i := 0; i < getResumeTasks; i++ {
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
	// The first two events with ids and a message, and every one after
	// them already read: what the stream was seen to send after the first.
	var seen []getEvent
	for len(seen) < 2 {
		select {
		case g, ok := <-events:
			if !ok || g.err != nil {
				return e.Skip("%s, and the GET stream ended after %d events with ids: nothing to resume from", why, len(seen))
			}
			if g.ev.HasID && g.msg != nil {
				seen = append(seen, g)
			}
		case <-e.Ctx.Done():
			return e.Skip("%s, and the GET stream carried %d events with ids while %d tasks ran: nothing to resume from", why, len(seen), getResumeTasks)
		}
	}
	stG.close() // cut the GET stream after its second event
	for g := range events {
		if g.err == nil && g.ev.HasID && g.msg != nil {
			seen = append(seen, g)
		}
	}
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
	replay := readEvents(stR)
	for len(want) > 0 {
		select {
		case g, ok := <-replay:
			if !ok || g.err != nil {
				e.Expect("HTTP-RESUME-COMPLETE", false, "the replay of the GET stream after Last-Event-ID %s ended without %d of the events it sent after that id", first, len(want))
				return nil
			}
			if g.msg != nil && g.msg.Kind() == mcp.KindResponse {
				e.Expect("HTTP-RESUME-SAME-STREAM", false, "the replay of the GET stream after Last-Event-ID %s carries the response to request %s, which belongs to its POST", first, g.msg.ID)
			}
			delete(want, g.ev.Data)
		case <-e.Ctx.Done():
			e.Expect("HTTP-RESUME-COMPLETE", false, "the replay of the GET stream after Last-Event-ID %s did not carry %d of the events it sent after that id within the scenario's timeout", first, len(want))
			return nil
		}
	}
	e.Expect("HTTP-RESUME-COMPLETE", true, "")
	e.Expect("HTTP-RESUME-SAME-STREAM", true, "")
	return nil
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
