package sim

import (
	"runtime"
	"sync"
	"testing"
)

// TestBusyProcessSameVerdicts runs seeds in a quiet process, then again
// while other goroutines of the process spin, allocate and start
// goroutines of their own (they yield, as a dashboard or a parallel test
// does, but never all wait): every seed gives the same verdict, and the same
// history outside the cases where docs/sim.md says the scheduler chooses.
// The clock moves when the run's own goroutines all wait, whatever the
// rest of the process does (clock.Confine, clock.Idle).
func TestBusyProcessSameVerdicts(t *testing.T) {
	const seeds = 20
	type print struct{ verdict, history string }
	quiet := make([]print, seeds+1)
	for seed := uint64(1); seed <= seeds; seed++ {
		v, _, h, _, _ := fingerprint(t, seed)
		quiet[seed] = print{v, h}
	}

	stop := make(chan struct{})
	var wg sync.WaitGroup
	defer func() {
		close(stop)
		wg.Wait()
	}()
	stopped := func() bool {
		select {
		case <-stop:
			return true
		default:
			return false
		}
	}
	for range 2 { // spin, always ready to run
		wg.Go(func() {
			for i := range 1 << 40 {
				if i%64 == 0 {
					if stopped() {
						return
					}
					runtime.Gosched()
				}
			}
		})
	}
	wg.Go(func() { // allocate and start short goroutines
		var keep [][]byte
		for i := range 1 << 30 {
			if stopped() {
				return
			}
			keep = append(keep, make([]byte, 512))
			if len(keep) > 4096 {
				keep = keep[:0]
			}
			if i%64 == 0 {
				done := make(chan struct{})
				go func() { close(done) }()
				<-done
			}
		}
	})

	for seed := uint64(1); seed <= seeds; seed++ {
		v, _, h, _, s := fingerprint(t, seed)
		if v != quiet[seed].verdict {
			t.Errorf("seed %d (%s, %v): a busy process gave another verdict: %s", seed, s.Workload.Transport, s.Faults, firstDiff(quiet[seed].verdict, v))
		}
		if h != quiet[seed].history && !racy(s) {
			t.Errorf("seed %d (%s, %v): a busy process gave another history: %s", seed, s.Workload.Transport, s.Faults, firstDiff(quiet[seed].history, h))
		}
	}
}
