package sim

import (
	"context"
	"slices"
	"testing"
)

func TestDdmin(t *testing.T) {
	items := []int{1, 2, 3, 4, 5, 6, 7, 8}
	calls := 0
	got := ddmin(items, func(s []int) bool {
		calls++
		return slices.Contains(s, 3) && slices.Contains(s, 7)
	})
	if !slices.Equal(got, []int{3, 7}) {
		t.Errorf("ddmin = %v, want [3 7]", got)
	}
	if calls > 40 {
		t.Errorf("%d tests for 8 items", calls)
	}
	if got := ddmin([]int{1, 2}, func([]int) bool { return true }); len(got) != 0 {
		t.Errorf("ddmin with an always-failing test = %v, want none", got)
	}
}

// TestShrinkKeepsTheRule: the first seed that fails with the client's
// planted no-dedup bug (a duplicated segment kept: SIM-RESULT) shrinks to
// no more calls and faults than it had, and the shrunk schedule fails the
// same rule again.
func TestShrinkKeepsTheRule(t *testing.T) {
	ctx := context.Background()
	s, rule, ro := firstPlantedFailure(t, "client-no-dedup", 1000)
	sh, err := Shrink(ctx, s, rule, &ShrinkOptions{Run: ro})
	if err != nil {
		t.Fatal(err)
	}
	if !sh.Result.Fails(rule) || sh.Schedule.Fails != rule {
		t.Fatalf("shrunk schedule does not fail %s", rule)
	}
	if len(sh.Schedule.Workload.Calls) > len(s.Workload.Calls) || len(sh.Schedule.Faults) > max(len(s.Faults), len(sh.Result.Applied)) {
		t.Errorf("shrinking grew the schedule: %+v", sh.Schedule)
	}
	again, err := Run(ctx, sh.Schedule, ro)
	if err != nil || !again.Fails(rule) {
		t.Errorf("the shrunk schedule does not fail %s again (%v)", rule, err)
	}
	t.Logf("seed %d %s: %d calls, %d faults -> %d calls, %v in %d runs", s.Seed, rule, len(s.Workload.Calls), len(s.Faults), len(sh.Schedule.Workload.Calls), sh.Schedule.Faults, sh.Runs)
}

// firstPlantedFailure returns the first schedule of seeds 1..maxSeed that
// fails a rule with the named bug planted, the rule, and the run options
// that plant it. The reference implementation passes every seed, so a
// failing schedule to shrink needs a planted bug.
func firstPlantedFailure(tb testing.TB, name string, maxSeed uint64) (Schedule, string, *RunOptions) {
	tb.Helper()
	b, err := BugNamed(name)
	if err != nil {
		tb.Fatal(err)
	}
	ro := &RunOptions{Bugs: &b.Bugs}
	for seed := uint64(1); seed <= maxSeed; seed++ {
		c := Draw(seed, nil, nil)
		res, err := Run(context.Background(), c, ro)
		if err != nil {
			tb.Fatal(err)
		}
		if rules := res.FailedRules(); len(rules) > 0 {
			return c, rules[0], ro
		}
	}
	tb.Fatalf("no seed of 1..%d fails with %s planted", maxSeed, name)
	return Schedule{}, "", nil
}
