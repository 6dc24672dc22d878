package server

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/tasksim/tasksim/mcp"
)

// discard is an Outbox that drops what it is given.
type discard struct{}

func (discard) Send(context.Context, *mcp.Message) error { return nil }

// lockProbe is a Replier that reports whether its task's lock is held
// while the answer is handed to the transport.
type lockProbe struct {
	t    *task
	held chan bool
}

func (p lockProbe) Reply(_ context.Context, msg *mcp.Message, _ bool) error {
	free := p.t.mu.TryLock()
	if free {
		p.t.mu.Unlock()
	}
	p.held <- !free
	return nil
}

type replyTo chan *mcp.Message

func (r replyTo) Reply(_ context.Context, msg *mcp.Message, _ bool) error {
	if msg != nil {
		r <- msg
	}
	return nil
}

// TestTasksGetRepliesUnderTaskLock: tasks/get hands its answer to the
// transport while it holds the task's lock, as the status changes and
// their notifications are ordered by it. Before, it took the snapshot,
// let go of the lock and then replied: a task that ended in between sent
// notifications/tasks/status "completed" first and the stale "working"
// answer after it, on the same stdio stream (TASK-STATUS-TRANSITION: a
// completed task seen working again; 2025-11-25 Tasks, "Task Status
// Lifecycle": a terminal status never changes).
func TestTasksGetRepliesUnderTaskLock(t *testing.T) {
	srv := New(nil)
	defer srv.Close()
	ss := srv.NewSession(discard{}).(*session)
	defer ss.Close()
	call := func(id int64, method string, params any, r mcp.Replier) {
		msg, err := mcp.NewRequest(mcp.IntID(id), method, params)
		if err != nil {
			t.Fatal(err)
		}
		ss.Handle(context.Background(), msg, r)
	}
	created := make(replyTo, 4)
	call(1, mcp.MethodToolsCall, map[string]any{"name": ToolSleep, "arguments": map[string]any{"durationMs": 60000}, "task": map[string]any{}}, created)
	var m *mcp.Message
	select {
	case m = <-created:
	case <-time.After(10 * time.Second): // only turns a hang into a failure
		t.Fatal("no answer to tools/call")
	}
	var res mcp.CreateTaskResult
	if m.Error != nil || json.Unmarshal(m.Result, &res) != nil || res.Task.TaskID == "" {
		t.Fatalf("tools/call answer %s %v", m.Result, m.Error)
	}
	task, rpcErr := srv.store.lookup(ss, res.Task.TaskID)
	if rpcErr != nil {
		t.Fatal(rpcErr)
	}
	probe := lockProbe{t: task, held: make(chan bool, 1)}
	call(2, mcp.MethodTasksGet, map[string]any{"taskId": res.Task.TaskID}, probe)
	if !<-probe.held {
		t.Error("tasks/get answered without the task's lock: a status change can be sent between its snapshot and its answer")
	}
}
