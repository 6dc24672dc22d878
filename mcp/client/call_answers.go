package client

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/tasksim/tasksim/mcp"
)

// onAnswers handles what arrived for the tools/call id: answers and
// progress, then a stream loss or the end of the session.
func (c *call) onAnswers() {
	msgs, err := c.resp.take()
	for _, m := range msgs {
		if c.done() {
			return
		}
		c.onAnswer(m)
	}
	if err == nil || c.done() {
		return
	}
	c.resp = nil
	var se *mcp.StreamError
	if !errors.As(err, &se) {
		c.finishIncomplete(fmt.Errorf("tools/call %s: %w", c.o.Name, err))
		return
	}
	c.res.StreamLost = true
	c.rec.add(Event{Kind: EventStreamLost, Method: mcp.MethodToolsCall, RequestID: c.id, TaskID: c.taskID, LastEventID: se.LastEventID, Err: se})
	if c.taskID == "" || !c.to(evStreamLost) {
		// Nothing tells which task to resume.
		c.finishIncomplete(fmt.Errorf("tools/call %s: %w", c.o.Name, se))
		return
	}
	if c.phase == phaseResuming && !c.seg.complete {
		// SEP-1905 "Error Handling", Connection Loss: resume with
		// tasks/result and lastSeqNr.
		c.fill()
		c.armPoll()
	}
}

func (c *call) onAnswer(m *mcp.Message) {
	if m.Kind() == mcp.KindNotification {
		if m.Method == mcp.NotificationProgress {
			var p mcp.ProgressParams
			_ = json.Unmarshal(m.Params, &p)
			c.rec.add(Event{Kind: EventProgress, RequestID: c.id, TaskID: c.taskID, Detail: progressText(p)})
		}
		return
	}
	e := Event{Kind: EventResponse, Method: mcp.MethodToolsCall, RequestID: c.id}
	if m.Error != nil {
		e.Err = m.Error
		c.rec.add(e)
		c.finishIncomplete(fmt.Errorf("tools/call %s: %w", c.o.Name, m.Error))
		return
	}
	// DecodeMessage checked the bytes. A streaming response after the
	// first is read without its _meta, and again with it if it is the
	// final one, the only one whose _meta the call reads then
	// (completedAt).
	var r mcp.ToolCallResponse
	var err error
	if c.phase.streams() {
		err = r.UnmarshalValidNoMeta(m.Result)
		if err == nil && r.IsComplete != nil && *r.IsComplete {
			r = mcp.ToolCallResponse{}
			err = r.UnmarshalValid(m.Result)
		}
	} else {
		err = r.UnmarshalValid(m.Result)
	}
	if err != nil {
		e.Err = err
		c.rec.add(e)
		c.finishIncomplete(fmt.Errorf("tools/call %s: malformed result: %w", c.o.Name, err))
		return
	}
	c.rec.add(e)
	if c.phase == phaseCalling {
		c.onFirstAnswer(&r)
		return
	}
	if isStreamingResponse(&r) {
		// More responses with the request's id: SEP-1905 Case 3, also
		// after an initial answer with only the task (initial response
		// option 2).
		if !c.becomeStreaming() {
			c.rec.add(Event{Kind: EventError, RequestID: c.id, Detail: "a streaming response after the stream was lost; ignored"})
			return
		}
		c.ingest(&r, SourceResponse)
		if !c.done() {
			c.armPoll() // the stream is alive: the idle poll waits
		}
		return
	}
	c.rec.add(Event{Kind: EventError, RequestID: c.id, Detail: "an answer to tools/call after the first that is no streaming response; ignored"})
}

// isStreamingResponse reports whether r is a SEP-1905 streaming response:
// partial-content or isComplete present.
func isStreamingResponse(r *mcp.ToolCallResponse) bool {
	return r.PartialContent != nil || r.IsComplete != nil
}

// onFirstAnswer tells the three SEP-1905 cases apart by the answer's
// shape ("Client Implementation Guide", "Handling Different Response
// Modes").
func (c *call) onFirstAnswer(r *mcp.ToolCallResponse) {
	if _, ok := r.Meta[mcp.MetaFallbackMode]; ok {
		c.res.Fallback = true
	}
	taskID := ""
	if r.Task != nil {
		taskID = r.Task.TaskID
	} else if id, ok := r.Meta.RelatedTaskID(); ok {
		taskID = id
	}
	switch {
	case isStreamingResponse(r):
		// Case 3: the task id from the task object or the related-task
		// meta; segments tracked from the first response on.
		c.becomeStreaming()
		c.setTask(taskID, r.Task, SourceResponse)
		c.ingest(r, SourceResponse)
		if !c.done() {
			c.armPoll()
		}
	case r.Task != nil:
		// Case 2: poll tasks/get, then tasks/result.
		c.res.Answer = AnswerTask
		c.to(evTaskAnswer)
		c.setTask(taskID, r.Task, SourceResponse)
		c.afterStatus(SourceResponse) // the first status: always taken
		if !c.done() && !c.inflight.has(reqCanonical) {
			c.armPoll()
		}
	default:
		// A tool result: Case 1 when a task was created for it (the
		// related-task meta), else a plain answer.
		c.res.Answer = AnswerPlain
		if taskID != "" && c.mode != ModePlain {
			c.res.Answer = AnswerImmediate
			c.setTask(taskID, nil, SourceResponse)
		}
		c.finishCanonical(r)
	}
}

