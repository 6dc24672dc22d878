package sim

import (
	"context"
	"errors"
	"testing"

	"github.com/tasksim/tasksim/internal/leaktest"
)

// TestRunLeavesNoGoroutines: a run ends every goroutine it started, faults
// (stalls, cuts, restarts) or not; a thousand runs in one process must not
// pile up.
func TestRunLeavesNoGoroutines(t *testing.T) {
	leaktest.Check(t) // with -count above 1, other tests' goroutines are theirs
	for seed := uint64(1); seed <= 60; seed++ {
		if _, err := Run(context.Background(), Draw(seed, nil, nil), nil); err != nil {
			t.Fatal(err)
		}
	}
}

// TestRunInterrupted: a run whose context ends (SIGINT in tasksim sim)
// returns the context's error, touches no session its goroutines are
// still connecting (the race detector watches), and leaves no goroutine.
func TestRunInterrupted(t *testing.T) {
	leaktest.Check(t)
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	for seed := uint64(1); seed <= 20; seed++ {
		res, err := Run(ctx, Draw(seed, nil, nil), nil)
		if !errors.Is(err, context.Canceled) || res != nil {
			t.Fatalf("seed %d: result %v, error %v; want none and context.Canceled", seed, res != nil, err)
		}
	}
}
