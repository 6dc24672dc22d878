package server

import (
	"context"
	"errors"
	"time"

	"github.com/tasksim/tasksim/mcp"
)

// A task's life once created: what its tool emits (segments, partial and
// progress notifications), how it ends (finished, cancelled, expired,
// stopped with its session) and the status notification that follows.

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
