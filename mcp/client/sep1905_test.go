package client_test

import (
	"errors"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tasksim/tasksim/mcp"
	"github.com/tasksim/tasksim/mcp/client"
)

// SEP-1905 "Test Scenarios" from the client's side, against scripted
// servers that speak raw SSE. Each test names its scenario.

func streamingCall(t *testing.T, sess *client.Session, o client.CallOptions) *client.CallResult {
	t.Helper()
	o.Name, o.Mode = "stream", client.ModeStreaming
	if o.PollInterval == 0 {
		o.PollInterval = 10 * time.Millisecond
	}
	res, err := sess.CallTool(testContext(t), o)
	if err != nil {
		t.Fatalf("call: %v", err)
	}
	return res
}

// Scenario 4: the initial response carries seqNr 1-2, a later response
// 3-4, the final one isComplete.
func TestScenario04MultipleResponses(t *testing.T) {
	s := newScript(t)
	s.call = func(w *sseWriter, id mcp.ID, p mcp.CallToolParams) {
		if p.Task == nil || !slices.Equal(p.Task.ResponseModes, []mcp.ResponseMode{mcp.ModeStreaming}) {
			t.Errorf("task params %+v, want responseModes [streaming]", p.Task)
		}
		w.send("", partial(id, task(mcp.StatusWorking), false, segs(1, 2)...))
		w.send("", partial(id, nil, false, segs(3, 4)...))
		w.send("", partial(id, task(mcp.StatusCompleted), true))
	}
	sess := s.start(nil)
	var order []int64
	res := streamingCall(t, sess, client.CallOptions{OnSegment: func(sg mcp.Segment) { order = append(order, sg.SeqNr) }})
	wantContent(t, res.Content, blocks(1, 4))
	if !res.Complete || res.Answer != client.AnswerStreaming || res.TaskID != scriptTask || res.Task.Status != mcp.StatusCompleted {
		t.Errorf("complete %v answer %q task %+v", res.Complete, res.Answer, res.Task)
	}
	if !slices.Equal(order, []int64{1, 2, 3, 4}) || res.Segments != 4 {
		t.Errorf("segments %v (%d)", order, res.Segments)
	}
	// FirstContent and HTTPRequests are what the timeline shows.
	var first time.Time
	requests := 0
	for _, e := range res.Timeline {
		switch {
		case e.Kind == client.EventHTTPRequest:
			requests++
		case e.Kind == client.EventSegment && first.IsZero():
			first = e.At
		}
	}
	if requests == 0 || res.HTTPRequests != requests || first.IsZero() || !res.FirstContent.Equal(first) {
		t.Errorf("HTTPRequests %d FirstContent %v; the timeline has %d requests, the first segment at %v", res.HTTPRequests, res.FirstContent, requests, first)
	}
	if len(s.lastSeqNrs()) != 0 {
		t.Errorf("resumed with %v, nothing was missing", s.lastSeqNrs())
	}
}

// Scenario 5: the initial response has only partial-content and the
// related-task meta (initial response option 3); the segments come in SSE
// events with ids, after a priming event.
func TestScenario05SSEStream(t *testing.T) {
	s := newScript(t)
	s.call = func(w *sseWriter, id mcp.ID, _ mcp.CallToolParams) {
		w.prime("p0", 10)
		w.send("e1", partial(id, nil, false))
		for n := int64(1); n <= 3; n++ {
			w.send("e"+string(rune('1'+n)), partial(id, nil, false, seg(n)))
		}
		w.send("e5", partial(id, nil, true))
	}
	sess := s.start(nil)
	res := streamingCall(t, sess, client.CallOptions{})
	wantContent(t, res.Content, blocks(1, 3))
	if res.TaskID != scriptTask || !res.Complete {
		t.Errorf("task %q complete %v", res.TaskID, res.Complete)
	}
	if ids := s.lastEventIDs(); len(ids) != 0 {
		t.Errorf("resumed after %v: the stream was whole", ids)
	}
}

