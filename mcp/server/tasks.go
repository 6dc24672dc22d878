package server

import (
	"bytes"
	"encoding/json"
	"strconv"

	"github.com/tasksim/tasksim/mcp"
)

// taskOf decodes {taskId} params and finds the session's task.
func (ss *session) taskOf(msg *mcp.Message) (*task, *mcp.Error) {
	var p mcp.GetTaskParams
	if err := mcp.DecodeParams(msg.Params, &p); err != nil {
		return nil, err.(*mcp.Error)
	}
	if p.TaskID == "" {
		return nil, mcp.Errorf(mcp.CodeInvalidParams, "invalid params: taskId is required")
	}
	return ss.srv.store.lookup(ss, p.TaskID)
}

func (ss *session) tasksGet(msg *mcp.Message, r mcp.Replier) {
	t, err := ss.taskOf(msg)
	if err != nil {
		replyError(ss.ctx, r, msg.ID, err)
		return
	}
	// The answer goes out under the task's lock, which orders the task's
	// status changes: a task that ends meanwhile sends its status
	// notification after this answer, never before it with a staler
	// status after (2025-11-25 Tasks, "Task Status Lifecycle"). The lock
	// is held across the write as for the streamed segments; an HTTP
	// answer does not wait on the network.
	t.mu.Lock()
	defer t.mu.Unlock()
	reply(ss.ctx, r, msg.ID, t.snapshotLocked())
}

func (ss *session) tasksCancel(msg *mcp.Message, r mcp.Replier) {
	t, err := ss.taskOf(msg)
	if err != nil {
		replyError(ss.ctx, r, msg.ID, err)
		return
	}
	snap, err := t.cancel()
	if err != nil {
		replyError(ss.ctx, r, msg.ID, err)
		return
	}
	reply(ss.ctx, r, msg.ID, snap)
}

func (ss *session) tasksList(msg *mcp.Message, r mcp.Replier) {
	var p mcp.ListTasksParams
	if err := mcp.DecodeParams(msg.Params, &p); err != nil {
		replyError(ss.ctx, r, msg.ID, err)
		return
	}
	page, next, err := ss.srv.store.list(ss, p.Cursor, ss.srv.opts.ListPageSize)
	if err != nil {
		replyError(ss.ctx, r, msg.ID, err)
		return
	}
	res := mcp.ListTasksResult{Tasks: make([]mcp.Task, len(page)), NextCursor: next}
	for i, t := range page {
		res.Tasks[i] = t.snapshot()
	}
	reply(ss.ctx, r, msg.ID, res)
}

// tasksResult implements tasks/result. Without lastSeqNr it blocks until the
// task is terminal and returns exactly what the call would have returned
// (2025-11-25 Tasks, "Result Retrieval"); with lastSeqNr it returns at once
// the segments after it (SEP-1905, "Resuming Streaming").
func (ss *session) tasksResult(msg *mcp.Message, r mcp.Replier) {
	var p mcp.TaskResultParams
	if err := mcp.DecodeParams(msg.Params, &p); err != nil {
		replyError(ss.ctx, r, msg.ID, err)
		return
	}
	if p.TaskID == "" {
		replyError(ss.ctx, r, msg.ID, mcp.Errorf(mcp.CodeInvalidParams, "invalid params: taskId is required"))
		return
	}
	var last int64
	resume := len(p.LastSeqNr) > 0 && !bytes.Equal(p.LastSeqNr, []byte("null"))
	if resume {
		n, ok := parseLastSeqNr(p.LastSeqNr)
		if !ok {
			replyError(ss.ctx, r, msg.ID, mcp.Errorf(mcp.CodeInvalidParams,
				"invalid params: lastSeqNr must be a positive integer (seqNr starts at 1), got %s", p.LastSeqNr))
			return
		}
		last = n
	}
	t, err := ss.srv.store.lookup(ss, p.TaskID)
	if err != nil {
		replyError(ss.ctx, r, msg.ID, err)
		return
	}
	if resume {
		t.mu.Lock()
		res := mcp.PartialResult{
			PartialContent: t.segmentsAfterLocked(last),
			IsError:        t.status == mcp.StatusFailed,
			IsComplete:     t.status.IsTerminal(),
			Meta:           mcp.Meta{}.WithRelatedTask(t.id),
		}
		if res.IsComplete {
			res.Content = t.tail
		}
		t.mu.Unlock()
		reply(ss.ctx, r, msg.ID, res)
		return
	}
	ctx, done := ss.track(msg.ID)
	go func() {
		defer done()
		select {
		case <-t.done:
		case <-ctx.Done():
			// Cancelled by notifications/cancelled, or the session ended:
			// no response is due.
			_ = r.Reply(ss.ctx, nil, true)
			return
		}
		t.mu.Lock()
		expired := t.expired && t.status == mcp.StatusFailed && t.statusMessage == "Task has expired"
		res, rpcErr := t.resultLocked()
		t.mu.Unlock()
		switch {
		case expired:
			replyError(ss.ctx, r, msg.ID, mcp.Errorf(mcp.CodeInvalidParams, "Failed to retrieve task: Task has expired"))
		case rpcErr != nil:
			replyError(ss.ctx, r, msg.ID, rpcErr)
		default:
			reply(ss.ctx, r, msg.ID, res)
		}
	}()
}

// parseLastSeqNr accepts a JSON integer >= 1 (SEP-1905, "Resuming
// Streaming": zero, negative and non-numeric values are invalid).
func parseLastSeqNr(raw json.RawMessage) (int64, bool) {
	n, err := strconv.ParseInt(string(bytes.TrimSpace(raw)), 10, 64)
	return n, err == nil && n >= 1
}
