package clock

import (
	"context"
	"runtime"
	"runtime/metrics"
	"sync"
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

// oneP counts the holders of [OneP].
var oneP struct {
	sync.Mutex
	holders int
	prev    int
}

// OneP runs the process on one P (runtime.GOMAXPROCS(1)) until every
// caller has called the release it returned; the last release restores the
// previous setting. A simulation whose goroutines all wait on a [Sim] clock
// or on in-memory pipes gains nothing from a second P, and [Idle] is both
// exact and cheap on one: with one P, "no other goroutine running" holds by
// construction, and only the run queue is left to read. With two Ps on a
// machine whose CPUs other processes share, a goroutine whose thread the
// kernel has descheduled still counts as running, and Idle spins until the
// kernel runs it again: a simulated run measured 30 times slower so.
func OneP() (release func()) {
	oneP.Lock()
	if oneP.holders == 0 {
		oneP.prev = runtime.GOMAXPROCS(1)
	}
	oneP.holders++
	oneP.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			oneP.Lock()
			defer oneP.Unlock()
			oneP.holders--
			if oneP.holders == 0 {
				runtime.GOMAXPROCS(oneP.prev)
			}
		})
	}
}
