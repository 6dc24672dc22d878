package sim

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tasksim/tasksim/clock"
	"github.com/tasksim/tasksim/internal/plant"
	"github.com/tasksim/tasksim/mcp"
	"github.com/tasksim/tasksim/mcp/client"
	"github.com/tasksim/tasksim/recorder"
	"github.com/tasksim/tasksim/traces"
)

// run drives the goroutines of one simulation.
type run struct {
	ctx     context.Context
	sim     *clock.Sim
	bugs    plant.ClientFlaws
	pending atomic.Int64
	// http records the HTTP exchanges of a run over Streamable HTTP;
	// nil over stdio.
	http *httpRecord

	mu    sync.Mutex
	jumps []*jump // clock jumps asked for by the fault layer
}

// jump is a ttl-expiry:advance the driver carries out.
type jump struct {
	to   time.Time
	done chan struct{}
}

type simSession struct {
	s *client.Session
	// sl is the connection of a run of 2026-07-28, which has no session.
	sl    *client.Stateless
	err   error
	ready chan struct{}
	// noPartial leaves tasks.streaming.partial undeclared.
	noPartial bool
}

// spawn runs f in a goroutine that wait waits for.
func (r *run) spawn(f func()) {
	r.pending.Add(1)
	go func() {
		defer r.pending.Add(-1)
		f()
	}()
}

// wait drives the simulated clock until every spawned goroutine returned.
// The clock moves only while every goroutine of the run waits (r.ctx is
// the run's clock.Confine scope), and a spawned goroutine that is
// returning is not waiting: once the run is idle, pending is exact.
func (r *run) wait() error {
	return r.sim.RunUntil(r.ctx, func() bool {
		if r.jumped() {
			return false
		}
		return r.pending.Load() == 0
	})
}

// jump moves the clock forward by d (ttl-expiry:advance), from the fault
// layer's goroutine: it asks the driver and waits. The driver fires the
// timers on the way one at a time, each once the run is idle again,
// as RunUntil does; sim.Advance would fire them all at once, from this
// goroutine, and let the goroutines they wake race.
func (r *run) jump(d time.Duration) {
	j := &jump{to: r.sim.Now().Add(d), done: make(chan struct{})}
	r.mu.Lock()
	r.jumps = append(r.jumps, j)
	r.mu.Unlock()
	select {
	case <-j.done:
	case <-r.ctx.Done():
	}
}

// jumped carries out the jumps asked for, from the driver while the
// run is idle; it reports whether there was one.
func (r *run) jumped() bool {
	r.mu.Lock()
	js := r.jumps
	r.jumps = nil
	r.mu.Unlock()
	for _, j := range js {
		for clock.Idle(r.ctx) == nil {
			next, ok := r.sim.Next()
			if !ok || next.After(j.to) {
				break
			}
			r.sim.StepOne()
		}
		r.sim.AdvanceTo(j.to)
		close(j.done)
		// The message goes on: let it settle before RunUntil fires the
		// next timer.
		_ = clock.Idle(r.ctx)
	}
	return len(js) > 0
}

// connect opens a client session at the current simulated instant.
func (r *run) connect(t mcp.Transport) *simSession {
	ss := &simSession{ready: make(chan struct{})}
	r.spawn(func() { r.connectNow(ss, t) })
	return ss
}

// connectNow opens ss's client session and makes it ready.
func (r *run) connectNow(ss *simSession, t mcp.Transport) {
	defer close(ss.ready)
	cctx, cancel := r.within(callSlack)
	defer cancel()
	ss.s, ss.err = client.New(&client.Options{Clock: r.sim, PollPolicy: r.bugs.PollPolicy(), NoPartial: ss.noPartial}).Connect(cctx, r.bugs.Transport(t))
}

// within returns a context that ends when d of simulated time passed.
func (r *run) within(d time.Duration) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(r.ctx)
	t := r.sim.AfterFunc(d, cancel)
	return ctx, func() {
		t.Stop()
		cancel()
	}
}

// sleepUntil waits until simulated time t; false if the run ended first.
func (r *run) sleepUntil(t time.Time) bool {
	return clock.Sleep(r.ctx, r.sim, t.Sub(r.sim.Now())) == nil
}

// close ends the sessions one at a time, each once the run is idle,
// so that what their ends record comes in the same order every run, then
// the server. A session still connecting (a run that failed or was
// interrupted) belongs to its goroutine, which the run's context ends.
func (r *run) close(nd *node, sessions []*simSession) {
	for _, ss := range sessions {
		select {
		case <-ss.ready:
		default:
			continue
		}
		if ss.s != nil {
			ss.s.Close()
			_ = clock.Idle(r.ctx)
		}
		if ss.sl != nil {
			ss.sl.Close()
			_ = clock.Idle(r.ctx)
		}
	}
	nd.close()
	_ = clock.Idle(r.ctx)
}

// fail ends a run that could not finish and says why.
func (r *run) fail(err error, nd *node, sessions []*simSession, pipe *recorder.Pipeline, w *traces.Writer) error {
	r.close(nd, sessions)
	pipe.Close()
	w.Close()
	if r.http != nil {
		_, _ = r.http.close()
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("simulation: wall time limit reached at simulated %v", r.sim.Now().Sub(simStart))
	}
	return fmt.Errorf("simulation at %v: %w", r.sim.Now().Sub(simStart), err)
}
