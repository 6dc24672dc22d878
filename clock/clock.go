package clock

import (
	"context"
	"time"
)

// Clock is a source of time: the current instant and timers.
type Clock interface {
	// Now returns the current time.
	Now() time.Time
	// AfterFunc calls f once d has elapsed, unless the timer is stopped
	// first. f must not block: on a [Sim] it runs in the goroutine that
	// advances the clock.
	AfterFunc(d time.Duration, f func()) Timer
}

// Timer is a pending AfterFunc call.
type Timer interface {
	// Stop prevents the call; it reports whether it did.
	Stop() bool
}

// System is the wall clock.
type System struct{}

// Now returns time.Now().
func (System) Now() time.Time { return time.Now() }

// AfterFunc wraps time.AfterFunc.
func (System) AfterFunc(d time.Duration, f func()) Timer { return time.AfterFunc(d, f) }

// Or returns c, or the wall clock when c is nil.
func Or(c Clock) Clock {
	if c == nil {
		return System{}
	}
	return c
}

// Since returns the time elapsed on c since t.
func Since(c Clock, t time.Time) time.Duration { return c.Now().Sub(t) }

// Sleep waits for d on c, or until ctx is done.
func Sleep(ctx context.Context, c Clock, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := NewTimer(c, d)
	defer t.Stop()
	select {
	case <-t.C():
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// ChanTimer is a timer that delivers on a channel, like time.Timer, on any
// Clock.
type ChanTimer struct {
	c  Clock
	ch chan time.Time
	t  Timer
	sy *time.Timer // the wall clock's own timer, when c is System
}

// NewTimer returns a timer on c that sends the time on C after d.
func NewTimer(c Clock, d time.Duration) *ChanTimer {
	c = Or(c)
	if _, ok := c.(System); ok {
		st := time.NewTimer(d)
		return &ChanTimer{c: c, sy: st}
	}
	t := &ChanTimer{c: c, ch: make(chan time.Time, 1)}
	t.start(d)
	return t
}

func (t *ChanTimer) start(d time.Duration) {
	ch := t.ch
	t.t = t.c.AfterFunc(d, func() {
		select {
		case ch <- t.c.Now():
		default:
		}
	})
}

// C is the channel the time is sent on.
func (t *ChanTimer) C() <-chan time.Time {
	if t.sy != nil {
		return t.sy.C
	}
	return t.ch
}

// Stop prevents the timer from firing; it reports whether it did.
func (t *ChanTimer) Stop() bool {
	if t.sy != nil {
		return t.sy.Stop()
	}
	return t.t.Stop()
}

// Reset makes the timer fire after d from now, draining a value not yet
// received, as time.Timer.Reset does since Go 1.23.
func (t *ChanTimer) Reset(d time.Duration) bool {
	if t.sy != nil {
		return t.sy.Reset(d)
	}
	active := t.t.Stop()
	select {
	case <-t.ch:
	default:
	}
	t.start(d)
	return active
}
