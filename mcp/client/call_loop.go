package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/tasksim/tasksim/clock"
	"github.com/tasksim/tasksim/mcp"
)

// maxErrorsInRow ends a call after this many failed polls in a row.
const maxErrorsInRow = 5

// call is one CallTool in progress. Everything but the recorder belongs
// to the goroutine running the loop; requests that may block (tasks/get,
// tasks/result, tasks/cancel) run in goroutines of their own and report
// on async.
//
//	tools/call answers (0..N, one id) ─┐
//	task notifications (status, partial)┼─▶ loop ─▶ trackers ─▶ CallResult
//	async answers (get, result, cancel) ┤
//	poll and cancel timers ─────────────┘
type call struct {
	// mu is held by the goroutine running the loop except while it waits
	// in its select: whoever holds it owns the call (see partialNow).
	mu sync.Mutex

	s    *Session
	o    CallOptions
	mode Mode
	rec  *recorder
	res  *CallResult
	ctx  context.Context // ends when the call ends: outstanding requests are cancelled

	id     mcp.ID               // of tools/call
	resp   *inbox[*mcp.Message] // its answers; nil once it failed
	first  bool                 // the first answer arrived
	taskID string
	task   *inbox[taskNote] // the task's notifications
	// status is the task's status as reported by every source, stale
	// reports and reports after a terminal status left out.
	status statusTracker

	streaming bool
	seg       *segmentTracker
	par       partialTracker
	lost      bool // the stream carrying the answers broke for good
	gapOpen   bool

	async chan asyncResult
	// polls feeds the goroutine that makes a poll-mode call's tasks/get
	// requests (poll); nil until the first.
	polls                         chan struct{}
	getting, fetching, cancelling bool
	canonicalAsked, cancelDue     bool
	errorsInRow                   int
	pollTimer                     *clock.ChanTimer
	pollC, cancelC                <-chan time.Time
	done                          bool
	err                           error
}

type asyncKind int

const (
	asyncGet asyncKind = iota
	asyncResume
	asyncCanonical
	asyncCancel
)

type asyncResult struct {
	kind asyncKind
	task *mcp.Task
	resp *mcp.ToolCallResponse
	err  error
}