// Scenario 6: segments 1-3 arrive, the connection breaks with no event id
// to resume from; the client asks tasks/result with lastSeqNr 3 and gets
// the rest.
func TestScenario06ResumeWithLastSeqNr(t *testing.T) {
	s := newScript(t)
	s.call = func(w *sseWriter, id mcp.ID, _ mcp.CallToolParams) {
		w.send("", partial(id, task(mcp.StatusWorking), false, seg(1)))
		w.send("", partial(id, nil, false, segs(2, 3)...))
		// The handler returns: the stream ends before isComplete.
	}
	s.result = func(w http.ResponseWriter, id mcp.ID, taskID string, last int64) {
		if taskID != scriptTask || last != 3 {
			t.Errorf("tasks/result %s lastSeqNr %d, want %s 3", taskID, last, scriptTask)
		}
		writeJSON(w, partial(id, nil, true, segs(4, 5)...))
	}
	sess := s.start(nil)
	res := streamingCall(t, sess, client.CallOptions{})
	wantContent(t, res.Content, blocks(1, 5))
	if !res.StreamLost || res.Resumes != 1 || !slices.Equal(s.lastSeqNrs(), []int64{3}) {
		t.Errorf("stream lost %v resumes %d lastSeqNrs %v", res.StreamLost, res.Resumes, s.lastSeqNrs())
	}
	if count(res.Timeline, client.EventStreamLost, "") != 1 || count(res.Timeline, client.EventResume, "") != 1 {
		t.Errorf("timeline lacks the loss and the resume")
	}
}

// Scenario 7: segments 1, 3, 5 arrive (2 and 4 missing); the client asks
// tasks/result with lastSeqNr 1, the highest contiguous seqNr.
func TestScenario07GapDetection(t *testing.T) {
	s := newScript(t)
	s.call = func(w *sseWriter, id mcp.ID, _ mcp.CallToolParams) {
		w.send("", partial(id, task(mcp.StatusWorking), false, seg(1)))
		w.send("", partial(id, nil, false, seg(3)))
		w.send("", partial(id, nil, false, seg(5)))
		w.send("", partial(id, task(mcp.StatusCompleted), true))
	}
	s.result = func(w http.ResponseWriter, id mcp.ID, _ string, last int64) {
		if last != 1 {
			t.Errorf("lastSeqNr %d, want 1", last)
		}
		writeJSON(w, partial(id, nil, true, segs(2, 3, 4, 5)...))
	}
	sess := s.start(nil)
	res := streamingCall(t, sess, client.CallOptions{})
	wantContent(t, res.Content, blocks(1, 5))
	if res.Gaps != 1 || !slices.Equal(s.lastSeqNrs(), []int64{1}) || res.Segments != 5 {
		t.Errorf("gaps %d lastSeqNrs %v segments %d", res.Gaps, s.lastSeqNrs(), res.Segments)
	}
	// 3 came twice, on the stream and in the gap-filling answer; so did 5
	// unless that answer completed the call before the stream's 5 was read.
	if res.Duplicates < 1 || res.Duplicates > 2 {
		t.Errorf("duplicates %d, want 1 or 2", res.Duplicates)
	}
}

// Scenario 7, when seqNr 1 itself is missing: lastSeqNr 0 is invalid, so
// the client takes the canonical result.
func TestScenario07GapAtStart(t *testing.T) {
	s := newScript(t)
	s.call = func(w *sseWriter, id mcp.ID, _ mcp.CallToolParams) {
		w.send("", partial(id, task(mcp.StatusWorking), false, segs(2, 3)...))
		w.send("", partial(id, task(mcp.StatusCompleted), true))
	}
	s.result = func(w http.ResponseWriter, id mcp.ID, _ string, last int64) {
		if last != 0 {
			t.Errorf("lastSeqNr %d sent: below 1 is invalid", last)
		}
		writeJSON(w, result(id, mcp.CallToolResult{Content: blocks(1, 3)}))
	}
	sess := s.start(nil)
	res := streamingCall(t, sess, client.CallOptions{})
	wantContent(t, res.Content, blocks(1, 3))
	if !res.Complete || res.Gaps != 1 {
		t.Errorf("complete %v gaps %d", res.Complete, res.Gaps)
	}
}

// Scenario 9: the ttl expires during streaming. The stream breaks after
// seqNr 2 and the task is gone: the result is incomplete, with what
// arrived, and the error is ErrTaskExpired.
func TestScenario09TTLExpiry(t *testing.T) {
	s := newScript(t)
	s.call = func(w *sseWriter, id mcp.ID, _ mcp.CallToolParams) {
		w.send("", partial(id, task(mcp.StatusWorking), false, segs(1, 2)...))
	}
	s.result = func(w http.ResponseWriter, id mcp.ID, _ string, _ int64) {
		writeJSON(w, rpcError(id, mcp.CodeInvalidParams, "Failed to retrieve task: Task has expired"))
	}
	sess := s.start(nil)
	res, err := sess.CallTool(testContext(t), client.CallOptions{Name: "stream", Mode: client.ModeStreaming})
	if !errors.Is(err, client.ErrTaskExpired) {
		t.Fatalf("err %v, want ErrTaskExpired", err)
	}
	if res.Complete {
		t.Error("complete, want incomplete")
	}
	wantContent(t, res.Content, blocks(1, 2))
}

