// Package clock is tasksim's one source of time. The reference server, the
// reference client, both sides of Streamable HTTP and stdio take a [Clock]:
// the wall clock ([System]) by default, or a simulated one ([Sim]) whose
// time moves only when the simulation says so.
//
// A Sim fires the timers it passes in a defined order (deadline first, then
// the order they were made), each in the goroutine that advanced the clock,
// never on a goroutine of its own. So between two steps the simulation
// knows every timer there is, and [Sim.RunUntil] can move time to the next
// deadline only once every goroutine of the process is waiting ([Idle]):
// a 60 s task TTL passes in microseconds of wall time.
//
//	driver ──RunUntil──▶ Idle? ──yes──▶ Step: now = next deadline ──▶ f() … (same goroutine)
//	                       └──no───▶ yield, look again
//
// Example:
//
//	c := clock.NewSim(time.Unix(0, 0))
//	t := clock.NewTimer(c, time.Minute)
//	c.Advance(time.Minute) // t.C() is ready now
//	<-t.C()
package clock
