package clock

import (
	"container/heap"
	"context"
	"errors"
	"sync"
	"time"
)

// Sim is a simulated clock: time moves only through Advance, AdvanceTo,
// Step and RunUntil. Timers whose deadline is passed fire in deadline
// order, and timers due at the same instant in the order they were made;
// each runs in the goroutine that moved the clock, with the clock's time
// set to its deadline. A timer made by a firing timer's f that is due
// within the same advance fires in that advance too.
//
// All methods are safe for concurrent use.
type Sim struct {
	mu     sync.Mutex
	now    time.Time
	seq    uint64
	timers timerHeap
	fired  uint64
}

// NewSim returns a simulated clock standing at start.
func NewSim(start time.Time) *Sim { return &Sim{now: start} }

type simTimer struct {
	s        *Sim
	deadline time.Time
	seq      uint64
	f        func()
	index    int // in the heap; -1 once fired or stopped
}

// Now returns the clock's time.
func (s *Sim) Now() time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.now
}

// AfterFunc schedules f at Now()+d. A d of zero or less is due at once: it
// fires at the next Advance, Step or RunUntil, not inside this call.
func (s *Sim) AfterFunc(d time.Duration, f func()) Timer {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.seq++
	t := &simTimer{s: s, deadline: s.now.Add(max(d, 0)), seq: s.seq, f: f}
	heap.Push(&s.timers, t)
	return t
}

// Stop implements Timer.
func (t *simTimer) Stop() bool {
	t.s.mu.Lock()
	defer t.s.mu.Unlock()
	if t.index < 0 {
		return false
	}
	heap.Remove(&t.s.timers, t.index)
	return true
}

// Pending returns how many timers wait to fire.
func (s *Sim) Pending() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.timers)
}

// Fired returns how many timers have fired since the clock was made.
func (s *Sim) Fired() uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.fired
}

// Next returns the earliest pending deadline, and false when no timer is
// pending.
func (s *Sim) Next() (time.Time, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.timers) == 0 {
		return time.Time{}, false
	}
	return s.timers[0].deadline, true
}

// Advance moves the clock forward by d, firing every timer due on the way.
// It returns how many fired.
func (s *Sim) Advance(d time.Duration) int {
	return s.AdvanceTo(s.Now().Add(d))
}

// AdvanceTo moves the clock to t (never backwards), firing every timer due
// at or before t in order. It returns how many fired.
func (s *Sim) AdvanceTo(t time.Time) int {
	n := 0
	for s.fireNext(t) {
		n++
	}
	s.mu.Lock()
	if t.After(s.now) {
		s.now = t
	}
	s.mu.Unlock()
	return n
}

// Step moves the clock to the earliest pending deadline and fires every
// timer due then. It reports false, moving nothing, when none is pending.
func (s *Sim) Step() bool {
	next, ok := s.Next()
	if !ok {
		return false
	}
	s.AdvanceTo(next)
	return true
}

// fireNext fires the earliest timer if it is due at or before limit.
func (s *Sim) fireNext(limit time.Time) bool {
	s.mu.Lock()
	if len(s.timers) == 0 || s.timers[0].deadline.After(limit) {
		s.mu.Unlock()
		return false
	}
	t := heap.Pop(&s.timers).(*simTimer)
	if t.deadline.After(s.now) {
		s.now = t.deadline
	}
	s.fired++
	s.mu.Unlock()
	t.f()
	return true
}

// ErrDeadlock is returned by RunUntil when every goroutine of its scope
// waits, no timer is pending, and the condition still does not hold:
// nothing can ever happen again.
var ErrDeadlock = errors.New("clock: everything waits and no timer is pending")

// RunUntil drives the simulation until done reports true: whenever the
// goroutines of ctx's scope are idle (see [Confine] and [Idle]) and done is
// false, it fires the next timer (StepOne), moving the clock to its
// deadline. Timers due at the same instant fire one at a time, each once
// the effects of the one before have settled, in the order they were made.
// done is called only while the scope is idle, so it sees a settled state.
// RunUntil returns ctx's error if ctx ends first, Idle's error if ctx has
// no scope, and ErrDeadlock if nothing is pending while done is still
// false.
func (s *Sim) RunUntil(ctx context.Context, done func() bool) error {
	for {
		if err := Idle(ctx); err != nil {
			return err
		}
		if done() {
			return nil
		}
		if !s.StepOne() {
			return ErrDeadlock
		}
	}
}

type timerHeap []*simTimer

func (h timerHeap) Len() int { return len(h) }
func (h timerHeap) Less(i, j int) bool {
	if !h[i].deadline.Equal(h[j].deadline) {
		return h[i].deadline.Before(h[j].deadline)
	}
	return h[i].seq < h[j].seq
}
func (h timerHeap) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].index = i
	h[j].index = j
}
func (h *timerHeap) Push(x any) {
	t := x.(*simTimer)
	t.index = len(*h)
	*h = append(*h, t)
}
func (h *timerHeap) Pop() any {
	old := *h
	t := old[len(old)-1]
	old[len(old)-1] = nil
	t.index = -1
	*h = old[:len(old)-1]
	return t
}
