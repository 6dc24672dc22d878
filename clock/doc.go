// Package clock is tasksim's one source of time. The reference server, the
// reference client, both sides of Streamable HTTP and stdio take a [Clock]:
// the wall clock ([System]) by default, or a simulated one ([Sim]) whose
// time moves only when the simulation says so.
//
// A Sim fires the timers it passes in a defined order (deadline first, then
// the order they were made), each in the goroutine that advanced the clock,
// never on a goroutine of its own. So between two steps the simulation
// knows every timer there is, and [Sim.RunUntil] can move time to the next
// deadline once every goroutine of the run waits: a 60 s task TTL passes
// in milliseconds of wall time.
//
// A run's goroutines are those its driver starts after [Confine], which
// labels them (a pprof label each goroutine inherits from the one that
// starts it). [Idle] waits for those alone: what the process's other
// goroutines do, how many Ps it has and the race detector change when it
// returns, never what it returns. It decides on one consistent snapshot of
// the goroutines (runtime.Stack, which stops the world), and uses the
// scheduler's counts only to choose when to take it. Nothing here changes
// a process-wide setting but GODEBUG's tracebacklabels, which makes
// tracebacks show labels.
//
//	driver ──RunUntil──▶ Idle(scope)? ──yes──▶ Step: now = next deadline ──▶ f() … (same goroutine)
//	                          └──no───▶ yield, look again
//
// Example: an hour of simulated sleep, over in microseconds.
//
//	ctx, release := clock.Confine(ctx) // this goroutine and those it starts
//	defer release()
//	c := clock.NewSim(time.Unix(0, 0))
//	done := make(chan struct{})
//	go func() { clock.Sleep(ctx, c, time.Hour); close(done) }()
//	err := c.RunUntil(ctx, func() bool {
//		select {
//		case <-done:
//			return true
//		default:
//			return false
//		}
//	})
package clock
