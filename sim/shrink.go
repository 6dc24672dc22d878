package sim

import (
	"context"
	"errors"
	"slices"
)

// DefaultShrinkRuns bounds the runs of one Shrink when ShrinkOptions.MaxRuns
// is 0.
const DefaultShrinkRuns = 300

// ShrinkOptions configure Shrink. Zero values are defaults.
type ShrinkOptions struct {
	// MaxRuns bounds how many runs shrinking may make; 0 means
	// DefaultShrinkRuns.
	MaxRuns int
	// Run configures each run.
	Run *RunOptions
}

// Shrunk is the outcome of Shrink.
type Shrunk struct {
	// Schedule is the smallest schedule found that still fails Rule; its
	// Fails names the rule.
	Schedule Schedule
	// Result is its run.
	Result *Result
	Rule   string
	// Runs counts the runs shrinking made.
	Runs int
}

// ErrNotFailing is returned by Shrink when the schedule does not fail the
// rule to begin with.
var ErrNotFailing = errors.New("the schedule does not fail that rule")

// Shrink reduces a schedule that fails rule to a smaller one that still
// fails it, by delta debugging (Zeller's ddmin): first the fault
// decisions, pinned one spec each to the message it acted on (so that a
// probability or a count no longer decides), then the calls of the
// workload, then each call's chunks. Every candidate is a full run; the
// seed stays, so ids stay where the workload before them stays.
func Shrink(ctx context.Context, s Schedule, rule string, o *ShrinkOptions) (*Shrunk, error) {
	var opts ShrinkOptions
	if o != nil {
		opts = *o
	}
	if opts.MaxRuns <= 0 {
		opts.MaxRuns = DefaultShrinkRuns
	}
	sh := &Shrunk{Rule: rule}
	var runErr error
	fails := func(c Schedule) bool {
		if sh.Runs >= opts.MaxRuns || runErr != nil {
			return false
		}
		sh.Runs++
		res, err := Run(ctx, c, opts.Run)
		if err != nil {
			if ctx.Err() != nil {
				runErr = ctx.Err()
			}
			return false
		}
		if res.Fails(rule) {
			sh.Schedule, sh.Result = c, res
			return true
		}
		return false
	}
	if !fails(s) {
		if runErr != nil {
			return nil, runErr
		}
		return nil, ErrNotFailing
	}
	cur := s
	// The decisions, pinned: if pinning changes the run (a decision drawn
	// for a message that no longer comes), keep the specs as given.
	pinned := cur
	pinned.Faults = nil
	for _, a := range sh.Result.Applied {
		pinned.Faults = append(pinned.Faults, pin(a))
	}
	if len(cur.Faults) > 0 && fails(pinned) {
		cur = pinned
	}
	cur.Faults = ddmin(cur.Faults, func(f []string) bool {
		c := cur
		c.Faults = f
		return fails(c)
	})
	if cur.Faults == nil {
		cur.Faults = []string{}
	}
	cur.Workload.Calls = ddmin(cur.Workload.Calls, func(calls []Call) bool {
		c := cur
		c.Workload.Calls = calls
		return fails(c)
	})
	// Fewer chunks per call, one call at a time.
	for i := range cur.Workload.Calls {
		for cur.Workload.Calls[i].Chunks > 0 {
			c := cur
			c.Workload.Calls = slices.Clone(cur.Workload.Calls)
			c.Workload.Calls[i].Chunks--
			if c.Workload.Calls[i].FailAfter > c.Workload.Calls[i].Chunks {
				c.Workload.Calls[i].FailAfter = c.Workload.Calls[i].Chunks
			}
			if !fails(c) {
				break
			}
			cur = c
		}
	}
	if runErr != nil {
		return nil, runErr
	}
	// Every candidate that failed became the current schedule, so the
	// last failing run is the smallest.
	sh.Schedule.Fails = rule
	return sh, nil
}

// ddmin returns a subset of items for which test holds, 1-minimal as far
// as test is deterministic: removing any one more item makes it fail.
// test(items) is assumed to hold.
func ddmin[T any](items []T, test func([]T) bool) []T {
	if len(items) == 0 {
		return items
	}
	if test(items[:0:0]) {
		return items[:0:0]
	}
	n := 2
	for len(items) >= 2 {
		size := (len(items) + n - 1) / n
		reduced := false
		for start := 0; start < len(items); start += size {
			end := min(start+size, len(items))
			comp := append(slices.Clone(items[:start]), items[end:]...)
			if test(comp) {
				items, n, reduced = comp, max(n-1, 2), true
				break
			}
		}
		if !reduced {
			if n >= len(items) {
				break
			}
			n = min(2*n, len(items))
		}
	}
	return items
}
