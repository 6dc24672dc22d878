package clock

import (
	"context"
	"runtime"
	"runtime/metrics"
)

// idleReadings is how many readings in a row must find the process idle.
// The scheduler's counts are approximate (a goroutine changing state while
// they are read can be missed), so one reading is not enough.
const idleReadings = 4

// Idle returns once no goroutine of the process but the caller is running
// or ready to run, and none was started since the previous reading: every
// other goroutine waits on a channel, a lock, a timer of a [Sim] clock or
// the outside world. It yields to the scheduler between readings. It
// returns ctx's error if ctx ends first.
//
// A goroutine that waits on the wall clock or on a socket counts as
// waiting, so a simulation is only as deterministic as its parts are on
// the Sim clock and on in-memory transports.
func Idle(ctx context.Context) error {
	samples := []metrics.Sample{
		{Name: "/sched/goroutines/runnable:goroutines"},
		{Name: "/sched/goroutines/running:goroutines"},
		{Name: "/sched/goroutines-created:goroutines"},
	}
	var created uint64
	quiet := 0
	for spins := 0; ; spins++ {
		if err := ctx.Err(); err != nil {
			return err
		}
		metrics.Read(samples)
		runnable, running, made := samples[0].Value.Uint64(), samples[1].Value.Uint64(), samples[2].Value.Uint64()
		if runnable == 0 && running <= 1 && (spins == 0 || made == created) {
			quiet++
			if quiet >= idleReadings {
				return nil
			}
		} else {
			quiet = 0
		}
		created = made
		runtime.Gosched()
	}
}
