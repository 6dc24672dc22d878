package client

import (
	"errors"
	"fmt"
	"time"

	"github.com/tasksim/tasksim/clock"
	"github.com/tasksim/tasksim/mcp"
)

// fill asks for what the stream lacks: tasks/result with lastSeqNr set to
// the highest contiguous seqNr, or, when not even seqNr 1 arrived (a
// lastSeqNr below 1 is invalid, "Resuming Streaming"), the canonical
// result. One such request at a time.
func (c *call) fill() {
	if c.done() || c.inflight.fetching() || c.taskID == "" {
		return
	}
	if c.seg.contiguous < 1 {
		c.fetchCanonical()
		return
	}
	last := c.seg.contiguous
	c.inflight.add(reqResume)
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
	if c.done() || c.inflight.has(reqCanonical) || c.taskID == "" {
		return
	}
	c.inflight.add(reqCanonical)
	go func() {
		r, err := c.s.taskResult(c.ctx, c.rec, c.taskID, 0)
		c.async <- asyncResult{kind: asyncCanonical, resp: r, err: err}
	}()
}

func (c *call) onAsync(r asyncResult) {
	if c.done() {
		return
	}
	switch r.kind {
	case asyncGet:
		c.inflight.remove(reqGet)
		c.onGetAnswer(r)
	case asyncResume:
		c.inflight.remove(reqResume)
		c.onResumeAnswer(r)
	case asyncCanonical:
		c.inflight.remove(reqCanonical)
		c.onCanonicalAnswer(r)
	case asyncCancel:
		c.inflight.remove(reqCancel)
		c.onCancelAnswer(r)
	}
}

// onGetAnswer takes a tasks/get answer and polls again unless the result
// is being fetched.
func (c *call) onGetAnswer(r asyncResult) {
	if r.err != nil {
		c.onTaskRequestError(mcp.MethodTasksGet, r.err)
		return
	}
	c.errorsInRow = 0
	if c.updateTask(*r.task, SourceTasksGet) {
		c.afterStatus(SourceTasksGet)
	}
	if !c.done() && !c.inflight.has(reqCanonical) {
		c.armPoll()
	}
}

// onResumeAnswer takes the answer to a tasks/result with lastSeqNr.
func (c *call) onResumeAnswer(r asyncResult) {
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
	if !c.done() && c.phase == phaseResuming {
		c.armPoll()
	}
}

// onCanonicalAnswer takes the answer to a tasks/result without
// lastSeqNr.
func (c *call) onCanonicalAnswer(r asyncResult) {
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
	if c.phase.streams() && isStreamingResponse(r.resp) {
		c.ingest(r.resp, SourceTasksResult)
		c.fill()
		return
	}
	c.finishCanonical(r.resp)
}

// onCancelAnswer takes the tasks/cancel answer: the task's status.
func (c *call) onCancelAnswer(r asyncResult) {
	if r.err != nil {
		c.rec.add(Event{Kind: EventError, TaskID: c.taskID, Method: mcp.MethodTasksCancel, Err: r.err})
		return
	}
	if c.updateTask(*r.task, SourceCancel) {
		c.afterStatus(SourceCancel)
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

// pollInterval is the call's override, else the task's pollInterval
// (2025-11-25 Tasks, "Getting Tasks": requestors SHOULD respect it), else
// the session default.
func (c *call) pollInterval() time.Duration {
	d := c.s.opts.DefaultPollInterval
	if c.o.PollInterval > 0 {
		d = c.o.PollInterval
	} else if last := c.status.last; last != nil && last.PollInterval != nil && *last.PollInterval > 0 {
		d = mcp.Millis(*last.PollInterval, mcp.MaxDuration)
	}
	if p := c.s.opts.PollPolicy; p != nil {
		return p(d)
	}
	return d
}

// armPoll (re)starts the poll timer.
func (c *call) armPoll() {
	if c.done() {
		return
	}
	d := c.pollInterval()
	if c.phase == phaseStreaming && c.o.QuietPoll > d {
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
	if c.done() || c.taskID == "" {
		return
	}
	if c.phase == phaseResuming {
		c.fill()
		if !c.inflight.has(reqCanonical) {
			c.armPoll()
		}
		return
	}
	if c.inflight.has(reqCanonical | reqGet) {
		return
	}
	c.inflight.add(reqGet)
	c.poll()
}

// poll makes one tasks/get request in a goroutine and reports on async.
// In poll mode, which polls every interval, one goroutine makes them all:
// a new goroutine would grow its stack for the HTTP round trip again at
// every poll (runtime.copystack was 8 % of the polling generator's CPU).
// Other modes poll seldom and keep no goroutine between polls. Only one
// tasks/get is in flight at a time (reqGet), so the send never blocks.
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
	if !c.cancelDue || c.inflight.has(reqCancel) || c.done() {
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
	c.inflight.add(reqCancel)
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
