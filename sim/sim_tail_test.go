package sim

import "testing"

// TestTailLossExcused: a complete result that lacks only its last
// segments, after a fault dropped messages, is a loss no client can see
// (SEP-1905's final response does not count the segments): SIM-RESULT
// does not hold it against the client. Any other wrong result is still a
// finding.
func TestTailLossExcused(t *testing.T) {
	if !isShortTail([]string{"a", "b"}, []string{"a", "b", "c"}) {
		t.Error("a, b of a, b, c is a short tail")
	}
	for _, got := range [][]string{{"a", "c"}, {"b"}, {"a", "b", "c"}, {"a", "b", "c", "d"}} {
		if isShortTail(got, []string{"a", "b", "c"}) {
			t.Errorf("%q of a, b, c is not a short tail", got)
		}
	}
	c := Call{Tool: "slow_text", Mode: "streaming"}
	if f := judgeCall(c, CallOutcome{Got: OutcomeWrong, Expected: OutcomeOK, TailLost: true, Faulted: true}, false); len(f) != 0 {
		t.Errorf("a lost tail was judged: %v", f)
	}
	if f := judgeCall(c, CallOutcome{Got: OutcomeWrong, Expected: OutcomeOK, Faulted: true}, false); len(f) != 1 || f[0].Rule != RuleResult {
		t.Errorf("a wrong result was not a SIM-RESULT finding: %v", f)
	}
}
