package clock

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"sync"
	"testing"
	"time"
)

var epoch = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func TestSimFiresInDeadlineThenCreationOrder(t *testing.T) {
	c := NewSim(epoch)
	var got []string
	add := func(name string, d time.Duration) {
		c.AfterFunc(d, func() { got = append(got, fmt.Sprintf("%s@%s", name, c.Now().Sub(epoch))) })
	}
	add("c", 3*time.Second)
	add("a1", time.Second)
	add("b", 2*time.Second)
	add("a2", time.Second)
	stopped := c.AfterFunc(time.Second, func() { got = append(got, "stopped") })
	if !stopped.Stop() {
		t.Fatal("Stop of a pending timer reported false")
	}
	if stopped.Stop() {
		t.Fatal("second Stop reported true")
	}
	if n := c.Advance(2 * time.Second); n != 3 {
		t.Fatalf("Advance(2s) fired %d timers, want 3", n)
	}
	want := []string{"a1@1s", "a2@1s", "b@2s"}
	if !slices.Equal(got, want) {
		t.Fatalf("fired %v, want %v", got, want)
	}
	if now := c.Now().Sub(epoch); now != 2*time.Second {
		t.Fatalf("Now after Advance(2s) = %v", now)
	}
	if c.Pending() != 1 {
		t.Fatalf("Pending = %d, want 1", c.Pending())
	}
}

func TestSimTimerMadeWhileFiringFiresInSameAdvance(t *testing.T) {
	c := NewSim(epoch)
	var at []time.Duration
	c.AfterFunc(time.Second, func() {
		at = append(at, c.Now().Sub(epoch))
		c.AfterFunc(time.Second, func() { at = append(at, c.Now().Sub(epoch)) })
		c.AfterFunc(time.Hour, func() { at = append(at, c.Now().Sub(epoch)) })
	})
	c.Advance(5 * time.Second)
	if !slices.Equal(at, []time.Duration{time.Second, 2 * time.Second}) {
		t.Fatalf("fired at %v", at)
	}
	if next, ok := c.Next(); !ok || next.Sub(epoch) != time.Hour+time.Second {
		t.Fatalf("Next = %v, %v", next.Sub(epoch), ok)
	}
	if !c.Step() || c.Now().Sub(epoch) != time.Hour+time.Second {
		t.Fatalf("Step moved to %v", c.Now().Sub(epoch))
	}
	if c.Step() {
		t.Fatal("Step with nothing pending reported true")
	}
}

func TestChanTimerOnSim(t *testing.T) {
	c := NewSim(epoch)
	tm := NewTimer(c, time.Minute)
	select {
	case <-tm.C():
		t.Fatal("timer fired before its time")
	default:
	}
	c.Advance(time.Minute)
	if v := <-tm.C(); !v.Equal(epoch.Add(time.Minute)) {
		t.Fatalf("timer sent %v", v)
	}
	tm.Reset(time.Second)
	if !tm.Stop() {
		t.Fatal("Stop after Reset reported false")
	}
	c.Advance(time.Hour)
	select {
	case <-tm.C():
		t.Fatal("stopped timer fired")
	default:
	}
}

func TestSleepOnSimEndsWithContext(t *testing.T) {
	c := NewSim(epoch)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := Sleep(ctx, c, time.Hour); !errors.Is(err, context.Canceled) {
		t.Fatalf("Sleep on a cancelled context = %v", err)
	}
	if c.Pending() != 0 {
		t.Fatalf("Sleep left %d timers", c.Pending())
	}
}

// TestRunUntilMovesTimeOnlyWhenIdle runs goroutines that do work between
// sleeps on the Sim clock: however the scheduler interleaves them, each
// sleep ends at its simulated deadline and the log is the same.
func TestRunUntilMovesTimeOnlyWhenIdle(t *testing.T) {
	for range 20 {
		c := NewSim(epoch)
		var mu sync.Mutex
		var log []string
		var wg sync.WaitGroup
		for i, d := range []time.Duration{3 * time.Second, time.Second, 2 * time.Second} {
			wg.Go(func() {
				for step := range 3 {
					if err := Sleep(context.Background(), c, d); err != nil {
						t.Error(err)
						return
					}
					mu.Lock()
					log = append(log, fmt.Sprintf("g%d.%d@%s", i, step, c.Now().Sub(epoch)))
					mu.Unlock()
				}
			})
		}
		finished := make(chan struct{})
		go func() { wg.Wait(); close(finished) }()
		done := func() bool {
			select {
			case <-finished:
				return true
			default:
				return false
			}
		}
		if err := c.RunUntil(context.Background(), done); err != nil {
			t.Fatal(err)
		}
		slices.Sort(log)
		want := []string{"g0.0@3s", "g0.1@6s", "g0.2@9s", "g1.0@1s", "g1.1@2s", "g1.2@3s", "g2.0@2s", "g2.1@4s", "g2.2@6s"}
		if !slices.Equal(log, want) {
			t.Fatalf("log %v, want %v", log, want)
		}
		if now := c.Now().Sub(epoch); now != 9*time.Second {
			t.Fatalf("ended at %v, want 9s", now)
		}
	}
}

func TestRunUntilReportsDeadlock(t *testing.T) {
	c := NewSim(epoch)
	if err := c.RunUntil(context.Background(), func() bool { return false }); !errors.Is(err, ErrDeadlock) {
		t.Fatalf("RunUntil with nothing to do = %v, want ErrDeadlock", err)
	}
}

func TestSystemChanTimer(t *testing.T) {
	tm := NewTimer(nil, 0)
	<-tm.C()
	if tm.Stop() {
		t.Fatal("Stop after firing reported true")
	}
}

// TestOnePNests: OneP holds the process on one P until its last holder
// releases, then restores the setting it found; a release is idempotent.
func TestOnePNests(t *testing.T) {
	prev := runtime.GOMAXPROCS(0)
	r1 := OneP()
	r2 := OneP()
	if got := runtime.GOMAXPROCS(0); got != 1 {
		t.Fatalf("GOMAXPROCS %d under OneP, want 1", got)
	}
	r1()
	r1()
	if got := runtime.GOMAXPROCS(0); got != 1 {
		t.Fatalf("GOMAXPROCS %d with one holder left, want 1", got)
	}
	r2()
	if got := runtime.GOMAXPROCS(0); got != prev {
		t.Fatalf("GOMAXPROCS %d after the last release, want %d", got, prev)
	}
}
