package sim

import (
	"context"
	"testing"
	"time"

	"github.com/tasksim/tasksim/faults"
)

// TestHundredSeedsRace runs seeds 1..100 (TestThousandSeeds runs 1,000
// without the race detector): every run ends and passes; http-status acts
// at the HTTP place.
func TestHundredSeedsRace(t *testing.T) {
	if !raceDetector {
		t.Skip("TestThousandSeeds covers these seeds without the race detector")
	}
	sum := runSeeds(t, 100)
	if sum.Fired["http-status"] == 0 {
		t.Errorf("http-status never applied over seeds 1-100: %v", sum.Fired)
	}
}

// runSeeds runs seeds 1..n and fails the test for any rule failed.
func runSeeds(t *testing.T, n uint64) Summary {
	t.Helper()
	var sum Summary
	for seed := uint64(1); seed <= n; seed++ {
		res, err := Run(context.Background(), Draw(seed, nil, nil), nil)
		if err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		sum.Add(res)
		for _, rule := range res.FailedRules() {
			t.Errorf("seed %d fails %s: %s", seed, rule, res.Finding(rule))
		}
	}
	return sum
}

// TestTailLost: in these seeds a dropped response takes a streaming call's
// last segments, and the final isComplete response carries none, so the
// client cannot see the loss (SEP-1905 does not bound the seqNrs). The run
// passes, the call is marked TailLost, and tasks/result after the faults
// stopped, when it could be asked (no restart, the session alive),
// returned the whole result. Without the faults no call is marked.
func TestTailLost(t *testing.T) {
	for _, seed := range []uint64{160, 289, 403, 535, 601, 906} {
		s := Draw(seed, nil, nil)
		res, err := Run(context.Background(), s, nil)
		if err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		if res.Failed() {
			t.Errorf("seed %d fails %v", seed, res.FailedRules())
		}
		lost := 0
		for _, c := range res.Calls {
			if !c.TailLost {
				continue
			}
			lost++
			if c.Got != OutcomeWrong || c.Recovered != "" && c.Recovered != c.Expected {
				t.Errorf("seed %d call %d: got %s, recovered %q; want a short result recovered %s", seed, c.Call, c.Got, c.Recovered, c.Expected)
			}
		}
		if res.Restarts == 0 && lost > 0 {
			recovered := 0
			for _, c := range res.Calls {
				if c.TailLost && c.Recovered == c.Expected {
					recovered++
				}
			}
			if recovered != lost {
				t.Errorf("seed %d: %d calls lost their tail, %d recovered whole; no restart, so want all", seed, lost, recovered)
			}
		}
		if lost == 0 {
			t.Errorf("seed %d: no call lost its tail", seed)
		}
		s.Faults = nil
		clean, err := Run(context.Background(), s, nil)
		if err != nil {
			t.Fatalf("seed %d without faults: %v", seed, err)
		}
		for _, c := range clean.Calls {
			if c.TailLost {
				t.Errorf("seed %d without faults: call %d marked TailLost", seed, c.Call)
			}
		}
	}
}

func TestIsShortTail(t *testing.T) {
	want := []string{"a", "b", "c"}
	for _, tc := range []struct {
		got  []string
		tail bool
	}{
		{[]string{"a", "b"}, true},
		{[]string{}, true},
		{[]string{"a", "c"}, false}, // a gap in the middle: the client could see it
		{[]string{"a", "b", "c"}, false},
		{[]string{"a", "b", "b"}, false},
	} {
		if got := isShortTail(tc.got, want); got != tc.tail {
			t.Errorf("isShortTail(%q) = %v, want %v", tc.got, got, tc.tail)
		}
	}
}

// TestLostResponseHeldPastTheEnd: seed 540 (over HTTP) holds back a
// streaming call's only segment (reorder) at the instant the server also
// sends the task's status (standalone stream) and the final isComplete
// response (the call's POST stream). Read status first, the segment comes
// before the final response; read the final response first, the segment
// comes after the call ended, unseen as a dropped one. Which comes first
// is the scheduler's choice, so the judge counts a held response of the
// call's session like a dropped one (TailLost), and the verdict is the
// same either way.
func TestLostResponseHeldPastTheEnd(t *testing.T) {
	end := simStart.Add(400 * time.Millisecond)
	for _, tc := range []struct {
		name string
		d    decision
		lost bool
	}{
		{"dropped segment", decision{at: end, session: 1, verb: faults.Drop, stream: "stdout:s2/id:2"}, true},
		{"held segment", decision{at: end, session: 1, verb: faults.Hold, stream: "stdout:s2/id:2"}, true},
		{"held after the call ended", decision{at: end.Add(time.Millisecond), session: 1, verb: faults.Hold, stream: "stdout:s2/id:2"}, false},
		{"held on another session", decision{at: end, session: 0, verb: faults.Hold, stream: "stdout:s1/id:2"}, false},
		{"held notification", decision{at: end, session: 1, verb: faults.Hold, stream: "stdout:s2/task:x"}, false},
		{"duplicated segment", decision{at: end, session: 1, verb: faults.Duplicate, stream: "stdout:s2/id:2"}, false},
	} {
		if got := lostResponse([]decision{tc.d}, 1, end); got != tc.lost {
			t.Errorf("%s: lostResponse = %v, want %v", tc.name, got, tc.lost)
		}
	}
}
