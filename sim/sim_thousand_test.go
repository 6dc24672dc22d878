package sim

import (
	"context"
	"testing"
)

// TestHundredSeedsRace runs seeds 1..100 (TestThousandSeeds runs 1,000
// without the race detector): every run ends, and none fails but by
// SIM-RESULT; http-status acts at the HTTP place.
func TestHundredSeedsRace(t *testing.T) {
	if !raceDetector {
		t.Skip("TestThousandSeeds covers these seeds without the race detector")
	}
	sum := runSeeds(t, 100)
	if sum.Fired["http-status"] == 0 {
		t.Errorf("http-status never applied over seeds 1-100: %v", sum.Fired)
	}
}

// runSeeds runs seeds 1..n and fails the test for any rule failed but
// SIM-RESULT.
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
			if rule != RuleResult {
				t.Errorf("seed %d fails %s: %s", seed, rule, res.Finding(rule))
			}
		}
	}
	return sum
}
