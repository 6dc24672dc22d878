package server

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/tasksim/tasksim/mcp"
	"github.com/tasksim/tasksim/mcp/clock"
)

func (ss *session) toolsCall(msg *mcp.Message, r mcp.Replier) {
	var p mcp.CallToolParams
	if err := mcp.DecodeParams(msg.Params, &p); err != nil {
		replyError(ss.ctx, r, msg.ID, err)
		return
	}
	if p.Name == "" {
		replyError(ss.ctx, r, msg.ID, mcp.Errorf(mcp.CodeInvalidParams, "invalid params: name is required"))
		return
	}
	tool := ss.srv.tools[p.Name]
	if tool == nil {
		replyError(ss.ctx, r, msg.ID, mcp.Errorf(mcp.CodeInvalidParams, "Unknown tool: %s", p.Name))
		return
	}
	// 2025-11-25 Tasks, "Tool-Level Negotiation": a task for a tool that
	// does not allow one, or none for a tool that requires one, is -32601.
	support := mcp.TaskSupportForbidden
	if tool.Execution != nil && tool.Execution.TaskSupport != "" {
		support = tool.Execution.TaskSupport
	}
	if p.Task != nil && support == mcp.TaskSupportForbidden {
		replyError(ss.ctx, r, msg.ID, mcp.Errorf(mcp.CodeMethodNotFound, "Tool %s does not support task-augmented calls", p.Name))
		return
	}
	if p.Task == nil && support == mcp.TaskSupportRequired {
		replyError(ss.ctx, r, msg.ID, mcp.Errorf(mcp.CodeMethodNotFound, "Tool %s requires a task-augmented call", p.Name))
		return
	}
	run, err := tool.Prepare(p.Arguments)
	if err != nil {
		var e *mcp.Error
		if !errors.As(err, &e) {
			e = mcp.Errorf(mcp.CodeInvalidParams, "invalid arguments for %s: %v", p.Name, err)
		}
		replyError(ss.ctx, r, msg.ID, e)
		return
	}
	var size int64
	if tool.Size != nil {
		size = tool.Size(p.Arguments)
	}
	if limit := ss.srv.opts.MaxTaskBytes; size > limit {
		// Refused before anything runs or is stored: one call must not
		// hold more than a task may (docs/server.md, "Limits").
		replyError(ss.ctx, r, msg.ID, mcp.Errorf(mcp.CodeInvalidParams,
			"invalid arguments for %s: the result would hold %d bytes, over the server's limit of %d bytes per task", p.Name, size, limit))
		return
	}
	var token json.RawMessage
	if p.Meta != nil {
		token = p.Meta.ProgressToken
	}
	if p.Task == nil {
		ss.plainCall(msg.ID, run, token, r)
		return
	}
	ss.taskCall(msg.ID, tool, p.Task, run, token, size, r)
}

// plainCall runs a call without a task and answers with its result.
// Progress notifications travel on the request's own answer.
func (ss *session) plainCall(id mcp.ID, run RunFunc, token json.RawMessage, r mcp.Replier) {
	ctx, done := ss.track(id)
	var emitted []mcp.ContentBlock
	var held int64 // bytes of emitted, charged to the session's budget
	b := ss.srv.budget
	c := &Call{
		clock: ss.srv.opts.Clock,
		conn:  r,
		emit: func(_ context.Context, blocks []mcp.ContentBlock) error {
			n := blocksBytes(blocks)
			if held+n > ss.srv.opts.MaxTaskBytes || !b.reserve(ss, n) {
				return ErrBudget
			}
			held += n
			emitted = append(emitted, blocks...)
			return nil
		},
		progress: func(ctx context.Context, p mcp.ProgressParams) error {
			if token == nil {
				return nil
			}
			p.ProgressToken = token
			n, err := mcp.NewNotification(mcp.NotificationProgress, p)
			if err != nil {
				return err
			}
			return r.Reply(ctx, n, false)
		},
	}
	go func() {
		defer done()
		defer func() { b.release(ss, held) }()
		res, err := run(ctx, c)
		if ctx.Err() != nil && ss.ctx.Err() == nil {
			// Cancelled by notifications/cancelled: the request gets no
			// response; the answer is ended without one.
			_ = r.Reply(ss.ctx, nil, true)
			return
		}
		var rpcErr *mcp.Error
		if errors.As(err, &rpcErr) {
			replyError(ss.ctx, r, id, rpcErr)
			return
		}
		out := &mcp.CallToolResult{Content: emitted}
		if res != nil {
			out.Content = append(out.Content, res.Content...)
			out.StructuredContent = res.StructuredContent
			out.IsError = res.IsError
			out.Meta = res.Meta
		}
		if err != nil {
			out.IsError = true
			out.Content = append(out.Content, mcp.TextBlock(err.Error()))
		}
		if out.Content == nil {
			out.Content = []mcp.ContentBlock{}
		}
		reply(ss.ctx, r, id, out)
	}()
}