// Scenario 9, with a stream that stays open but goes silent: the
// client's idle tasks/get finds the task gone.
func TestScenario09TTLExpirySilentStream(t *testing.T) {
	s := newScript(t)
	s.call = func(w *sseWriter, id mcp.ID, _ mcp.CallToolParams) {
		w.send("", partial(id, task(mcp.StatusWorking), false, seg(1)))
		<-w.ctx.Done() // silent until the client goes
	}
	s.get = func(w http.ResponseWriter, id mcp.ID, _ string) {
		writeJSON(w, rpcError(id, mcp.CodeInvalidParams, "Failed to retrieve task: Task not found"))
	}
	sess := s.start(nil)
	res, err := sess.CallTool(testContext(t), client.CallOptions{Name: "stream", Mode: client.ModeStreaming, PollInterval: 10 * time.Millisecond})
	var te *client.TaskError
	if !errors.As(err, &te) || te.Method != mcp.MethodTasksGet {
		t.Fatalf("err %v, want a TaskError from tasks/get", err)
	}
	if res.Complete {
		t.Error("complete, want incomplete")
	}
	wantContent(t, res.Content, blocks(1, 1))
}

// Scenario 10: the client cancels during streaming; the stream ends with
// isComplete and the task cancelled.
func TestScenario10Cancel(t *testing.T) {
	s := newScript(t)
	cancelled := make(chan struct{})
	s.call = func(w *sseWriter, id mcp.ID, _ mcp.CallToolParams) {
		w.send("", partial(id, task(mcp.StatusWorking), false, seg(1)))
		<-cancelled
		w.send("", partial(id, task(mcp.StatusCancelled), true))
	}
	s.cancel = func(w http.ResponseWriter, id mcp.ID, taskID string) {
		writeJSON(w, result(id, task(mcp.StatusCancelled)))
		close(cancelled)
	}
	sess := s.start(nil)
	res := streamingCall(t, sess, client.CallOptions{CancelAfter: 10 * time.Millisecond})
	if res.Task.Status != mcp.StatusCancelled || !res.Complete {
		t.Errorf("task %+v complete %v", res.Task, res.Complete)
	}
	wantContent(t, res.Content, blocks(1, 1))
	if count(res.Timeline, client.EventCancel, mcp.MethodTasksCancel) != 1 {
		t.Error("no tasks/cancel on the timeline")
	}
}

// Scenario 11: the task fails during streaming; the final response has
// isError and isComplete.
func TestScenario11Failure(t *testing.T) {
	for _, tc := range []struct {
		name  string
		final func(id mcp.ID) *mcp.Message
		want  []mcp.ContentBlock
	}{
		{"error as a segment", func(id mcp.ID) *mcp.Message {
			return result(id, mcp.PartialResult{Task: task(mcp.StatusFailed), PartialContent: []mcp.Segment{{SeqNr: 3, ContentBlock: mcp.TextBlock("boom")}}, IsError: true, IsComplete: true})
		}, append(blocks(1, 2), mcp.TextBlock("boom"))},
		{"error as content", func(id mcp.ID) *mcp.Message {
			return result(id, mcp.PartialResult{Task: task(mcp.StatusFailed), PartialContent: []mcp.Segment{}, Content: []mcp.ContentBlock{mcp.TextBlock("boom")}, IsError: true, IsComplete: true})
		}, append(blocks(1, 2), mcp.TextBlock("boom"))},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newScript(t)
			s.call = func(w *sseWriter, id mcp.ID, _ mcp.CallToolParams) {
				w.send("", partial(id, task(mcp.StatusWorking), false, segs(1, 2)...))
				w.send("", tc.final(id))
			}
			sess := s.start(nil)
			res := streamingCall(t, sess, client.CallOptions{})
			if !res.IsError || !res.Complete || res.Task.Status != mcp.StatusFailed {
				t.Errorf("isError %v complete %v task %+v", res.IsError, res.Complete, res.Task)
			}
			wantContent(t, res.Content, tc.want)
		})
	}
}

