package sim

import (
	"context"
	"testing"

	"go.uber.org/goleak"
)

// TestRunLeavesNoGoroutines: a run ends every goroutine it started, faults
// (stalls, cuts, restarts) or not; a thousand runs in one process must not
// pile up.
func TestRunLeavesNoGoroutines(t *testing.T) {
	// Only this test's goroutines: with -count above 1 it runs after the
	// package's other tests, whose own goroutines are theirs to answer for.
	ignore := goleak.IgnoreCurrent()
	for seed := uint64(1); seed <= 60; seed++ {
		if _, err := Run(context.Background(), Draw(seed, nil, nil), nil); err != nil {
			t.Fatal(err)
		}
	}
	goleak.VerifyNone(t, ignore)
}
