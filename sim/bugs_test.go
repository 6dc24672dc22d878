package sim

import (
	"context"
	"slices"
	"testing"
)

// findBug runs seeds 1..maxSeed with the bug planted and returns the
// first schedule whose run fails exactly the bug's rule, nothing else,
// and passes without the bug: the bug, not the reference implementation,
// fails it.
func findBug(t *testing.T, b PlantedBug, maxSeed uint64) (Schedule, bool) {
	t.Helper()
	// Strict: a planted bug breaking a SHOULD is caught as a failure.
	ro := &RunOptions{Bugs: &b.Bugs, Strict: true}
	for seed := uint64(1); seed <= maxSeed; seed++ {
		s := Draw(seed, nil, nil)
		res, err := Run(context.Background(), s, ro)
		if err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		if !slices.Equal(res.FailedRules(), []string{b.SimRule()}) {
			continue
		}
		ref, err := Run(context.Background(), s, nil)
		if err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		if !ref.Failed() {
			return s, true
		}
	}
	return Schedule{}, false
}

// checkFindsBug: some seed of 1..1000 fails exactly the bug's rule; it
// shrinks to at most 3 faults; the shrunk schedule, written as a file and
// read back as tasksim sim --seed S --schedule FILE --bug NAME reads it,
// fails the same rule again.
func checkFindsBug(t *testing.T, b PlantedBug) {
	ctx := context.Background()
	s, ok := findBug(t, b, 1000)
	if !ok {
		t.Fatalf("no seed of 1..1000 fails exactly %s with %s planted", b.SimRule(), b.Name)
	}
	// Strict: a planted bug breaking a SHOULD is caught as a failure.
	ro := &RunOptions{Bugs: &b.Bugs, Strict: true}
	sh, err := Shrink(ctx, s, b.SimRule(), &ShrinkOptions{Run: ro})
	if err != nil {
		t.Fatalf("seed %d: shrink: %v", s.Seed, err)
	}
	if n := len(sh.Schedule.Faults); n > 3 {
		t.Errorf("seed %d shrank to %d faults, want at most 3: %v", s.Seed, n, sh.Schedule.Faults)
	}
	data, err := MarshalSchedule(sh.Schedule)
	if err != nil {
		t.Fatal(err)
	}
	kept, err := ParseSchedule("kept.json", data)
	if err != nil {
		t.Fatal(err)
	}
	again, err := Run(ctx, kept, ro)
	if err != nil {
		t.Fatal(err)
	}
	if !again.Fails(b.SimRule()) {
		t.Errorf("seed %d: the shrunk schedule fails %v, not %s", s.Seed, again.FailedRules(), b.SimRule())
	}
	t.Logf("%s: seed %d fails %s; shrunk in %d runs to %d calls, faults %v", b.Name, s.Seed, b.SimRule(), sh.Runs, len(sh.Schedule.Workload.Calls), sh.Schedule.Faults)
}

// TestSimFindsPlantedBugsRace is the race detector's share of
// TestSimFindsPlantedBugs: two bugs the first seeds show.
func TestSimFindsPlantedBugsRace(t *testing.T) {
	for _, name := range []string{"no-created-at", "empty-partial"} {
		t.Run(name, func(t *testing.T) {
			b, err := BugNamed(name)
			if err != nil {
				t.Fatal(err)
			}
			checkFindsBug(t, b)
		})
	}
}
