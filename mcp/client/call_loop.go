package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/tasksim/tasksim/clock"
	"github.com/tasksim/tasksim/mcp"
)

// maxErrorsInRow ends a call after this many failed polls in a row.
const maxErrorsInRow = 5

// call is one CallTool in progress. Its state belongs to one goroutine,
// the one running the loop: the session's reader only hands messages
// over (the call's inboxes), and requests that may block (tasks/get,
// tasks/result, tasks/cancel) run in goroutines of their own and report
// on async. The loop takes whatever is queued at once, so a busy call
// handles a batch of messages per wake-up.
//
//	tools/call answers (0..N, one id) ─┐
//	task notifications (status, partial)┼─▶ loop ─▶ phase, requests, trackers ─▶ CallResult
//	async answers (get, result, cancel) ┤
//	poll and cancel timers ─────────────┘
type call struct {
	s    *Session
	o    CallOptions
	mode Mode
	rec  *recorder
	res  *CallResult
	ctx  context.Context // ends when the call ends: outstanding requests are cancelled

	// phase is where the call stands (see phase); inflight the requests
	// about its task it waits for.
	phase    phase
	inflight requests
	// cancelDue: CancelAfter elapsed and the cancel is not sent yet (it
	// waits for the task id).
	cancelDue bool

	id     mcp.ID               // of tools/call
	resp   *inbox[*mcp.Message] // its answers; nil once it failed
	taskID string
	task   *inbox[taskNote] // the task's notifications
	// status is the task's status as reported by every source, stale
	// reports and reports after a terminal status left out.
	status statusTracker

	seg *segmentTracker // from the first streaming response on
	par partialTracker

	async chan asyncResult
	// polls feeds the goroutine that makes a poll-mode call's tasks/get
	// requests (poll); nil until the first.
	polls          chan struct{}
	errorsInRow    int
	pollTimer      *clock.ChanTimer
	pollC, cancelC <-chan time.Time
	err            error
}

// to moves the call to the phase e leads to; it reports false, changing
// nothing, when the phase does not accept e.
func (c *call) to(e callEvent) bool {
	p, ok := c.phase.next(e)
	c.phase = p
	return ok
}

// done reports whether the call ended.
func (c *call) done() bool { return c.phase == phaseDone }

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
	resp, err := c.send(ctx, stop, params)
	if resp == nil {
		return err
	}
	c.resp = resp
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
	c.loop(parent)
	return c.err
}

// send sends tools/call and waits until it is written: it returns the
// inbox of the answers, or nil and the error the call ends with.
func (c *call) send(ctx context.Context, stop func(), params mcp.CallToolParams) (*inbox[*mcp.Message], error) {
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
		return nil, c.err
	}
	if r.err != nil {
		err := fmt.Errorf("tools/call %s: %w", c.o.Name, errors.Unwrap(r.err))
		c.rec.add(Event{Kind: EventError, Method: mcp.MethodToolsCall, RequestID: c.id, Err: err})
		return nil, err
	}
	return r.resp, nil
}

// loop is the call's one owner at work: it waits for whatever comes and
// decides, until the call is done. parent is the caller's context.
func (c *call) loop(parent context.Context) {
	for !c.done() {
		select {
		case <-c.resp.ready():
			c.onAnswers()
		case <-c.task.ready():
			c.onTaskNotifications()
		case r := <-c.async:
			c.onAsync(r)
		case <-c.pollC:
			c.pollC = nil
			c.onPoll()
		case <-c.cancelC:
			c.cancelC = nil
			c.cancelDue = true
			c.tryCancel()
		case <-c.ctx.Done():
			if c.phase == phaseCalling || c.res.Answer == AnswerPlain {
				c.s.cancelRequest(c.id, "the client stopped waiting")
			}
			c.finishIncomplete(fmt.Errorf("tools/call %s: %w", c.o.Name, parent.Err()))
		}
	}
}
