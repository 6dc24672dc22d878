//go:build !race

package sim

import (
	"testing"

	"github.com/tasksim/tasksim/faults"
)

// TestThousandSeeds runs seeds 1..1000 as tasksim sim --seeds 1000 does:
// every fault of the catalog acts at least 100 times in all, http-status
// (at the HTTP place) included, and every run passes; the calls whose
// last segments a dropped response took unseen (CallOutcome.TailLost) are
// counted, and each was recovered whole with tasks/result. A few
// seconds without the race detector; TestHundredSeedsRace is its share
// under -race.
func TestThousandSeeds(t *testing.T) {
	sum := runSeeds(t, 1000)
	for _, name := range faultNames(faults.Builtin(), TransportHTTP) {
		if n := sum.Fired[name]; n < 100 {
			t.Errorf("%s applied %d times over seeds 1-1000, want at least 100", name, n)
		}
	}
	if sum.TailLost == 0 {
		t.Errorf("no call lost its tail to a dropped response over seeds 1-1000: the excuse is untested")
	}
	t.Logf("%d runs, %d failed %v; faults applied %v", sum.Runs, sum.Failures, sum.ByRule, sum.Fired)
}
