package server

import (
	"encoding/base64"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/tasksim/tasksim/clock"
	"github.com/tasksim/tasksim/mcp"
)

// store holds every task of the server in memory, indexed by id, with each
// task bound to the session that created it.
type store struct {
	clock  clock.Clock
	stored *storedCount // shared with the stateless board

	mu      sync.Mutex
	tasks   map[string]*task
	expired expiredIDs
	live    map[*session]int // non-terminal tasks per session
}

func newStore(c clock.Clock, stored *storedCount) *store {
	return &store{clock: c, stored: stored, tasks: map[string]*task{}, expired: newExpiredIDs(), live: map[*session]int{}}
}

// add registers t, unless its session already has max live tasks or the
// server stores maxAll tasks, of either era.
func (s *store) add(t *task, max, maxAll int) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.live[t.owner] >= max {
		return mcp.Errorf(mcp.CodeInternalError, "too many live tasks in this session (the limit is %d)", max)
	}
	if !s.stored.take(maxAll) {
		// 2025-11-25 Tasks, "Security Considerations": receivers SHOULD
		// limit concurrent tasks; past it the caller is refused, not queued.
		return mcp.Errorf(mcp.CodeInternalError, "server busy: it holds %d tasks, its limit; retry after some expire", maxAll)
	}
	s.tasks[t.id] = t
	s.live[t.owner]++
	return nil
}

// counts returns the tasks stored and the live ones.
func (s *store) counts() (tasks, live int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, n := range s.live {
		live += n
	}
	return len(s.tasks), live
}

// ended records that t reached a terminal status.
func (s *store) ended(t *task) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if n := s.live[t.owner]; n > 1 {
		s.live[t.owner] = n - 1
	} else {
		delete(s.live, t.owner)
	}
}

// lookup finds a task of session owner. Another session's task, an unknown
// id and an expired one are all "not found" to the caller (2025-11-25 Tasks,
// "Protocol Errors" and "Task Isolation and Access Control"); the message
// says which, without revealing another session's tasks.
func (s *store) lookup(owner *session, id string) (*task, *mcp.Error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if t, ok := s.tasks[id]; ok && (t.owner == owner || owner.srv.opts.TaskScope == ScopeServer) {
		return t, nil
	}
	if s.expired.has(id) {
		return nil, mcp.Errorf(mcp.CodeInvalidParams, "Failed to retrieve task: Task has expired")
	}
	return nil, mcp.Errorf(mcp.CodeInvalidParams, "Failed to retrieve task: Task not found")
}

// remove deletes t; expired marks it as expired for later lookups.
func (s *store) remove(t *task, expired bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.tasks[t.id] != t {
		return
	}
	delete(s.tasks, t.id)
	s.stored.give(1)
	now := s.clock.Now()
	if expired {
		s.expired.add(t.id, now)
	}
	s.expired.forget(now)
}

// removeSession deletes every task of owner and returns them.
func (s *store) removeSession(owner *session) []*task {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []*task
	for id, t := range s.tasks {
		if t.owner == owner {
			out = append(out, t)
			delete(s.tasks, id)
		}
	}
	delete(s.live, owner)
	s.stored.give(len(out))
	return out
}

// list returns one page of owner's tasks in creation order, after cursor.
func (s *store) list(owner *session, cursor string, pageSize int) ([]*task, string, *mcp.Error) {
	after, afterID, err := parseCursor(cursor)
	if err != nil {
		return nil, "", mcp.Errorf(mcp.CodeInvalidParams, "invalid cursor: %v", err)
	}
	s.mu.Lock()
	var mine []*task
	for _, t := range s.tasks {
		if t.owner == owner {
			mine = append(mine, t)
		}
	}
	s.mu.Unlock()
	slices.SortFunc(mine, func(a, b *task) int {
		if c := a.createdAt.Compare(b.createdAt); c != 0 {
			return c
		}
		return strings.Compare(a.id, b.id)
	})
	start := 0
	if cursor != "" {
		start = len(mine)
		for i, t := range mine {
			if c := t.createdAt.Compare(after); c > 0 || (c == 0 && t.id > afterID) {
				start = i
				break
			}
		}
	}
	end := min(start+pageSize, len(mine))
	page := mine[start:end]
	next := ""
	if end < len(mine) {
		last := page[len(page)-1]
		next = makeCursor(last.createdAt, last.id)
	}
	return page, next, nil
}

// Cursors are opaque to clients (2025-11-25 Tasks, "Task Listing"); inside
// they name the last task of the page by creation time and id.
func makeCursor(at time.Time, id string) string {
	return base64.RawURLEncoding.EncodeToString([]byte(strconv.FormatInt(at.UnixNano(), 10) + "/" + id))
}

func parseCursor(c string) (time.Time, string, error) {
	if c == "" {
		return time.Time{}, "", nil
	}
	b, err := base64.RawURLEncoding.DecodeString(c)
	if err != nil {
		return time.Time{}, "", fmt.Errorf("not a cursor this server issued")
	}
	ns, id, ok := strings.Cut(string(b), "/")
	n, err := strconv.ParseInt(ns, 10, 64)
	if !ok || err != nil || id == "" {
		return time.Time{}, "", fmt.Errorf("not a cursor this server issued")
	}
	return time.Unix(0, n), id, nil
}