func (c *call) run(parent context.Context, args json.RawMessage) error {
	ctx, stop := context.WithCancel(parent)
	defer stop()
	c.ctx = ctx
	params := c.params(args)
	c.id = c.s.newID()
	if c.o.Progress {
		params.Meta = &mcp.RequestMeta{ProgressToken: json.RawMessage(c.id.String())}
	}
	if c.o.CancelAfter > 0 {
		// The timer runs from the moment the call is made: over
		// Streamable HTTP a POST answered with JSON returns only with
		// its answer, which for a plain call comes when the tool is done.
		t := clock.NewTimer(c.s.opts.Clock, c.o.CancelAfter)
		defer t.Stop()
		c.cancelC = t.C()
	}
	type sendResult struct {
		resp *inbox[*mcp.Message]
		err  error
	}
	sent := make(chan sendResult, 1)
	go func() {
		r, err := c.s.send(ctx, c.rec, c.id, mcp.MethodToolsCall, params)
		sent <- sendResult{r, err}
	}()
	// Only a plain call is cancelled before its request is answered. A
	// task is cancelled with tasks/cancel, which needs its id: a cancel
	// due before the CreateTaskResult waits for it in the loop (tryCancel).
	// notifications/cancelled would not stop the task the server may
	// already have made (2025-11-25 Tasks, "Cancelling Tasks"; the tasks
	// extension: it MUST NOT be used for task cancellation).
	var cancelBeforeAnswer <-chan time.Time
	if c.mode == ModePlain {
		cancelBeforeAnswer = c.cancelC
	}
	var r sendResult
	select {
	case r = <-sent:
	case <-cancelBeforeAnswer:
		// Cancelled before the request was even answered: tell the
		// server (notifications/cancelled), stop waiting for the write
		// and end the call.
		c.cancelC = nil
		c.s.cancelRequest(c.id, "cancelled by the client")
		c.rec.add(Event{Kind: EventCancel, Method: mcp.NotificationCancelled, RequestID: c.id})
		stop()
		if r = <-sent; r.err == nil {
			c.s.unregister(c.id)
		}
		c.finishIncomplete(c.cancelledError())
		return c.err
	}
	if r.err != nil {
		err := fmt.Errorf("tools/call %s: %w", c.o.Name, errors.Unwrap(r.err))
		c.rec.add(Event{Kind: EventError, Method: mcp.MethodToolsCall, RequestID: c.id, Err: err})
		return err
	}
	c.resp = r.resp
	defer c.s.unregister(c.id)
	defer func() {
		if c.task != nil {
			c.s.unfollowTask(c.taskID, c.task)
		}
		if c.pollTimer != nil {
			c.pollTimer.Stop()
		}
		if c.polls != nil {
			close(c.polls)
		}
	}()
	c.mu.Lock()
	defer c.mu.Unlock()
	for !c.done {
		// The channels are read under c.mu: partialNow may re-arm the
		// poll timer meanwhile (the same channel, restarted).
		respC, taskC, pollC, cancelC := c.resp.ready(), c.task.ready(), c.pollC, c.cancelC
		c.mu.Unlock()
		select {
		case <-respC:
			c.mu.Lock()
			c.onAnswers()
		case <-taskC:
			c.mu.Lock()
			c.onTaskNotifications()
		case r := <-c.async:
			c.mu.Lock()
			c.onAsync(r)
		case <-pollC:
			c.mu.Lock()
			c.pollC = nil
			c.onPoll()
		case <-cancelC:
			c.mu.Lock()
			c.cancelC = nil
			c.cancelDue = true
			c.tryCancel()
		case <-ctx.Done():
			c.mu.Lock()
			if !c.first || c.res.Answer == AnswerPlain {
				c.s.cancelRequest(c.id, "the client stopped waiting")
			}
			c.finishIncomplete(fmt.Errorf("tools/call %s: %w", c.o.Name, parent.Err()))
		}
	}
	return c.err
}