// taskCall creates a task for a task-augmented call and answers in the
// response mode SEP-1905 negotiation picks.
func (ss *session) taskCall(id mcp.ID, tool *Tool, tp *mcp.TaskParams, run RunFunc, token json.RawMessage, size int64, r mcp.Replier) {
	o := &ss.srv.opts
	dec := mcp.DecideMode(tp.ResponseModes, o.Modes, true, tool.Incremental)
	now := o.Clock.Now()
	ttl := o.DefaultTTL
	if tp.TTL != nil && *tp.TTL > 0 {
		// Capped at MaxTTL in milliseconds, before any conversion can
		// overflow (2025-11-25 Tasks, "Resource Management": receivers
		// MAY override the requested ttl).
		ttl = mcp.Millis(*tp.TTL, o.MaxTTL)
	}
	taskID, err := ss.srv.ids.next()
	if err != nil {
		replyError(ss.ctx, r, id, mcp.Errorf(mcp.CodeInternalError, "internal error: %v", err))
		return
	}
	runCtx, cancel := context.WithCancel(ss.ctx)
	t := &task{
		id:            taskID,
		owner:         ss,
		tool:          tool.Name,
		mode:          dec.Mode,
		createdAt:     now,
		ttl:           ttl,
		pollInterval:  o.PollInterval,
		partial:       !o.NoPartial && ss.clientWantsPartials(),
		progressToken: token,
		cancelRun:     cancel,
		done:          make(chan struct{}),
		firstEmit:     make(chan struct{}),
		status:        mcp.StatusWorking,
		updatedAt:     now,
		charged:       size,
	}
	// The bytes the arguments ask for are reserved up front, so that
	// calls that together would overrun the budgets are refused at once
	// rather than failing halfway.
	if !ss.srv.budget.reserve(ss, size) {
		cancel()
		replyError(ss.ctx, r, id, mcp.Errorf(mcp.CodeInternalError,
			"server busy: a result of %d bytes does not fit the memory budget (%d bytes per session, %d in all)", size, o.MaxSessionBytes, o.MaxServerBytes))
		return
	}
	if err := ss.srv.store.add(t, o.MaxTasksPerSession, o.MaxTasks); err != nil {
		cancel()
		ss.srv.budget.release(ss, size)
		replyError(ss.ctx, r, id, err)
		return
	}
	t.mu.Lock()
	t.expiry = o.Clock.AfterFunc(ttl, t.expire)
	t.mu.Unlock()
	defer t.firstAnswerSent()
	c := &Call{clock: o.Clock, emit: t.emit, progress: t.sendProgress}
	start := func() {
		go func() {
			res, err := run(runCtx, c)
			t.finish(res, err)
		}()
	}

	mode := dec.Mode
	if dec.Negotiated == mcp.ModeImmediate || mode == mcp.ModeStreaming {
		// Is the result complete at request time? The tool runs for at
		// most the window; a first chunk means it is not. The window is on
		// the server's clock, so on a clock.Sim the decision follows
		// simulated time; it is made before the tool starts, so it fires
		// before a tool timer due at the same instant.
		window := clock.NewTimer(o.Clock, o.ImmediateWindow)
		start()
		start = func() {} // already running
		select {
		case <-t.done:
		case <-t.firstEmit:
		case <-window.C():
		case <-ss.ctx.Done():
			window.Stop()
			return
		}
		window.Stop()
		t.mu.Lock()
		complete := t.status.IsTerminal()
		t.mu.Unlock()
		switch {
		case complete && dec.Negotiated == mcp.ModeImmediate:
			// Case 1: the full result in content, the task (created for
			// tracking) already completed (SEP-1905, "Case 1").
			t.mu.Lock()
			res, rpcErr := t.resultLocked()
			t.mu.Unlock()
			if rpcErr != nil {
				replyError(ss.ctx, r, id, rpcErr)
				return
			}
			reply(ss.ctx, r, id, res)
			return
		case complete:
			// Streaming with everything ready: one response that is
			// also the last (SEP-1905 test scenario 3).
			t.mu.Lock()
			final := t.finalStreamResponseLocked(t.segmentsLocked())
			t.mu.Unlock()
			msg, _ := mcp.NewResult(id, final)
			_ = r.Reply(ss.ctx, msg, true)
			return
		case dec.Negotiated == mcp.ModeImmediate:
			mode = mcp.DecideMode(tp.ResponseModes, o.Modes, false, tool.Incremental).Mode
		}
	}

	switch mode {
	case mcp.ModeStreaming:
		// Case 3, initial response option 1: the task and the segments
		// already there; later segments follow on the same answer with
		// the same id (SEP-1905, "Case 3").
		t.mu.Lock()
		if t.status.IsTerminal() {
			// It ended since the wait: send it whole.
			final := t.finalStreamResponseLocked(t.segmentsLocked())
			t.mu.Unlock()
			msg, _ := mcp.NewResult(id, final)
			_ = r.Reply(ss.ctx, msg, true)
			return
		}
		snap := t.snapshotLocked()
		initial := mcp.PartialResult{
			Task:           &snap,
			PartialContent: t.segmentsLocked(),
			Meta:           mcp.Meta{}.WithRelatedTask(t.id),
		}
		if initial.PartialContent == nil {
			initial.PartialContent = []mcp.Segment{}
		}
		t.stream, t.streamID = r, id
		msg, _ := mcp.NewResult(id, initial)
		_ = r.Reply(ss.ctx, msg, false)
		t.mu.Unlock()
		start()
	default:
		// Case 2: CreateTaskResult. A fallback is announced in the meta
		// and the status message (SEP-1905, "Capability Negotiation").
		t.mu.Lock()
		if dec.Negotiated == mcp.ModeImmediate && t.status.IsTerminal() {
			// The tool, started for the immediate window, ended since:
			// the result is ready, so Case 1 after all. A CreateTaskResult
			// would show a task created in a terminal status ("Tasks MUST
			// begin in the working status", 2025-11-25 Tasks › Task Status
			// Lifecycle).
			res, rpcErr := t.resultLocked()
			t.mu.Unlock()
			if rpcErr != nil {
				replyError(ss.ctx, r, id, rpcErr)
				return
			}
			reply(ss.ctx, r, id, res)
			return
		}
		res := mcp.CreateTaskResult{Task: t.snapshotLocked()}
		if dec.Fallback {
			res.Meta = mcp.Meta{mcp.MetaFallbackMode: string(mcp.ModeTask)}
			res.Task.StatusMessage = "none of the requested response modes is supported; falling back to task mode"
		}
		t.mu.Unlock()
		reply(ss.ctx, r, id, res)
		start()
	}
}

