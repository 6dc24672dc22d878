package server_test

import (
	"sync"
	"testing"
	"time"

	"github.com/tasksim/tasksim/clock"
)

// simClock is a clock.Sim that knows the deadlines of the timers the server
// has pending and wakes the test whenever they change. Over real HTTP the
// test cannot tell when the server is idle (clock.Sim.RunUntil), but it can
// wait for the server to make the timer it expects (the next chunk of a
// tool, the immediate window) and only then move time past it: what the
// server does no longer depends on how fast it runs.
type simClock struct {
	sim   *clock.Sim
	start time.Time
	// moving is held while the clock moves and while a timer is made, so
	// that the deadline noted for a timer is the one the Sim gave it.
	// Timers fired by a move do not take it.
	moving sync.Mutex

	mu      sync.Mutex
	due     map[*simTimer]time.Time // pending timers and their deadlines
	changed chan struct{}           // signalled when due changes
}

type simTimer struct {
	c *simClock
	t clock.Timer
}

func newSimClock() *simClock {
	start := time.Unix(1_700_000_000, 0)
	return &simClock{sim: clock.NewSim(start), start: start, due: map[*simTimer]time.Time{}, changed: make(chan struct{}, 1)}
}

func (c *simClock) Now() time.Time { return c.sim.Now() }

func (c *simClock) AfterFunc(d time.Duration, f func()) clock.Timer {
	st := &simTimer{c: c}
	c.moving.Lock()
	at := c.sim.Now().Add(max(d, 0))
	c.mu.Lock()
	c.due[st] = at
	c.mu.Unlock()
	st.t = c.sim.AfterFunc(d, func() {
		c.forget(st)
		f()
	})
	c.moving.Unlock()
	c.poke()
	return st
}

func (t *simTimer) Stop() bool {
	ok := t.t.Stop()
	t.c.forget(t)
	return ok
}

func (c *simClock) forget(st *simTimer) {
	c.mu.Lock()
	delete(c.due, st)
	c.mu.Unlock()
	c.poke()
}

func (c *simClock) poke() {
	select {
	case c.changed <- struct{}{}:
	default:
	}
}

// has reports whether a timer due at at is pending.
func (c *simClock) has(at time.Time) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, d := range c.due {
		if d.Equal(at) {
			return true
		}
	}
	return false
}

// wait waits until the server has a timer due at start+d. The wall-clock
// limit only turns a hang into a failure.
func (c *simClock) wait(d time.Duration) bool {
	at := c.start.Add(d)
	limit := time.After(10 * time.Second)
	for !c.has(at) {
		select {
		case <-c.changed:
		case <-limit:
			return false
		}
	}
	return true
}

// waitTimer fails the test unless the server makes a timer due at start+d.
func (c *simClock) waitTimer(t testing.TB, d time.Duration) {
	t.Helper()
	if !c.wait(d) {
		t.Fatalf("the server made no timer due at +%v", d)
	}
}

// fire waits for a timer due at start+d and moves the clock there, firing
// every timer due by then.
func (c *simClock) fire(t testing.TB, d time.Duration) {
	t.Helper()
	c.waitTimer(t, d)
	c.advanceTo(c.start.Add(d))
}

// fireLater waits until the server has a timer due at start+ready (the
// tool has started and waits for its first step: its deadlines are fixed),
// then fires the timers due at start+ds in order, from another goroutine:
// the test is blocked meanwhile (a POST waits for its first reply, which
// comes after the immediate window). The channel closes when it is done.
// A step waits for its own timer only, not for what the step before it
// woke: where that order matters, fire one step and wait for its effect (a
// message) before the next.
func (c *simClock) fireLater(t testing.TB, ready time.Duration, ds ...time.Duration) <-chan struct{} {
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i, d := range append([]time.Duration{ready}, ds...) {
			if !c.wait(d) {
				t.Errorf("the server made no timer due at +%v", d)
				return
			}
			if i > 0 {
				c.advanceTo(c.start.Add(d))
			}
		}
	}()
	return done
}

// advance moves the clock by d, firing what is due.
func (c *simClock) advance(d time.Duration) { c.advanceTo(c.sim.Now().Add(d)) }

func (c *simClock) advanceTo(at time.Time) {
	c.moving.Lock()
	defer c.moving.Unlock()
	c.sim.AdvanceTo(at)
}
