package sim

import "testing"

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
