package clock

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
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
		ctx, release := Confine(context.Background())
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
		if err := c.RunUntil(ctx, done); err != nil {
			t.Fatal(err)
		}
		release()
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
	ctx, release := Confine(context.Background())
	defer release()
	c := NewSim(epoch)
	if err := c.RunUntil(ctx, func() bool { return false }); !errors.Is(err, ErrDeadlock) {
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

// TestIdleWaitsForItsScopeOnly: Idle returns while a goroutine outside
// its scope is busy, and only once a busy goroutine inside has parked.
func TestIdleWaitsForItsScopeOnly(t *testing.T) {
	stop := make(chan struct{})
	outside := make(chan struct{})
	go func() { // started before the scope: not in it
		defer close(outside)
		for i := 0; i < 1e9; i++ {
			select {
			case <-stop:
				return
			default:
			}
		}
	}()
	ctx, release := Confine(context.Background())
	defer release()
	var worked atomic.Bool
	park := make(chan struct{})
	go func() { // in the scope: Idle waits until it parks
		n := 0
		for i := range 1_000_000 {
			n += i
		}
		worked.Store(n > 0)
		<-park
	}()
	if err := Idle(ctx); err != nil {
		t.Fatal(err)
	}
	if !worked.Load() {
		t.Fatal("Idle returned while a goroutine of its scope was running")
	}
	select {
	case <-outside:
		t.Fatal("the goroutine outside the scope ended before Idle returned")
	default:
	}
	close(park)
	close(stop)
	<-outside
}

func TestIdleNeedsAScope(t *testing.T) {
	if err := Idle(context.Background()); !errors.Is(err, ErrNoScope) {
		t.Fatalf("Idle without a scope = %v, want ErrNoScope", err)
	}
}

// TestScopeIdleReadsStatuses: a look is idle when every goroutine of the
// scope but the caller (the first) is parked on a channel, a select, a
// lock, a wall-clock sleep or the network, and busy when one runs, is
// ready to run, is in a system call or waits for the runtime; goroutines
// of other scopes and unlabelled ones do not count.
func TestScopeIdleReadsStatuses(t *testing.T) {
	mark := []byte(`"tasksim.clock.scope": "7"`)
	header := func(id int, status string, scope string) string {
		labels := ""
		if scope != "" {
			labels = ` labels:{"other": "x", "tasksim.clock.scope": "` + scope + `"}`
		}
		return fmt.Sprintf("goroutine %d [%s%s]:\nmain.f()\n\t/x.go:1 +0x1\n\n", id, status, labels)
	}
	caller := header(1, "running", "7")
	for _, c := range []struct {
		status string
		scope  string
		idle   bool
	}{
		{"chan receive", "7", true},
		{"chan receive, 2 minutes", "7", true},
		{"chan send (nil chan)", "7", true},
		{"select", "7", true},
		{"select (no cases)", "7", true},
		{"sync.Mutex.Lock", "7", true},
		{"sync.Cond.Wait", "7", true},
		{"sync.WaitGroup.Wait", "7", true},
		{"sleep", "7", true},
		{"IO wait", "7", true},
		{"running", "7", false},
		{"runnable", "7", false},
		{"syscall", "7", false},
		{"preempted", "7", false},
		{"semacquire", "7", false},
		{"GC assist wait", "7", false},
		{"runnable", "71", true}, // another scope
		{"runnable", "", true},   // no scope
	} {
		dump := caller + header(2, "chan receive", "7") + header(3, c.status, c.scope)
		idle, err := scopeIdle([]byte(dump), mark)
		if err != nil || idle != c.idle {
			t.Errorf("a goroutine of scope %q [%s]: idle %v, %v; want %v", c.scope, c.status, idle, err, c.idle)
		}
	}
	if _, err := scopeIdle([]byte(header(1, "running", "")+header(2, "runnable", "7")), mark); !errors.Is(err, ErrNoLabels) {
		t.Errorf("a caller without the scope's label: %v, want ErrNoLabels", err)
	}
}

// A verifying scope (VerifyEnv) finds a goroutine of the scope woken
// between Idle's look and its second look, by something outside the
// scope: here the test's hook, in place of a wall-clock timer's goroutine.
func TestVerifyFindsAWakeFromOutside(t *testing.T) {
	t.Setenv(VerifyEnv, "1")
	ctx, release := Confine(context.Background())
	defer release()
	ch, done := make(chan struct{}), make(chan struct{})
	go func() {
		<-ch
		<-done
	}()
	defer close(done)
	var once sync.Once
	afterLook = func() { once.Do(func() { close(ch) }) }
	defer func() { afterLook = nil }()
	err := Idle(ctx)
	if !errors.Is(err, ErrWokenOutside) {
		t.Fatalf("Idle: %v, want ErrWokenOutside", err)
	}
	if !errors.Is(Verified(ctx), ErrWokenOutside) {
		t.Errorf("Verified: %v", Verified(ctx))
	}
	t.Log(err)
}

// A verifying scope whose goroutines only wake one another finds every
// verdict right, and one that does not verify reports none.
func TestVerifyRightVerdicts(t *testing.T) {
	t.Setenv(VerifyEnv, "1")
	ctx, release := Confine(context.Background())
	defer release()
	c := NewSim(epoch)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for range 5 {
			_ = Sleep(ctx, c, time.Second)
		}
	}()
	err := c.RunUntil(ctx, func() bool {
		select {
		case <-done:
			return true
		default:
			return false
		}
	})
	if err != nil || Verified(ctx) != nil {
		t.Fatalf("RunUntil: %v, Verified: %v", err, Verified(ctx))
	}
	if got := c.Now().Sub(epoch); got != 5*time.Second {
		t.Errorf("clock at %v", got)
	}
	t.Setenv(VerifyEnv, "")
	plain, release2 := Confine(context.Background())
	defer release2()
	if err := Idle(plain); err != nil || Verified(plain) != nil {
		t.Errorf("Idle: %v, Verified: %v", err, Verified(plain))
	}
}

