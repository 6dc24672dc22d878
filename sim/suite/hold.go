package suite

import (
	"context"
	"encoding/json"
	"sync"

	"github.com/tasksim/tasksim/mcp"
	"github.com/tasksim/tasksim/mcp/server"
)

// Hold says how long the scripted server's tools keep their tasks
// working: a tool that has returned does not end its task until the
// client has done what the scenario needs of a working task, or the
// scenario's timeout. It holds the real tool's end, so what the server
// says stays true (the task is working while it waits, and its result is
// the tool's); and it makes what the scenario judges depend on what the
// client does, not on how fast the client, the machine or the tool are.
//
// Whatever Hold says, a task's end is held until the server has sent the
// first answer to its tools/call (a CreateTaskResult, or a streaming
// response's first part): a result is never ready at request time, so a
// task-augmented call is never answered whole at once and leaves a
// stream to cut, drop or repeat, or a task to poll (SEP-1905, Server
// Response Decision Process: the server answers in the mode the result's
// readiness allows).
type Hold struct {
	// Polls holds a task's end until the client has sent this many
	// tasks/get of it (0: none), so that a client's polling can be judged
	// however late its first poll comes (2025-11-25 Tasks › Getting
	// Tasks; Behavior Requirements: pollInterval). A tasks/result or
	// tasks/cancel of the task ends the hold too: that client chose to
	// wait for the result, or to stop, rather than poll.
	Polls int
}

// holder applies a Hold to one scripted server: it wraps the server's
// tools, and the truth endpoint tells it what the client asked and what
// the server answered.
type holder struct {
	hold Hold
	ctx  context.Context // the scenario's: no hold outlives it

	mu    sync.Mutex
	tasks map[string]*heldTask
}

// heldTask is what the holder knows of one task.
type heldTask struct {
	answered bool // the first answer to its tools/call was sent
	gets     int  // tasks/get of it
	asked    bool // tasks/result or tasks/cancel of it
	open     chan struct{}
	opened   bool
}

func newHolder(ctx context.Context, h Hold) *holder {
	return &holder{hold: h, ctx: ctx, tasks: map[string]*heldTask{}}
}

// tools returns ts, each tool's run followed by the hold of its task.
func (h *holder) tools(ts []*server.Tool) []*server.Tool {
	out := make([]*server.Tool, len(ts))
	for i, t := range ts {
		out[i] = t
		if t.Prepare == nil {
			continue
		}
		w := *t
		prepare := t.Prepare
		w.Prepare = func(args json.RawMessage) (server.RunFunc, error) {
			run, err := prepare(args)
			if err != nil {
				return nil, err
			}
			return func(ctx context.Context, c *server.Call) (*mcp.CallToolResult, error) {
				res, err := run(ctx, c)
				h.wait(ctx, c.TaskID())
				return res, err
			}, nil
		}
		out[i] = &w
	}
	return out
}

// wait returns once task taskID may end, its tool's run (ctx) stopped
// (the task was cancelled, the server closed) or the scenario ended. A
// call without a task is not held.
func (h *holder) wait(ctx context.Context, taskID string) {
	if h == nil || taskID == "" {
		return
	}
	h.mu.Lock()
	t := h.taskLocked(taskID)
	h.mu.Unlock()
	select {
	case <-t.open:
	case <-ctx.Done():
	case <-h.ctx.Done():
	}
}

// answered notes that the server hands the first answer to the
// tools/call of taskID to the transport; it is noted before, so that no
// request of the client naming the task can come first.
func (h *holder) answered(taskID string) {
	h.note(taskID, true, func(t *heldTask) { t.answered = true })
}

// request notes a tasks/* request of the client naming taskID. A task
// the server did not make is not held and not noted.
func (h *holder) request(method, taskID string) {
	switch method {
	case mcp.MethodTasksGet:
		h.note(taskID, false, func(t *heldTask) { t.gets++ })
	case mcp.MethodTasksResult, mcp.MethodTasksCancel:
		h.note(taskID, false, func(t *heldTask) { t.asked = true })
	}
}

func (h *holder) note(taskID string, create bool, f func(*heldTask)) {
	if h == nil || taskID == "" {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	t := h.tasks[taskID]
	if t == nil && !create {
		return
	}
	if t == nil {
		t = h.taskLocked(taskID)
	}
	f(t)
	if !t.opened && t.answered && (t.gets >= h.hold.Polls || t.asked) {
		t.opened = true
		close(t.open)
	}
}

func (h *holder) taskLocked(taskID string) *heldTask {
	t := h.tasks[taskID]
	if t == nil {
		t = &heldTask{open: make(chan struct{})}
		h.tasks[taskID] = t
	}
	return t
}
