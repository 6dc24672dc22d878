package server

import (
	"context"
	"encoding/json"
	"sync"
	"time"

	"github.com/tasksim/tasksim/clock"
	"github.com/tasksim/tasksim/mcp"
	rev "github.com/tasksim/tasksim/mcp/rev20260728"
	"github.com/tasksim/tasksim/mcp/rev20260728/tasks"
)

// A task of the stateless era (the tasks extension io.modelcontextprotocol/
// tasks of 2026-07-28). No session owns it: any request that names its id
// and declares the extension reaches it, as the id is the capability
// (Tasks, "Streamable HTTP: Routing Headers": the id routes the request to
// the instance that holds the task). The server holds these tasks on a
// board of their own, beside the session store, bounded like it.
//
//	tools/call ─▶ board.add ─▶ CreateTaskResult   (durable create: stored first)
//	                │  tool runs under board ctx ─▶ finish: completed | failed
//	tasks/get ────▶ lookup ─▶ DetailedTask        (result or error inlined)
//	tasks/cancel ─▶ lookup ─▶ cancelled, run stopped, ack
//	ttl (server clock) ─▶ working: failed (-32603 inlined), run stopped
//	                  │     ─▶ ttlGrace later: removed
//	                  └▶ terminal: removed; later lookups -32602 "expired"

// ttlGrace is how long a task that its ttl failed stays on the board,
// failed, before it is deleted: long enough for a client polling at the
// suggested interval to read its outcome (twice the poll interval), and
// at least a minute (Tasks, "Task Polling": the server MAY mark a task
// failed after its ttl elapses, and subsequently delete it).
func ttlGrace(pollInterval time.Duration) time.Duration {
	return max(time.Minute, 2*pollInterval)
}

// statelessTask is the server's record of one stateless task. The fields
// before mu never change after creation; the others are guarded by mu.
type statelessTask struct {
	board        *board
	id           string
	createdAt    time.Time
	ttl          time.Duration
	pollInterval time.Duration
	cancelRun    context.CancelFunc
	// caps are the client capabilities of the creating request: what the
	// task may ask the client for (input.go).
	caps *rev.ClientCapabilities

	mu            sync.Mutex
	status        mcp.TaskStatus
	statusMessage string
	updatedAt     time.Time
	result        json.RawMessage // completed: the CallToolResult
	rpcErr        *mcp.Error      // failed: the JSON-RPC error
	// charged is what the task holds of the stateless requests' budget:
	// the bytes its arguments asked for while it runs, its result's after.
	charged int64
	// gone: the task was deleted (expired, or the server closed); it
	// changes no more and holds nothing.
	gone   bool
	expiry clock.Timer
	// The task's input requests (input.go): pending are outstanding by
	// key, answered hold the answers not yet taken by the tool, keys
	// counts the keys minted, and changed is closed and replaced on every
	// answer taken. All nil until the task first asks.
	pending  rev.InputRequests
	answered map[string]json.RawMessage
	keys     int
	changed  chan struct{}
	// subs are the subscriptions watching the task (listen.go).
	subs map[*subscription]struct{}
}

// detailLocked is the task as tasks/get answers it: a DetailedTask with
// the result or the error of a terminal task inlined (Tasks, "Task
// Polling", Response 1–5). t.mu must be held.
func (t *statelessTask) detailLocked() tasks.DetailedTask {
	ttl := t.ttl.Milliseconds()
	poll := t.pollInterval.Milliseconds()
	return tasks.DetailedTask{
		Task: tasks.Task{
			TaskID:         t.id,
			Status:         t.status,
			StatusMessage:  t.statusMessage,
			CreatedAt:      mcp.FormatTime(t.createdAt),
			LastUpdatedAt:  mcp.FormatTime(t.updatedAt),
			TTLMs:          &ttl,
			PollIntervalMs: &poll,
		},
		InputRequests: t.inputRequestsLocked(),
		Result:        t.result,
		Error:         t.rpcErr,
	}
}

// inputRequestsLocked returns the outstanding input requests of an
// input_required task, every one of them (Tasks, "Task Polling",
// Response 2), and nil in any other status. t.mu must be held.
func (t *statelessTask) inputRequestsLocked() rev.InputRequests {
	if t.status != mcp.StatusInputRequired {
		return nil
	}
	return t.outstandingLocked()
}

