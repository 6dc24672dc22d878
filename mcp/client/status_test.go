package client_test

import (
	"context"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tasksim/tasksim/clock"
	"github.com/tasksim/tasksim/mcp"
	"github.com/tasksim/tasksim/mcp/client"
)

// simStart is when the simulated clocks of these tests start.
var simStart = time.Date(2025, 11, 25, 10, 30, 0, 0, time.UTC)

// watchedClock is a simulated clock that tells the test every timer made
// on it, by its duration, so that the test moves time only once the timer
// it means exists.
type watchedClock struct {
	*clock.Sim
	made chan time.Duration
}

func newWatchedClock() *watchedClock {
	return &watchedClock{Sim: clock.NewSim(simStart), made: make(chan time.Duration, 256)}
}

func (c *watchedClock) AfterFunc(d time.Duration, f func()) clock.Timer {
	t := c.Sim.AfterFunc(d, f)
	select {
	case c.made <- d:
	default:
	}
	return t
}

// await waits until a timer of d was made, skipping others.
func (c *watchedClock) await(ctx context.Context, t *testing.T, d time.Duration) {
	t.Helper()
	for {
		select {
		case got := <-c.made:
			if got == d {
				return
			}
		case <-ctx.Done():
			t.Fatalf("no timer of %v was made", d)
		}
	}
}

// wait receives from ch, or fails the test when ctx ends first.
func wait(ctx context.Context, t *testing.T, ch <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-ctx.Done():
		t.Fatalf("waiting for %s: %v", what, ctx.Err())
	}
}

// A tasks/get sent before tasks/cancel and answered working after the
// cancel's cancelled does not bring the task back to life: a terminal
// status is final (2025-11-25 Tasks, "Task Status Lifecycle" and "Task
// Cancellation"). The order is fixed by channels: the script holds the
// tasks/get answer until the client has taken the cancel's answer, and
// the tasks/result answer until the client has seen the late working.
// The client's timers are on a simulated clock, so the poll and the
// cancel go out when the test says.
func TestLateWorkingDoesNotUndoCancelled(t *testing.T) {
	ctx := testContext(t)
	clk := newWatchedClock()
	var (
		stop                                    = make(chan struct{})
		getArrived, cancelApplied, getProcessed = make(chan struct{}), make(chan struct{}), make(chan struct{})
		gets                                    atomic.Int32
		onceCancel, onceGet                     sync.Once
	)
	s := newScript(t)
	s.call = func(w *sseWriter, id mcp.ID, _ mcp.CallToolParams) {
		w.send("", result(id, mcp.CreateTaskResult{Task: *task(mcp.StatusWorking)})) // pollInterval 10 ms
	}
	s.get = func(w http.ResponseWriter, id mcp.ID, _ string) {
		if gets.Add(1) == 1 {
			close(getArrived)
		}
		select {
		case <-cancelApplied:
		case <-stop:
			return
		}
		writeJSON(w, result(id, task(mcp.StatusWorking)))
	}
	// s.cancel is nil: the task, cancelled, at once.
	s.result = func(w http.ResponseWriter, id mcp.ID, _ string, _ int64) {
		select {
		case <-getProcessed:
		case <-stop:
			return
		}
		writeJSON(w, result(id, mcp.CallToolResult{Content: []mcp.ContentBlock{mcp.TextBlock("cancelled")}, IsError: true}))
	}
	sess := s.start(&client.Options{Clock: clk})
	t.Cleanup(func() { close(stop) }) // before the session and server close

	onEvent := func(e client.Event) {
		switch {
		case e.Source == client.SourceCancel && e.Kind == client.EventStatus && e.Status == mcp.StatusCancelled:
			onceCancel.Do(func() { close(cancelApplied) })
		case e.Source == client.SourceTasksGet && (e.Kind == client.EventStatus || e.Kind == client.EventDiscarded):
			onceGet.Do(func() { close(getProcessed) })
		}
	}
	type outcome struct {
		res *client.CallResult
		err error
	}
	done := make(chan outcome, 1)
	go func() {
		res, err := sess.CallTool(ctx, client.CallOptions{Name: "sleep", Mode: client.ModeTask, CancelAfter: time.Second, OnEvent: onEvent})
		done <- outcome{res, err}
	}()
	clk.await(ctx, t, time.Second)         // the cancel timer, made first
	clk.await(ctx, t, 10*time.Millisecond) // the poll timer, at the task's pollInterval
	clk.Advance(10 * time.Millisecond)     // tasks/get goes out; the script holds it
	wait(ctx, t, getArrived, "tasks/get")
	clk.Advance(time.Second - 10*time.Millisecond) // tasks/cancel goes out
	var out outcome
	select {
	case out = <-done:
	case <-ctx.Done():
		t.Fatal("the call did not end")
	}
	res, err := out.res, out.err
	if err != nil {
		t.Fatal(err)
	}
	if res.Task == nil || res.Task.Status != mcp.StatusCancelled || !res.Complete || !res.IsError {
		t.Fatalf("task %+v complete %v isError %v: want cancelled, complete, isError", res.Task, res.Complete, res.IsError)
	}
	// The timeline shows the race: cancelled from tasks/cancel, then the
	// late working from tasks/get, discarded.
	var seen []string
	for _, e := range res.Timeline {
		if e.Kind == client.EventStatus || e.Kind == client.EventDiscarded {
			seen = append(seen, string(e.Kind)+" "+string(e.Status)+" from "+e.Source)
		}
	}
	want := []string{"status working from response", "status cancelled from tasks/cancel", "discarded working from tasks/get"}
	if len(seen) != len(want) {
		t.Fatalf("status events %q, want %q", seen, want)
	}
	for i := range want {
		if seen[i] != want[i] {
			t.Fatalf("status events %q, want %q", seen, want)
		}
	}
	if gets.Load() != 1 {
		t.Errorf("%d tasks/get, want 1", gets.Load())
	}
	// The call ran on the simulated clock: CancelAfter to the instant.
	if d := res.End.Sub(res.Start); d != time.Second {
		t.Errorf("the call took %v on its clock, want 1s", d)
	}
}