// Scenario 12: the server sends the same seqNr through every mechanism:
// initial response, later SSE response, and tasks/result with lastSeqNr.
// Each segment is delivered once and in order.
func TestScenario12DuplicateSegments(t *testing.T) {
	s := newScript(t)
	s.call = func(w *sseWriter, id mcp.ID, _ mcp.CallToolParams) {
		w.send("", partial(id, task(mcp.StatusWorking), false, segs(1, 2)...))
		w.send("", partial(id, nil, false, segs(2, 3)...))
	}
	s.result = func(w http.ResponseWriter, id mcp.ID, _ string, last int64) {
		// Wrongly from lastSeqNr, not after it.
		writeJSON(w, partial(id, nil, true, segs(last, last+1)...))
	}
	sess := s.start(nil)
	var delivered []int64
	res := streamingCall(t, sess, client.CallOptions{OnSegment: func(sg mcp.Segment) { delivered = append(delivered, sg.SeqNr) }})
	wantContent(t, res.Content, blocks(1, 4))
	if !slices.Equal(delivered, []int64{1, 2, 3, 4}) || res.Duplicates != 2 {
		t.Errorf("delivered %v, duplicates %d, want 1,2,3,4 and 2", delivered, res.Duplicates)
	}
	if count(res.Timeline, client.EventDuplicate, "") != 2 {
		t.Errorf("duplicate events: %d", count(res.Timeline, client.EventDuplicate, ""))
	}
}

// Scenario 15: initial response and SSE stream at once, overlapping.
func TestScenario15MixedMechanisms(t *testing.T) {
	s := newScript(t)
	s.call = func(w *sseWriter, id mcp.ID, _ mcp.CallToolParams) {
		w.prime("a0", 10)
		w.send("a1", partial(id, task(mcp.StatusWorking), false, segs(1, 2)...))
		w.send("a2", partial(id, nil, false, segs(2, 3)...))
		w.send("a3", partial(id, task(mcp.StatusCompleted), true, segs(3, 4)...))
	}
	sess := s.start(nil)
	res := streamingCall(t, sess, client.CallOptions{})
	wantContent(t, res.Content, blocks(1, 4))
	if res.Duplicates != 2 || res.Resumes != 0 {
		t.Errorf("duplicates %d resumes %d", res.Duplicates, res.Resumes)
	}
}

// The stream is cut twice; each time the client resumes with GET and
// Last-Event-ID, the second time with the newest id, not the first.
func TestStreamCutTwiceResumesWithNewestEventID(t *testing.T) {
	s := newScript(t)
	s.call = func(w *sseWriter, id mcp.ID, _ mcp.CallToolParams) {
		w.prime("e0", 5)
		w.send("e1", partial(id, task(mcp.StatusWorking), false, seg(1)))
		w.send("e2", partial(id, nil, false, seg(2)))
		// Cut inside the next event.
		w.raw("id: e3\ndata: {\"jsonrpc\":")
	}
	s.resume = func(w *sseWriter, last string) {
		switch last {
		case "e2":
			w.send("e3", partial(s.callID(), nil, false, seg(3)))
			// Cut again, cleanly this time.
		case "e3":
			w.send("e4", partial(s.callID(), task(mcp.StatusCompleted), true, seg(4)))
		default:
			t.Errorf("resume after %q", last)
		}
	}
	sess := s.start(nil)
	res := streamingCall(t, sess, client.CallOptions{})
	wantContent(t, res.Content, blocks(1, 4))
	if ids := s.lastEventIDs(); !slices.Equal(ids, []string{"e2", "e3"}) {
		t.Errorf("Last-Event-ID sequence %v, want e2 e3", ids)
	}
	if res.Counts.Reconnects != 2 || len(s.lastSeqNrs()) != 0 {
		t.Errorf("reconnects %d, lastSeqNrs %v", res.Counts.Reconnects, s.lastSeqNrs())
	}
	var resumes []string
	for _, e := range res.Timeline {
		if e.Kind == client.EventHTTPRequest && e.Method == http.MethodGet {
			resumes = append(resumes, e.LastEventID)
		}
	}
	if !slices.Equal(resumes, []string{"e2", "e3"}) {
		t.Errorf("timeline GETs %v", resumes)
	}
}