// finish ends the task with the tool's outcome, unless it ended already
// (cancelled, expired): a terminal status never changes (Tasks, "Task
// Status"). A tool execution error is completed with isError; failed is
// for a JSON-RPC error only.
func (t *statelessTask) finish(res *mcp.CallToolResult, rpcErr *mcp.Error) {
	t.mu.Lock()
	if t.gone || t.status.IsTerminal() {
		t.mu.Unlock()
		return
	}
	var held int64
	if rpcErr != nil {
		t.rpcErr = rpcErr
		t.statusMessage = "Tool execution failed: " + rpcErr.Message
		held = int64(len(rpcErr.Message) + len(rpcErr.Data))
		t.setStatusLocked(mcp.StatusFailed)
	} else {
		// The CallToolResult the call would have returned, in this
		// revision's shape (Tasks, "Task Polling": CompletedTask.result
		// "matches the result type of the original request").
		// Its _meta carries the completion time, as the 2025-11-25
		// tasks/result does (mcp.MetaCompletedAt): the load generator's
		// discovery delay needs it to the nanosecond.
		done := t.board.clock.Now()
		at, _ := json.Marshal(done.UTC().Format(time.RFC3339Nano))
		b, err := json.Marshal(callResult(res, &rev.ResultMeta{Extra: map[string]json.RawMessage{mcp.MetaCompletedAt: at}}))
		if err != nil {
			t.rpcErr = mcp.Errorf(mcp.CodeInternalError, "internal error: %v", err)
			t.statusMessage = "Tool execution failed: the result does not encode"
			t.setStatusLocked(mcp.StatusFailed)
		} else {
			t.result = b
			held = int64(len(b))
			if res.IsError {
				// completed, not failed: the tool reported an error in
				// its result, which is no JSON-RPC error (Tasks, "Task
				// Status", "Task Execution Errors").
				t.statusMessage = "The tool reported an error."
			}
			t.setStatusLocked(mcp.StatusCompleted)
		}
	}
	t.rechargeLocked(held)
	t.mu.Unlock()
	t.board.ended()
	// The tool has returned: its context goes now rather than stay a
	// child of the board's until the ttl.
	t.cancelRun()
}

// cancel marks a running task cancelled and stops its tool; a terminal
// task is left as it is (Tasks, "Task Cancellation": cooperative, and the
// same ack either way). It reports whether it changed the task.
func (t *statelessTask) cancel() bool {
	t.mu.Lock()
	if t.gone || t.status.IsTerminal() {
		t.mu.Unlock()
		return false
	}
	t.statusMessage = "The task was cancelled by request."
	t.setStatusLocked(mcp.StatusCancelled)
	t.rechargeLocked(0)
	t.mu.Unlock()
	t.cancelRun()
	t.board.ended()
	return true
}

// setStatusLocked moves the task to s. t.mu must be held.
func (t *statelessTask) setStatusLocked(s mcp.TaskStatus) {
	t.status = s
	t.updatedAt = t.board.clock.Now()
	t.publishLocked()
}

// rechargeLocked makes the task hold n bytes of the stateless budget: the
// result is in memory already, so it is charged whatever the budget says.
// t.mu must be held.
func (t *statelessTask) rechargeLocked(n int64) {
	switch {
	case n > t.charged:
		t.board.budget.force(nil, n-t.charged)
	case n < t.charged:
		t.board.budget.release(nil, t.charged-n)
	}
	t.charged = n
}

// expire runs when the ttl has elapsed, in the clock's goroutine. A task
// still working fails with a -32603 error inlined, its tool stopped, and
// is deleted ttlGrace later, so that a poll after the ttl reads why it
// ended rather than "not found"; a terminal task is deleted at once
// (Tasks, "Task Polling": "the server MAY mark a task as failed at any
// point after the TTL elapses, and subsequently delete it"). It only
// takes the board's lock and the task's, never held across I/O.
func (t *statelessTask) expire() {
	t.mu.Lock()
	if t.gone || t.status.IsTerminal() {
		t.mu.Unlock()
		t.board.remove(t)
		t.drop()
		return
	}
	t.rpcErr = mcp.Errorf(mcp.CodeInternalError, "Task has expired: its ttl of %d ms passed before it finished", t.ttl.Milliseconds())
	t.statusMessage = "The task's ttl passed before it finished."
	t.setStatusLocked(mcp.StatusFailed)
	t.rechargeLocked(int64(len(t.rpcErr.Message)))
	t.expiry = t.board.clock.AfterFunc(ttlGrace(t.pollInterval), t.expire)
	t.mu.Unlock()
	t.cancelRun()
	t.board.ended()
}

// drop ends a deleted task: its tool stops and its bytes go back.
func (t *statelessTask) drop() {
	t.mu.Lock()
	live := !t.gone && !t.status.IsTerminal()
	t.gone = true
	t.unpublishLocked()
	t.rechargeLocked(0)
	if t.expiry != nil {
		t.expiry.Stop()
	}
	t.mu.Unlock()
	t.cancelRun()
	if live {
		t.board.ended()
	}
}