// A wrong verdict names where the goroutine was and went: the first
// frame, or the first that differs when the first is the same.
func TestFrameOf(t *testing.T) {
	const (
		head = `goroutine 7 [select, 3 minutes labels:{"tasksim.clock.scope": "1"}]:`
		read = "io.(*pipe).read(_, {_, _, _})\n\t/go/src/io/pipe.go:57 +_"
		a    = head + "\n" + read + "\nmain.a()\n\t/src/a.go:10 +_"
		b    = head + "\n" + read + "\nmain.b()\n\t/src/b.go:20 +_"
	)
	for _, c := range []struct{ g, other, want string }{
		{a, b, "[select, 3 minutes] in main.a (a.go:10)"},
		{b, a, "[select, 3 minutes] in main.b (b.go:20)"},
		{a, head + "\nmain.c()\n\t/src/c.go:1 +_", "[select, 3 minutes] in io.(*pipe).read (pipe.go:57)"},
		{head, a, "[select, 3 minutes]"},
	} {
		if got := frameOf(c.g, c.other); got != c.want {
			t.Errorf("frameOf(%q, %q) = %q, want %q", c.g, c.other, got, c.want)
		}
	}
}

// A goroutine reads the same in two dumps wherever it is in them (the
// last one ends with a newline), whatever its argument values and however
// long it has waited; where it waits is what counts.
func TestScopeStacksComparesWhereGoroutinesWait(t *testing.T) {
	const (
		caller = "goroutine 1 [running labels:{\"tasksim.clock.scope\": \"9\"}]:\nmain.driver()\n\t/src/d.go:1 +0x10"
		g7     = "goroutine 7 [select labels:{\"tasksim.clock.scope\": \"9\"}]:\nmain.wait(0xc000010000)\n\t/src/w.go:5 +0x20"
		g7late = "goroutine 7 [select, 2 minutes labels:{\"tasksim.clock.scope\": \"9\"}]:\nmain.wait(0xc000099000)\n\t/src/w.go:5 +0x20"
		g7next = "goroutine 7 [select labels:{\"tasksim.clock.scope\": \"9\"}]:\nmain.wait(0xc000010000)\n\t/src/w.go:6 +0x20"
		other  = "goroutine 8 [running]:\nmain.other()\n\t/src/o.go:1 +0x1"
	)
	mark := []byte(`"tasksim.clock.scope": "9"`)
	stacks := func(gs ...string) map[string]string {
		return scopeStacks([]byte(strings.Join(gs, "\n\n")+"\n"), mark)
	}
	if err := compareStacks(stacks(caller, g7), stacks(caller, g7late, other)); err != nil {
		t.Errorf("the same wait read as a wake: %v", err)
	}
	if err := compareStacks(stacks(caller, g7), stacks(caller, g7next)); !errors.Is(err, ErrWokenOutside) {
		t.Errorf("a goroutine that moved: %v, want ErrWokenOutside", err)
	}
	if err := compareStacks(stacks(caller, g7), stacks(caller)); !errors.Is(err, ErrWokenOutside) {
		t.Errorf("a goroutine that ended: %v, want ErrWokenOutside", err)
	}
}