// NoContent and NoTimeline (a load generator's options): the call keeps
// the books of scenario 4 but neither the segments' content nor the
// timeline, whose events still reach OnEvent in order.
func TestStreamingNoContentNoTimeline(t *testing.T) {
	s := newScript(t)
	s.call = func(w *sseWriter, id mcp.ID, _ mcp.CallToolParams) {
		w.send("", partial(id, task(mcp.StatusWorking), false, segs(1, 2)...))
		w.send("", partial(id, nil, false, segs(3, 4)...))
		w.send("", partial(id, task(mcp.StatusCompleted), true))
	}
	sess := s.start(nil)
	var seen []int64
	res := streamingCall(t, sess, client.CallOptions{NoContent: true, NoTimeline: true, OnEvent: func(e client.Event) {
		if e.Kind == client.EventSegment {
			seen = append(seen, e.SeqNr)
		}
	}})
	if !res.Complete || res.Segments != 4 || res.Duplicates != 0 || res.Gaps != 0 || res.Task.Status != mcp.StatusCompleted {
		t.Errorf("complete %v segments %d duplicates %d gaps %d task %+v", res.Complete, res.Segments, res.Duplicates, res.Gaps, res.Task)
	}
	if len(res.Content) != 0 || len(res.Timeline) != 0 {
		t.Errorf("kept %d content blocks and %d events, want none", len(res.Content), len(res.Timeline))
	}
	if res.HTTPRequests != 1 || res.FirstContent.IsZero() { // the tools/call POST, as in scenario 4
		t.Errorf("HTTPRequests %d, FirstContent %v: counted without the timeline all the same", res.HTTPRequests, res.FirstContent)
	}
	if !slices.Equal(seen, []int64{1, 2, 3, 4}) {
		t.Errorf("OnEvent saw segments %v, want 1-4", seen)
	}
}

// Segments in the middle of a stream, each arriving while the call is
// idle (OnSegment took the one before): the call takes every segment
// once, in order, and ends with the final response.
func TestSegmentsWhileIdleInOrder(t *testing.T) {
	s := newScript(t)
	taken := make(chan int64, 8)
	s.call = func(w *sseWriter, id mcp.ID, _ mcp.CallToolParams) {
		w.send("", partial(id, task(mcp.StatusWorking), false, seg(1)))
		for n := int64(2); n <= 5; n++ {
			select {
			case <-taken:
			case <-w.ctx.Done():
				return
			}
			w.send("", partial(id, nil, false, seg(n)))
		}
		<-taken
		w.send("", partial(id, task(mcp.StatusCompleted), true, seg(6)))
	}
	sess := s.start(nil)
	var got []int64
	res := streamingCall(t, sess, client.CallOptions{PollInterval: time.Hour, OnSegment: func(sg mcp.Segment) {
		got = append(got, sg.SeqNr)
		taken <- sg.SeqNr
	}})
	if !res.Complete || res.Task.Status != mcp.StatusCompleted {
		t.Fatalf("complete %v task %+v", res.Complete, res.Task)
	}
	wantContent(t, res.Content, blocks(1, 6))
	if !slices.Equal(got, []int64{1, 2, 3, 4, 5, 6}) {
		t.Errorf("segments %v, want 1..6 once each in order", got)
	}
}

// A malformed response in the middle of a stream ends the call with an
// error, whichever goroutine handled it: the call's goroutine is woken
// and returns (it would wait forever otherwise).
func TestMalformedSegmentWhileIdleEndsCall(t *testing.T) {
	s := newScript(t)
	taken := make(chan struct{}, 1)
	s.call = func(w *sseWriter, id mcp.ID, _ mcp.CallToolParams) {
		w.send("", partial(id, task(mcp.StatusWorking), false, seg(1)))
		select {
		case <-taken:
		case <-w.ctx.Done():
			return
		}
		w.raw(`event: message` + "\n" + `data: {"jsonrpc":"2.0","id":` + id.String() + `,"result":{"partial-content":"not a list","isComplete":false}}` + "\n\n")
		<-w.ctx.Done()
	}
	sess := s.start(nil)
	_, err := sess.CallTool(testContext(t), client.CallOptions{Name: "stream", Mode: client.ModeStreaming, PollInterval: time.Hour,
		OnSegment: func(mcp.Segment) { taken <- struct{}{} }})
	if err == nil || !strings.Contains(err.Error(), "malformed result") {
		t.Fatalf("err %v, want a malformed result", err)
	}
}