// onAnswers handles what arrived for the tools/call id: answers and
// progress, then a stream loss or the end of the session.
func (c *call) onAnswers() {
	msgs, err := c.resp.take()
	for _, m := range msgs {
		if c.done {
			return
		}
		c.onAnswer(m)
	}
	if err == nil || c.done {
		return
	}
	c.resp = nil
	var se *mcp.StreamError
	if !errors.As(err, &se) {
		c.finishIncomplete(fmt.Errorf("tools/call %s: %w", c.o.Name, err))
		return
	}
	c.lost = true
	c.res.StreamLost = true
	c.rec.add(Event{Kind: EventStreamLost, Method: mcp.MethodToolsCall, RequestID: c.id, TaskID: c.taskID, LastEventID: se.LastEventID, Err: se})
	switch {
	case c.s.opts.Bugs.NoResume:
		c.finishIncomplete(fmt.Errorf("tools/call %s: %w", c.o.Name, se))
	case !c.first || c.taskID == "":
		// Nothing tells which task to resume.
		c.finishIncomplete(fmt.Errorf("tools/call %s: %w", c.o.Name, se))
	case c.streaming && !c.seg.complete:
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
	if c.first && c.streaming {
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
	if !c.first {
		c.first = true
		c.onFirstAnswer(&r)
		return
	}
	if isStreamingResponse(&r) {
		// More responses with the request's id: SEP-1905 Case 3, also
		// after an initial answer with only the task (initial response
		// option 2).
		c.becomeStreaming()
		c.ingest(&r, SourceResponse)
		if !c.done && !c.lost {
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
		if !c.done {
			c.armPoll()
		}
	case r.Task != nil:
		// Case 2: poll tasks/get, then tasks/result.
		c.res.Answer = AnswerTask
		c.setTask(taskID, r.Task, SourceResponse)
		c.afterStatus(SourceResponse) // the first status: always taken
		if !c.done && !c.canonicalAsked {
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

func (c *call) becomeStreaming() {
	if c.streaming {
		return
	}
	c.streaming = true
	c.res.Answer = AnswerStreaming
	c.seg = newSegmentTracker(c.o.NoContent)
	c.seg.keepDups = c.s.opts.Bugs.NoDedup
	c.s.mu.Lock()
	if _, ok := c.s.waiters[c.id]; ok {
		c.s.streams[c.id] = c
	}
	c.s.mu.Unlock()
}

// answerNow handles a SEP-1905 streaming response that says more follow
// (isComplete false) on the session reader's goroutine, as partialNow does
// a partial: at 10,000 streams the hand-off of each segment to its call's
// goroutine (a wake-up) was a good part of the generator's CPU. It does so
// only when that is the same as the call's goroutine doing it: the call's
// goroutine waits in its select (c.mu is free), the call streams and has
// its first answer, its stream is not lost, nothing of its answers or its
// task's notifications is queued before this response, and the response
// is no error. Otherwise it reports false and the response queues as
// before. It never blocks the reader.
func (c *call) answerNow(m *mcp.Message) bool {
	if !c.mu.TryLock() {
		return false
	}
	defer c.mu.Unlock()
	if c.done || !c.first || !c.streaming || c.lost || c.resp == nil || !c.resp.empty() ||
		(c.task != nil && !c.task.empty()) || m.Error != nil || !mcp.MoreToFollow(m.Result) {
		return false
	}
	c.onAnswer(m)
	if c.done {
		c.resp.notify() // a malformed response ended the call: its goroutine must see it
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
		c.task = c.s.followTask(taskID, c)
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
	if c.done || c.status.last == nil {
		return
	}
	st := c.status.last.Status
	if c.streaming {
		// The final response normally follows on the stream; a terminal
		// status seen by polling, or after the stream was lost, means
		// the rest must be fetched.
		if st.IsTerminal() && !c.seg.complete && (c.lost || source == SourceTasksGet) {
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
		if !c.gapOpen {
			c.gapOpen = true
			c.res.Gaps++
			c.rec.add(Event{Kind: EventGap, TaskID: c.taskID, Source: source, Detail: "missing seqNr " + joinInts(c.seg.missing())})
		}
		// SEP-1905 "Client Handling of Multiple Mechanisms", rule 4:
		// ask tasks/result with lastSeqNr for the missing segments.
		c.fill()
	} else {
		c.gapOpen = false
	}
	if c.seg.complete && !c.seg.hasGap() {
		c.finishStreaming()
	}
}

// fill asks for what the stream lacks: tasks/result with lastSeqNr set to
// the highest contiguous seqNr, or, when not even seqNr 1 arrived (a
// lastSeqNr below 1 is invalid, "Resuming Streaming"), the canonical
// result. One such request at a time.
func (c *call) fill() {
	if c.done || c.fetching || c.taskID == "" {
		return
	}
	if c.seg.contiguous < 1 {
		c.fetchCanonical()
		return
	}
	last := c.seg.contiguous
	c.fetching = true
	c.res.Resumes++
	c.rec.add(Event{Kind: EventResume, TaskID: c.taskID, SeqNr: last})
	go func() {
		r, err := c.s.taskResult(c.ctx, c.rec, c.taskID, last)
		c.async <- asyncResult{kind: asyncResume, resp: r, err: err}
	}()
}

// fetchCanonical asks tasks/result without lastSeqNr: the complete result,
// held back by the server until the task is terminal.
func (c *call) fetchCanonical() {
	if c.done || c.canonicalAsked || c.taskID == "" {
		return
	}
	c.canonicalAsked = true
	c.fetching = true
	go func() {
		r, err := c.s.taskResult(c.ctx, c.rec, c.taskID, 0)
		c.async <- asyncResult{kind: asyncCanonical, resp: r, err: err}
	}()
}

func (c *call) onAsync(r asyncResult) {
	if c.done {
		return
	}
	switch r.kind {
	case asyncGet:
		c.getting = false
		if r.err != nil {
			c.onTaskRequestError(mcp.MethodTasksGet, r.err)
			return
		}
		c.errorsInRow = 0
		if c.updateTask(*r.task, SourceTasksGet) {
			c.afterStatus(SourceTasksGet)
		}
		if !c.done && !c.canonicalAsked {
			c.armPoll()
		}
	case asyncResume:
		c.fetching = false
		if r.err != nil {
			var rpc *mcp.Error
			if errors.As(r.err, &rpc) && rpc.Code == mcp.CodeInternalError {
				// "Resuming Streaming": a server that cannot resume MAY
				// answer -32603; the canonical result still comes.
				c.rec.add(Event{Kind: EventError, TaskID: c.taskID, Method: mcp.MethodTasksResult, Err: r.err, Detail: "resume refused; asking for the whole result"})
				c.fetchCanonical()
				return
			}
			c.onTaskRequestError(mcp.MethodTasksResult, r.err)
			return
		}
		c.errorsInRow = 0
		if !isStreamingResponse(r.resp) {
			// A server that ignores lastSeqNr answers with the canonical
			// result.
			c.finishCanonical(r.resp)
			return
		}
		c.ingest(r.resp, SourceTasksResult)
		if !c.done && c.lost {
			c.armPoll()
		}
	case asyncCanonical:
		c.fetching = false
		if r.err != nil {
			if te := asTaskError(r.err); te != nil {
				c.onTaskRequestError(mcp.MethodTasksResult, r.err)
				return
			}
			// The underlying request's own JSON-RPC error (2025-11-25
			// Tasks, "Result Retrieval"), or the connection.
			c.finishIncomplete(fmt.Errorf("tools/call %s: %w", c.o.Name, r.err))
			return
		}
		if c.streaming && isStreamingResponse(r.resp) {
			c.ingest(r.resp, SourceTasksResult)
			if !c.done {
				c.canonicalAsked = false
				c.fill()
			}
			return
		}
		c.finishCanonical(r.resp)
	case asyncCancel:
		c.cancelling = false
		if r.err != nil {
			c.rec.add(Event{Kind: EventError, TaskID: c.taskID, Method: mcp.MethodTasksCancel, Err: r.err})
			return
		}
		if c.updateTask(*r.task, SourceCancel) {
			c.afterStatus(SourceCancel)
		}
	}
}

// onTaskRequestError handles a failed tasks/get or tasks/result: a task
// the server no longer knows ends the call, incomplete (SEP-1905, "TTL
// Expiration During Streaming": the client MUST treat the streaming as
// incomplete); other failures are retried at the next poll, a few times.
func (c *call) onTaskRequestError(method string, err error) {
	c.rec.add(Event{Kind: EventError, TaskID: c.taskID, Method: method, Err: err})
	if te := asTaskError(err); te != nil {
		te.Expired = te.Expired || c.ttlElapsed()
		c.finishIncomplete(te)
		return
	}
	c.errorsInRow++
	if c.errorsInRow >= maxErrorsInRow || c.ctx.Err() != nil {
		c.finishIncomplete(fmt.Errorf("tools/call %s: %w", c.o.Name, err))
		return
	}
	if method == mcp.MethodTasksResult && !c.streaming {
		c.canonicalAsked = false
	}
	c.armPoll()
}

func asTaskError(err error) *TaskError {
	var te *TaskError
	if errors.As(err, &te) {
		return te
	}
	return nil
}

// ttlElapsed reports whether the task's ttl has run out by the client's
// clock.
func (c *call) ttlElapsed() bool {
	last := c.status.last
	if last == nil || last.TTL == nil {
		return false
	}
	created, err := mcp.ParseTime(last.CreatedAt)
	if err != nil {
		return false
	}
	return c.s.opts.Clock.Now().After(created.Add(mcp.Millis(*last.TTL, mcp.MaxDuration)))
}

// onTaskNotifications handles notifications/tasks/status and
// notifications/tasks/partial for the call's task. Each one postpones the
// next poll: the server is talking (SEP-2679 §4 leaves polling
// available; 2025-11-25 Tasks: requestors MUST NOT rely on status
// notifications, so polling resumes when they stop).
func (c *call) onTaskNotifications() {
	notes, err := c.task.take()
	for _, n := range notes {
		if c.done {
			return
		}
		m := n.msg
		switch m.Method {
		case mcp.NotificationTaskStatus:
			var p mcp.TaskStatusParams
			if err := json.Unmarshal(m.Params, &p); err != nil {
				c.rec.add(Event{Kind: EventError, TaskID: c.taskID, Method: m.Method, Err: err})
				continue
			}
			if c.updateTask(p.Task, SourceNotification) && c.mode != ModePoll {
				c.afterStatus(SourceNotification)
			}
		case mcp.NotificationTaskPartial:
			if n.partial == nil { // the reader could not decode it: say why
				var p mcp.TaskPartialParams
				err := json.Unmarshal(m.Params, &p)
				c.rec.add(Event{Kind: EventError, TaskID: c.taskID, Method: m.Method, Err: err})
				continue
			}
			c.onPartial(*n.partial)
		}
	}
	if err != nil && !c.done {
		c.task = nil
		c.finishIncomplete(fmt.Errorf("tools/call %s: %w", c.o.Name, err))
		return
	}
	c.postponePoll()
}

// postponePoll restarts the poll timer after task notifications, outside
// poll mode: the server is talking.
func (c *call) postponePoll() {
	if c.mode != ModePoll && !c.done && c.pollC != nil {
		c.armPoll()
	}
}

// partialNow handles a partial on the session reader's goroutine, which
// saves the hand-off to the call's goroutine (a wake-up: about a fifth of
// a partial's delivery latency). It does so only when that is the same as
// the call's goroutine doing it: the call's goroutine waits in its select
// (c.mu is free), nothing of the task's is queued before this partial, and
// the call goes on. Otherwise it reports false and the partial queues in
// the task's inbox as before. It never blocks the reader.
func (c *call) partialNow(p *mcp.TaskPartialParams) bool {
	if c == nil || !c.mu.TryLock() {
		return false
	}
	defer c.mu.Unlock()
	if c.done || c.task == nil || !c.task.empty() {
		return false
	}
	c.onPartial(*p)
	c.postponePoll()
	return true
}

func (c *call) onPartial(p mcp.TaskPartialParams) {
	e := Event{Kind: EventPartial, TaskID: c.taskID, Seq: p.Seq, Bytes: contentBytes(p.Content...), Source: SourceNotification}
	switch c.par.add(p) {
	case partialDuplicate:
		e.Kind = EventDuplicate
	case partialAfterTerminal:
		e.Kind = EventDiscarded
		e.Detail = "partial after a terminal status"
	case partialGap:
		c.rec.add(Event{Kind: EventDataLoss, TaskID: c.taskID, Seq: p.Seq, Detail: "seq jumped: data loss, not filled in (SEP-2679 §1.3 rule 4)"})
		fallthrough
	case partialAccepted:
		if len(p.Content) == 0 {
			e.Detail = "empty content (SEP-2679 §1.3 rule 5)"
		}
		c.rec.add(e)
		if c.o.OnPartial != nil {
			c.o.OnPartial(p)
		}
		return
	}
	c.rec.add(e)
}

// pollInterval is the call's override, else the task's pollInterval
// (2025-11-25 Tasks, "Getting Tasks": requestors SHOULD respect it), else
// the session default.
func (c *call) pollInterval() time.Duration {
	if c.s.opts.Bugs.IgnorePollInterval {
		return 10 * time.Millisecond
	}
	if c.o.PollInterval > 0 {
		return c.o.PollInterval
	}
	if last := c.status.last; last != nil && last.PollInterval != nil && *last.PollInterval > 0 {
		return mcp.Millis(*last.PollInterval, mcp.MaxDuration)
	}
	return c.s.opts.DefaultPollInterval
}

// armPoll (re)starts the poll timer.
func (c *call) armPoll() {
	if c.done {
		return
	}
	d := c.pollInterval()
	if c.streaming && !c.lost && c.o.QuietPoll > d {
		d = c.o.QuietPoll // a live stream: the quiet poll
	}
	if c.pollTimer == nil {
		c.pollTimer = clock.NewTimer(c.s.opts.Clock, d)
	} else {
		c.pollTimer.Stop()
		c.pollTimer.Reset(d)
	}
	c.pollC = c.pollTimer.C()
}

// onPoll runs when the poll timer fires: a resume request for a lost
// stream, else tasks/get. A streaming call polls only when its stream has
// been silent for a whole interval (SEP-1905 "Client Implementation
// Guide": continue polling tasks/get to monitor status, here to notice an
// expired task whose stream went quiet).
func (c *call) onPoll() {
	if c.done || c.taskID == "" {
		return
	}
	if c.streaming && c.lost {
		c.fill()
		if !c.canonicalAsked {
			c.armPoll()
		}
		return
	}
	if c.canonicalAsked || c.getting {
		return
	}
	c.getting = true
	c.poll()
}

// poll makes one tasks/get request in a goroutine and reports on async.
// In poll mode, which polls every interval, one goroutine makes them all:
// a new goroutine would grow its stack for the HTTP round trip again at
// every poll (runtime.copystack was 8 % of the polling generator's CPU).
// Other modes poll seldom and keep no goroutine between polls. Only one
// tasks/get is in flight at a time (getting), so the send never blocks.
func (c *call) poll() {
	get := func() {
		t, err := c.s.getTask(c.ctx, c.rec, c.taskID)
		c.async <- asyncResult{kind: asyncGet, task: t, err: err}
	}
	if c.mode != ModePoll {
		go get()
		return
	}
	if c.polls == nil {
		c.polls = make(chan struct{}, 1)
		go func() {
			for range c.polls {
				get()
			}
		}()
	}
	c.polls <- struct{}{}
}

// tryCancel cancels the task once CancelAfter elapsed and the task id is
// known (2025-11-25 Tasks, "Cancelling Tasks"). A call without a task is
// cancelled with notifications/cancelled and ends.
func (c *call) tryCancel() {
	if !c.cancelDue || c.cancelling || c.done {
		return
	}
	if c.mode == ModePlain || c.res.Answer == AnswerPlain {
		c.s.cancelRequest(c.id, "cancelled by the client")
		c.rec.add(Event{Kind: EventCancel, Method: mcp.NotificationCancelled, RequestID: c.id})
		c.finishIncomplete(c.cancelledError())
		return
	}
	if c.taskID == "" {
		return // when the task id arrives
	}
	c.cancelDue = false
	switch {
	case c.status.terminal():
		c.rec.add(Event{Kind: EventCancel, TaskID: c.taskID, Detail: "not sent: the task is already terminal"})
		return
	case c.res.Answer == AnswerImmediate:
		// SEP-1905 Case 1: the answer that named the task is its result.
		c.rec.add(Event{Kind: EventCancel, TaskID: c.taskID, Detail: "not sent: the result came with the answer"})
		return
	}
	c.cancelling = true
	c.rec.add(Event{Kind: EventCancel, Method: mcp.MethodTasksCancel, TaskID: c.taskID})
	go func() {
		t, err := c.s.cancelTask(c.ctx, c.rec, c.taskID)
		c.async <- asyncResult{kind: asyncCancel, task: t, err: err}
	}()
}

// cancelledError is what a call cancelled before any task ends with.
func (c *call) cancelledError() error {
	return fmt.Errorf("tools/call %s: %w after %v", c.o.Name, ErrCancelled, c.o.CancelAfter)
}

// finishStreaming ends a complete stream: the merged segments are the
// result.
func (c *call) finishStreaming() {
	c.res.Content = c.seg.content()
	c.res.IsError = c.seg.isError
	c.res.Complete = true
	c.finish(nil)
}

// finishCanonical ends the call with a complete tool result.
func (c *call) finishCanonical(r *mcp.ToolCallResponse) {
	c.res.Content = r.Content
	if c.res.Content == nil {
		c.res.Content = []mcp.ContentBlock{}
	}
	c.res.StructuredContent = r.StructuredContent
	c.res.IsError = r.IsError
	c.res.Complete = true
	c.noteCompletedAt(r.Meta)
	c.par.terminal = true
	c.finish(nil)
}

// noteCompletedAt takes the server's completion time from a final answer's
// meta (mcp.MetaCompletedAt), when it carries one.
func (c *call) noteCompletedAt(m mcp.Meta) {
	if v, ok := m[mcp.MetaCompletedAt].(string); ok {
		if t, err := time.Parse(time.RFC3339Nano, v); err == nil {
			c.res.CompletedAt = t
			c.res.CompletedAtSource = CompletedAtMeta
		}
	}
}

// finishIncomplete ends the call with err and what arrived so far.
func (c *call) finishIncomplete(err error) {
	if c.done {
		return
	}
	c.res.Complete = false
	switch {
	case c.seg != nil && c.seg.received > 0:
		c.res.Content = c.seg.content()
	case len(c.par.content) > 0:
		c.res.Content = c.par.content
	}
	c.finish(err)
}

func (c *call) finish(err error) {
	if c.done {
		return
	}
	c.done = true
	c.err = err
	if c.seg != nil {
		c.res.Segments = c.seg.received
		c.res.Duplicates += c.seg.duplicates
		c.res.Discarded += c.seg.invalid
	}
	c.res.Duplicates += c.par.duplicates
	c.res.Partials = c.par.accepted
	c.res.PartialContent = c.par.content
	c.res.DataLoss = c.par.lost
	c.res.Discarded += c.par.afterTerminal
	if c.res.CompletedAt.IsZero() && c.status.terminal() {
		if t, err := mcp.ParseTime(c.status.last.LastUpdatedAt); err == nil {
			c.res.CompletedAt = t
			c.res.CompletedAtSource = CompletedAtLastUpdated
		}
	}
	e := Event{Kind: EventResult, TaskID: c.taskID, Err: err}
	if c.status.last != nil {
		e.Status = c.status.last.Status
	}
	if c.res.Complete {
		e.Detail = "complete"
	} else {
		e.Detail = "incomplete"
	}
	c.rec.add(e)
	if c.pollTimer != nil {
		c.pollTimer.Stop()
	}
	c.pollC, c.cancelC = nil, nil
}

func progressText(p mcp.ProgressParams) string {
	s := strconv.FormatFloat(p.Progress, 'f', -1, 64)
	if p.Total != nil {
		s += "/" + strconv.FormatFloat(*p.Total, 'f', -1, 64)
	}
	if p.Message != "" {
		s += " " + p.Message
	}
	return s
}

func joinInts(ns []int64) string {
	parts := make([]string, len(ns))
	for i, n := range ns {
		parts[i] = strconv.FormatInt(n, 10)
	}
	return strings.Join(parts, ",")
}
