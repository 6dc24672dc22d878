package load

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"time"

	"github.com/tasksim/tasksim/mcp"
	"github.com/tasksim/tasksim/mcp/client"
)

// setOverload records the first broken lag bound and ends the schedule.
func (r *runner) setOverload(lag time.Duration, reason string) {
	o := &Overload{LagMs: ms(lag), MaxLagMs: ms(time.Duration(r.cfg.MaxLag)), AtMs: ms(time.Since(r.start)), Reason: reason}
	if r.overload.CompareAndSwap(nil, o) {
		r.stop()
	}
}

// cannotDrive explains a schedule the generator fell behind.
func (r *runner) cannotDrive() string {
	return fmt.Sprintf("this machine cannot drive %g tasks/s (%g per mode × %d) against this server; lower the rate, or run the generator on another machine",
		r.cfg.Rate*float64(len(r.modes)), r.cfg.Rate, len(r.modes))
}

// openSchedule starts tasks on the pacer's schedule until it ends, the
// lag bound breaks or ctx ends. Each wake-up starts every task due, so
// timer resolution delays tasks by at most a millisecond or so and never
// drops one. Arrival n goes to mode n mod modes.
func (r *runner) openSchedule(ctx, taskCtx context.Context, tasks *sync.WaitGroup) {
	p := r.cfg.pacer()
	maxLag := time.Duration(r.cfg.MaxLag)
	nModes := int64(len(r.modes))
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	defer timer.Stop()
	for sent := int64(0); ; sent++ {
		for {
			wait, stop := p.Pace(time.Since(r.start), sent)
			if stop {
				return
			}
			if wait <= 0 {
				break
			}
			timer.Reset(wait)
			select {
			case <-ctx.Done():
				return
			case <-timer.C:
			}
		}
		intended := r.start.Add(p.At(sent))
		select {
		case r.sem <- struct{}{}:
		default:
			// Every slot is taken: wait for one while the lag stays in
			// bounds.
			timer.Reset(time.Until(intended.Add(maxLag)))
			select {
			case r.sem <- struct{}{}:
				timer.Stop()
			case <-timer.C:
				r.setOverload(time.Since(intended), fmt.Sprintf("all %d in-flight slots were taken (the server is slower than the rate asks, or the in-flight limit is too low)", r.cfg.MaxInFlight))
				return
			case <-ctx.Done():
				timer.Stop()
				return
			}
		}
		if lag := time.Since(intended); lag > maxLag {
			<-r.sem
			r.setOverload(lag, r.cannotDrive())
			return
		}
		m := r.modes[sent%nModes]
		k := sent / nModes
		m.claimed.Add(1)
		tasks.Go(func() {
			defer func() { <-r.sem }()
			r.runTask(taskCtx, m, k, intended, true)
		})
	}
}

// closedSchedule runs Concurrency clients per mode, each starting its next
// task when the last ended, ramped up over RampUp, until the duration or
// the task count is reached or ctx ends.
func (r *runner) closedSchedule(ctx, taskCtx context.Context, tasks *sync.WaitGroup) {
	var workers sync.WaitGroup
	n := r.cfg.Concurrency * len(r.modes)
	for w := range n {
		m := r.modes[w%len(r.modes)]
		delay := time.Duration(int64(r.cfg.RampUp) * int64(w) / int64(n))
		workers.Go(func() {
			t := time.NewTimer(delay)
			defer t.Stop()
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
			for ctx.Err() == nil {
				if r.cfg.Duration > 0 && time.Since(r.start) >= time.Duration(r.cfg.Duration) {
					return
				}
				k := m.claimed.Add(1) - 1
				if r.cfg.Tasks > 0 && k >= r.cfg.Tasks {
					return
				}
				tasks.Add(1)
				r.runTask(taskCtx, m, k, time.Now(), false)
				tasks.Done()
			}
		})
	}
	workers.Wait()
}

// quietPoll is how long an sse task's stream may be silent before the
// generator asks tasks/get (client.CallOptions.QuietPoll). The reference
// client asks after the server's poll interval (500 ms), which is about the
// gap between segments in the usual shapes: when a loaded server's
// segments came late, every late segment cost a poll, and a connection for
// it, since each pooled connection carries a stream; at 9,000 streams
// those polls took a fifth of the generator's CPU and fed the overload
// they came from. A stream silent for 5 s is still polled, so a task that
// expired without a word is still found.
const quietPoll = 5 * time.Second

// runTask runs task k of mode m, intended to start at intended, and
// records what it measured.
func (r *runner) runTask(ctx context.Context, m *modeRun, k int64, intended time.Time, open bool) {
	lag := time.Since(intended)
	if open && (lag > time.Duration(r.cfg.MaxLag) || r.overload.Load() != nil) {
		// A task dispatched before the bound broke that gets to run only
		// after it does not start either: the stop message's lag and
		// moment then agree with the table (no task started later, none
		// later than the bound).
		if lag > time.Duration(r.cfg.MaxLag) {
			r.setOverload(lag, r.cannotDrive())
		}
		return
	}
	sh := r.shards[(k*int64(len(r.modes))+int64(m.index))%int64(len(r.shards))]
	sh.recordStart(m.index, lag)
	m.started.Add(1)
	if o := r.opts.Observer; o != nil {
		o.Started(m.spec.Name, lag)
	}
	for n, p := m.inFlight.Add(1), m.peak.Load(); n > p && !m.peak.CompareAndSwap(p, n); p = m.peak.Load() {
	}
	shape := r.cfg.Shape.draw(r.cfg.Seed, k)
	ttl := shape.duration + 2*m.spec.PollInterval + time.Duration(r.cfg.TTLMargin)
	tool, args := r.cfg.toolCall(k, shape)
	var s sample
	if m.stateless {
		s = r.callStateless(ctx, m, k, intended, tool, args)
	} else {
		s = r.callSession(ctx, m, k, intended, tool, args, ttl)
	}
	sh.record(m.index, &s)
	m.inFlight.Add(-1)
	if o := r.opts.Observer; o != nil {
		o.Ended(m.spec.Name, s.ended())
	}
}

// callSession runs task k of mode m in 2025-11-25 and measures it.
func (r *runner) callSession(ctx context.Context, m *modeRun, k int64, intended time.Time, tool string, args []byte, ttl time.Duration) sample {
	tctx, cancel := context.WithTimeout(ctx, time.Duration(r.cfg.Timeout))
	res, err := m.sessions[k%int64(len(m.sessions))].CallTool(tctx, client.CallOptions{
		Name:         tool,
		Args:         json.RawMessage(args),
		Mode:         m.spec.callMode(),
		PollInterval: m.spec.PollInterval,
		QuietPoll:    quietPoll,
		TTL:          ttl,
		OnSegment:    func(mcp.Segment) { m.segments.Add(1) },
		OnPartial:    func(mcp.TaskPartialParams) { m.partials.Add(1) },
		NoTimeline:   true,
		NoContent:    true,
	})
	timedOut := tctx.Err() == context.DeadlineExceeded && ctx.Err() == nil
	cancel()
	return measure(res, err, intended, timedOut, ctx.Err() != nil)
}
