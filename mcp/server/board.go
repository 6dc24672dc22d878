package server

import (
	"context"
	"sync"

	"github.com/tasksim/tasksim/clock"
	"github.com/tasksim/tasksim/mcp"
)

// board holds the server's stateless tasks by id: one per server, bounded
// as the session store is (Options.MaxTasks stored, counted with the
// store's tasks; MaxTasksPerSession live: the stateless requests count as
// one requestor, as they share one byte budget) and swept by each task's
// ttl on the server's clock.
type board struct {
	clock  clock.Clock
	budget *budget
	stored *storedCount // shared with the session store
	// ctx is the parent of every task's run; Close ends it.
	ctx    context.Context
	cancel context.CancelFunc

	mu      sync.Mutex
	tasks   map[string]*statelessTask
	expired expiredIDs
	live    int // tasks not yet terminal
	closed  bool
}

func newBoard(c clock.Clock, b *budget, stored *storedCount) *board {
	ctx, cancel := context.WithCancel(context.Background())
	return &board{clock: c, budget: b, stored: stored, ctx: ctx, cancel: cancel,
		tasks: map[string]*statelessTask{}, expired: newExpiredIDs()}
}

// add stores t, unless maxLive tasks are running or maxAll are stored,
// of either era (2025-11-25 Tasks, "Security Considerations", which the extension keeps:
// receivers SHOULD limit concurrent tasks; past the limit the caller is
// refused, not queued).
func (b *board) add(t *statelessTask, maxLive, maxAll int) *mcp.Error {
	b.mu.Lock()
	defer b.mu.Unlock()
	switch {
	case b.closed:
		return mcp.Errorf(mcp.CodeInternalError, "server shutting down")
	case b.live >= maxLive:
		return mcp.Errorf(mcp.CodeInternalError, "server busy: %d stateless tasks are running, its limit; retry after some end", maxLive)
	case !b.stored.take(maxAll):
		return mcp.Errorf(mcp.CodeInternalError, "server busy: it holds %d tasks, its limit; retry after some expire", maxAll)
	}
	b.tasks[t.id] = t
	b.live++
	return nil
}

// ended records that a task reached a terminal status.
func (b *board) ended() {
	b.mu.Lock()
	b.live--
	b.mu.Unlock()
}

// lookup finds a task by id: an unknown id and an expired one are -32602,
// never a status (Tasks, "Task Polling"; a task the server does not know
// is not working).
func (b *board) lookup(id string) (*statelessTask, *mcp.Error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if t, ok := b.tasks[id]; ok {
		return t, nil
	}
	if b.expired.has(id) {
		return nil, mcp.Errorf(mcp.CodeInvalidParams, "Failed to retrieve task: Task has expired")
	}
	return nil, mcp.Errorf(mcp.CodeInvalidParams, "Failed to retrieve task: Task not found")
}

// remove deletes an expired task and remembers its id for a while, so
// that a lookup says "expired" rather than "not found".
func (b *board) remove(t *statelessTask) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.tasks[t.id] != t {
		return
	}
	delete(b.tasks, t.id)
	b.stored.give(1)
	now := b.clock.Now()
	b.expired.add(t.id, now)
	b.expired.forget(now)
}

// counts returns the tasks stored and the live ones.
func (b *board) counts() (tasks, live int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.tasks), b.live
}

// close stops every task and deletes it.
func (b *board) close() {
	b.mu.Lock()
	b.closed = true
	all := make([]*statelessTask, 0, len(b.tasks))
	for id, t := range b.tasks {
		all = append(all, t)
		delete(b.tasks, id)
	}
	b.stored.give(len(all))
	b.mu.Unlock()
	b.cancel()
	for _, t := range all {
		t.drop()
	}
}