// emit records blocks as segments and pushes them to the open streaming
// answer and, when negotiated, as a partial notification.
func (t *task) emit(ctx context.Context, blocks []mcp.ContentBlock) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.status.IsTerminal() {
		return ErrTaskEnded // SEP-2679 §1.3 rule 2; SEP-1905 cancellation
	}
	if err := t.chargeLocked(blocksBytes(blocks)); err != nil {
		return err
	}
	if len(t.segments) == 0 {
		close(t.firstEmit)
	}
	segs := t.appendSegmentsLocked(blocks)
	if t.stream != nil {
		if t.segmentMeta == nil {
			t.segmentMeta = mcp.Meta{}.WithRelatedTask(t.id)
		}
		msg, err := mcp.NewResult(t.streamID, mcp.PartialResult{
			PartialContent: segs,
			Meta:           t.segmentMeta,
		})
		if err == nil {
			_ = t.stream.Reply(ctx, msg, false)
		}
	}
	t.sendPartialLocked(blocks)
	return nil
}

// appendSegmentsLocked numbers blocks from the next seqNr (SEP-1905,
// "Sequence Number Requirements": from 1, +1, never reused).
func (t *task) appendSegmentsLocked(blocks []mcp.ContentBlock) []mcp.Segment {
	segs := make([]mcp.Segment, len(blocks))
	next := int64(len(t.segments)) + 1
	for i, b := range blocks {
		segs[i] = mcp.Segment{SeqNr: next + int64(i), ContentBlock: b}
	}
	t.segments = append(t.segments, segs...)
	return segs
}

