package server

import (
	"errors"
	"sync"

	"github.com/tasksim/tasksim/mcp"
)

// ErrBudget is returned by Call.Emit when the task's result would outgrow
// what the task, its session or the server may hold (Options.MaxTaskBytes,
// MaxSessionBytes, MaxServerBytes): the tool should stop, and the task
// fails with that message.
var ErrBudget = errors.New("memory budget exceeded")

// blockOverhead is what a stored content block costs besides its strings:
// the struct and the segment around it, rounded up.
const blockOverhead = 160

// blockBytes estimates what a content block holds in memory.
func blockBytes(b mcp.ContentBlock) int64 {
	n := blockOverhead + len(b.Type) + len(b.Text) + len(b.Data) + len(b.MimeType) + len(b.URI) +
		len(b.Name) + len(b.Title) + len(b.Description) + len(b.Resource) + len(b.Annotations) + len(b.Meta)
	for k, v := range b.Extra {
		n += len(k) + len(v)
	}
	return int64(n)
}

func blocksBytes(bs []mcp.ContentBlock) int64 {
	var n int64
	for _, b := range bs {
		n += blockBytes(b)
	}
	return n
}

// budget counts the bytes of results the server holds, per session and in
// all: what the tasks' stored segments and content take (2025-11-25 Tasks,
// "Security Considerations": receivers SHOULD bound the resources a
// requestor may consume). A task is charged when it is created for the
// bytes its arguments ask for (Tool.Size), and as it emits beyond that;
// everything it holds is released when the task is deleted.
type budget struct {
	maxSession, maxServer int64

	mu      sync.Mutex
	held    int64
	session map[*session]int64
}

func newBudget(maxSession, maxServer int64) *budget {
	return &budget{maxSession: maxSession, maxServer: maxServer, session: map[*session]int64{}}
}

// reserve charges n bytes to ss, unless that takes the session or the
// server over its budget.
func (b *budget) reserve(ss *session, n int64) bool {
	if n <= 0 {
		return true
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.session[ss]+n > b.maxSession || b.held+n > b.maxServer {
		return false
	}
	b.session[ss] += n
	b.held += n
	return true
}

// force charges n bytes whatever the budgets say: content a finished tool
// returned, which is already in memory.
func (b *budget) force(ss *session, n int64) {
	if n <= 0 {
		return
	}
	b.mu.Lock()
	b.session[ss] += n
	b.held += n
	b.mu.Unlock()
}

// release gives n bytes of ss back.
func (b *budget) release(ss *session, n int64) {
	if n <= 0 {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.held -= n
	if left := b.session[ss] - n; left > 0 {
		b.session[ss] = left
	} else {
		delete(b.session, ss)
	}
}

// Held returns the bytes charged to ss (nil: all sessions).
func (b *budget) Held(ss *session) int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	if ss == nil {
		return b.held
	}
	return b.session[ss]
}

// chargeLocked makes room for n more bytes of t's result: within the
// task's budget, then from its reservation, then from its session's and
// the server's budgets. t.mu must be held.
func (t *task) chargeLocked(n int64) error {
	srv := t.owner.srv
	if t.used+n > srv.opts.MaxTaskBytes {
		return ErrBudget
	}
	if extra := t.used + n - t.charged; extra > 0 {
		if !srv.budget.reserve(t.owner, extra) {
			return ErrBudget
		}
		t.charged += extra
	}
	t.used += n
	return nil
}

// forceChargeLocked accounts for n bytes already held. t.mu must be held.
func (t *task) forceChargeLocked(n int64) {
	if extra := t.used + n - t.charged; extra > 0 {
		t.owner.srv.budget.force(t.owner, extra)
		t.charged += extra
	}
	t.used += n
}

// trimChargeLocked gives back a terminal task's reservation beyond what it
// holds. t.mu must be held.
func (t *task) trimChargeLocked() {
	if spare := t.charged - t.used; spare > 0 {
		t.owner.srv.budget.release(t.owner, spare)
		t.charged = t.used
	}
}

// releaseCharge gives back everything t holds: it is deleted, and its
// memory goes with the last reference (a tasks/result still answering).
func (t *task) releaseCharge() {
	t.mu.Lock()
	n := t.charged
	t.charged, t.used = 0, 0
	t.mu.Unlock()
	t.owner.srv.budget.release(t.owner, n)
}