// becomeStreaming takes a streaming response: the call follows a stream
// of segments from now on. It reports false when the phase refuses one.
func (c *call) becomeStreaming() bool {
	was := c.phase
	if !c.to(evStreamingResponse) {
		return false
	}
	if !was.streams() {
		c.res.Answer = AnswerStreaming
		c.seg = newSegmentTracker(c.o.NoContent)
	}
	return true
}

// setTask records the call's task id the first time it is known and
// follows its notifications, including those that arrived before.
func (c *call) setTask(taskID string, t *mcp.Task, source string) {
	if taskID == "" {
		return
	}
	if c.taskID == "" {
		c.taskID = taskID
		c.res.TaskID = taskID
		e := Event{Kind: EventTaskCreated, TaskID: taskID, Source: source}
		if t != nil {
			e.Status = t.Status
		}
		c.rec.add(e)
		c.task = c.s.followTask(taskID)
	}
	if t != nil {
		c.updateTask(*t, source)
	}
	if c.cancelDue {
		c.tryCancel()
	}
}

// updateTask records a task state seen by any source. It reports whether
// the state was taken: a report older than the status known, or after a
// terminal one, is put on the timeline as discarded and changes nothing
// (see statusTracker).
func (c *call) updateTask(t mcp.Task, source string) bool {
	if t.TaskID != "" && c.taskID != "" && t.TaskID != c.taskID {
		c.rec.add(Event{Kind: EventError, TaskID: t.TaskID, Source: source, Detail: "status of another task than the call's; ignored"})
		return false
	}
	if v := c.status.observe(t); v != statusTaken {
		c.rec.add(Event{Kind: EventDiscarded, TaskID: c.taskID, Status: t.Status, Source: source, Detail: c.status.why(v, t)})
		return false
	}
	c.res.Task = c.status.last
	c.rec.add(Event{Kind: EventStatus, TaskID: c.taskID, Status: t.Status, Source: source, Detail: t.StatusMessage})
	if c.status.terminal() {
		c.par.terminal = true
	}
	return true
}

// afterStatus acts on the task's last known status. Outside streaming, a
// terminal status means the result can be fetched, and input_required
// that tasks/result should be called at once (2025-11-25 Tasks, "Input
// Required Status").
func (c *call) afterStatus(source string) {
	if c.done() || c.status.last == nil {
		return
	}
	st := c.status.last.Status
	if c.phase.streams() {
		// The final response normally follows on the stream; a terminal
		// status seen by polling, or after the stream was lost, means
		// the rest must be fetched.
		if st.IsTerminal() && !c.seg.complete && (c.phase == phaseResuming || source == SourceTasksGet) {
			c.fill()
		}
		return
	}
	if st.IsTerminal() || st == mcp.StatusInputRequired {
		c.fetchCanonical()
	}
}

// ingest takes the segments of a streaming response, whatever brought
// it, ignoring seqNrs already received ("Client Handling of Multiple
// Mechanisms").
func (c *call) ingest(r *mcp.ToolCallResponse, source string) {
	for _, sg := range r.PartialContent {
		switch c.seg.add(sg) {
		case segmentNew:
			c.rec.add(Event{Kind: EventSegment, TaskID: c.taskID, SeqNr: sg.SeqNr, Bytes: contentBytes(sg.ContentBlock), Source: source})
			if c.o.OnSegment != nil {
				c.o.OnSegment(sg)
			}
		case segmentDuplicate:
			c.rec.add(Event{Kind: EventDuplicate, TaskID: c.taskID, SeqNr: sg.SeqNr, Source: source})
		case segmentInvalid:
			c.rec.add(Event{Kind: EventDiscarded, TaskID: c.taskID, SeqNr: sg.SeqNr, Source: source, Detail: "seqNr must be a positive integer"})
		}
	}
	if r.Task != nil {
		c.setTask(r.Task.TaskID, r.Task, source)
	}
	if r.IsComplete != nil && *r.IsComplete && !c.seg.complete {
		c.seg.complete = true
		c.seg.isError = r.IsError
		c.seg.tail = r.Content
		c.noteCompletedAt(r.Meta)
	}
	if c.seg.hasGap() {
		if !c.seg.gapReported {
			c.seg.gapReported = true
			c.res.Gaps++
			c.rec.add(Event{Kind: EventGap, TaskID: c.taskID, Source: source, Detail: "missing seqNr " + joinInts(c.seg.missing())})
		}
		// SEP-1905 "Client Handling of Multiple Mechanisms", rule 4:
		// ask tasks/result with lastSeqNr for the missing segments.
		c.fill()
	} else {
		c.seg.gapReported = false
	}
	if c.seg.complete && !c.seg.hasGap() {
		c.finishStreaming()
	}
}