// sendPartialLocked sends notifications/tasks/partial: only to a client
// that declared tasks.streaming.partial (SEP-2679 §2.3), with seq from 0
// in steps of 1 (§1.3 rule 4) and never empty content (rule 5).
func (t *task) sendPartialLocked(blocks []mcp.ContentBlock) {
	if !t.partial || len(blocks) == 0 {
		return
	}
	n, err := mcp.NewPartialNotification(mcp.TaskPartialParams{TaskID: t.id, Content: blocks, Seq: t.nextSeq})
	if err != nil {
		return
	}
	t.nextSeq++
	_ = t.owner.out.Send(t.owner.ctx, n)
}

// sendProgress sends notifications/progress with the creating request's
// token, valid for the task's whole life (2025-11-25 Progress, "Behavior
// Requirements"), and never after a terminal status.
func (t *task) sendProgress(ctx context.Context, p mcp.ProgressParams) error {
	if t.progressToken == nil {
		return nil
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.status.IsTerminal() {
		return ErrTaskEnded
	}
	p.ProgressToken = t.progressToken
	p.Meta = mcp.Meta{}.WithRelatedTask(t.id)
	n, err := mcp.NewNotification(mcp.NotificationProgress, p)
	if err != nil {
		return err
	}
	if t.stream != nil {
		return t.stream.Reply(ctx, n, false)
	}
	return t.owner.out.Send(t.owner.ctx, n)
}

// finish ends the task with what the tool returned, unless it already
// ended (cancelled, expired): a cancelled task stays cancelled.
func (t *task) finish(res *mcp.CallToolResult, err error) {
	t.mu.Lock()
	if t.status.IsTerminal() {
		t.mu.Unlock()
		return
	}
	var rpcErr *mcp.Error
	failed := false
	var extra []mcp.ContentBlock
	switch {
	case errors.As(err, &rpcErr):
		t.rpcErr = rpcErr
		failed = true
		t.statusMessage = "Tool execution failed: " + rpcErr.Message
		extra = []mcp.ContentBlock{mcp.TextBlock(rpcErr.Message)}
	case err != nil:
		failed = true
		t.statusMessage = "Tool execution failed: " + err.Error()
		extra = []mcp.ContentBlock{mcp.TextBlock(err.Error())}
	case res != nil:
		failed = res.IsError
		extra = res.Content
		t.structured = res.StructuredContent
		if failed {
			t.statusMessage = "Tool execution failed"
		}
	}
	t.forceChargeLocked(blocksBytes(extra))
	var segs []mcp.Segment
	if !failed {
		// The rest of the result: segments like the emitted ones, and
		// partials before the terminal status (SEP-2679 §1.3 rule 3).
		segs = t.appendSegmentsLocked(extra)
		t.sendPartialLocked(extra)
	} else if len(t.segments) > 0 {
		// A failure after partial results: the error travels as segments
		// (SEP-1905, "Streaming Behavior").
		segs = t.appendSegmentsLocked(extra)
	} else {
		// A failure with no partial result: the error travels as content.
		t.tail = append(t.tail, extra...)
	}
	status := mcp.StatusCompleted
	if failed {
		status = mcp.StatusFailed
	}
	t.setStatusLocked(status)
	if t.stream != nil {
		t.replyFinalLocked(t.finalStreamResponseLocked(segs))
	}
	t.mu.Unlock()
	t.ended()
}

// finalStreamResponseLocked is the last SEP-1905 streaming response:
// isComplete true, isError on failure, the final segments, and the tail in
// content format when there was no segment to carry it.
func (t *task) finalStreamResponseLocked(segs []mcp.Segment) mcp.PartialResult {
	snap := t.snapshotLocked()
	if segs == nil {
		segs = []mcp.Segment{}
	}
	meta := mcp.Meta{}.WithRelatedTask(t.id)
	if !t.completedAt.IsZero() {
		meta[mcp.MetaCompletedAt] = t.completedAt.UTC().Format(time.RFC3339Nano)
	}
	return mcp.PartialResult{
		Task:           &snap,
		PartialContent: segs,
		Content:        t.tail,
		IsError:        t.status == mcp.StatusFailed,
		IsComplete:     true,
		Meta:           meta,
	}
}

func (t *task) replyFinalLocked(res mcp.PartialResult) {
	msg, err := mcp.NewResult(t.streamID, res)
	if err == nil {
		_ = t.stream.Reply(t.owner.ctx, msg, true)
	}
	t.stream = nil
}

// setStatusLocked moves the task to a status (2025-11-25 Tasks, "Task
// Status Lifecycle": callers never leave a terminal status) and, for a
// terminal one, releases tasks/result waiters.
func (t *task) setStatusLocked(s mcp.TaskStatus) {
	now := t.owner.srv.opts.Clock.Now()
	t.status = s
	t.updatedAt = now
	if s.IsTerminal() {
		t.completedAt = now
		close(t.done)
		t.trimChargeLocked()
	}
}

// ended runs after a terminal transition, outside the lock: the status
// notification (after every partial, SEP-2679 §1.3 rule 3) and bookkeeping.
func (t *task) ended() {
	t.owner.srv.store.ended(t)
	t.cancelRun()
	if t.owner.srv.opts.NoStatusNotifications {
		return
	}
	t.statusMu.Lock()
	if !t.answered {
		t.statusHeld = true
		t.statusMu.Unlock()
		return
	}
	t.statusMu.Unlock()
	t.sendStatus()
}

// firstAnswerSent runs when the creating request's handler has sent its
// first answer (or given up): a status notification held until then goes
// out now (task.answered).
func (t *task) firstAnswerSent() {
	t.statusMu.Lock()
	t.answered = true
	held := t.statusHeld
	t.statusHeld = false
	t.statusMu.Unlock()
	if held {
		t.sendStatus()
	}
}

// sendStatus sends the task's status notification.
func (t *task) sendStatus() {
	n, err := mcp.NewNotification(mcp.NotificationTaskStatus, mcp.TaskStatusParams{Task: t.snapshot()})
	if err == nil {
		_ = t.owner.out.Send(t.owner.ctx, n)
	}
}

// cancel implements tasks/cancel (2025-11-25 Tasks, "Task Cancellation";
// SEP-1905 scenario 10): a terminal task cannot be cancelled; otherwise the
// task is cancelled before the response, and its stream ends with
// isComplete.
func (t *task) cancel() (mcp.Task, *mcp.Error) {
	t.mu.Lock()
	if t.status.IsTerminal() {
		st := t.status
		t.mu.Unlock()
		return mcp.Task{}, mcp.Errorf(mcp.CodeInvalidParams, "Cannot cancel task: already in terminal status '%s'", st)
	}
	t.statusMessage = "The task was cancelled by request."
	t.setStatusLocked(mcp.StatusCancelled)
	if t.stream != nil {
		t.replyFinalLocked(t.finalStreamResponseLocked(nil))
	}
	snap := t.snapshotLocked()
	t.mu.Unlock()
	t.ended()
	return snap, nil
}

// expire runs when the task's ttl has elapsed: the task is deleted whatever
// its status (2025-11-25 Tasks, "TTL and Resource Management"). It runs in
// the clock's goroutine, on a clock.Sim the one that advances the clock,
// and must not block there: it only takes the store's lock (never held
// across I/O), so from the moment the clock passes the ttl every lookup
// says "expired". Ending the task takes the task's lock, which a tool
// holds while it writes to the transport, and sends messages, so it runs
// in a goroutine of its own.
func (t *task) expire() {
	t.owner.srv.store.remove(t, true)
	go t.end()
}

// end finishes an expired task. A task still running fails first, and a
// streaming answer still open gets a final response with isComplete
// (SEP-1905, "TTL Expiration During Streaming"); a blocked tasks/result
// gets the "expired" error.
func (t *task) end() {
	t.mu.Lock()
	t.expired = true
	running := !t.status.IsTerminal()
	if running {
		t.statusMessage = "Task has expired"
		msg := []mcp.ContentBlock{mcp.TextBlock("Task has expired")}
		t.forceChargeLocked(blocksBytes(msg))
		var segs []mcp.Segment
		if len(t.segments) > 0 {
			segs = t.appendSegmentsLocked(msg)
		} else {
			t.tail = append(t.tail, msg...)
		}
		t.setStatusLocked(mcp.StatusFailed)
		if t.stream != nil {
			t.replyFinalLocked(t.finalStreamResponseLocked(segs))
		}
	}
	t.mu.Unlock()
	if running {
		t.ended()
	}
	t.cancelRun()
	// The expiry already unlisted the task; its bytes go back now that it
	// produces nothing more.
	t.releaseCharge()
}

// stop ends a task whose session closed, without messages: nobody is left
// to receive them.
func (t *task) stop() {
	t.mu.Lock()
	if t.expiry != nil {
		t.expiry.Stop()
	}
	if !t.status.IsTerminal() {
		t.statusMessage = "The session ended."
		t.setStatusLocked(mcp.StatusCancelled)
	}
	t.stream = nil
	t.mu.Unlock()
	t.cancelRun()
	t.releaseCharge()
}
