//go:build !race

package sim

import "testing"

// TestSimFindsPlantedBugs plants each bug the simulation's workload can
// reach, one at a time: tasksim sim finds it within seeds 1..1000 and
// shrinks it to at most 3 faults (checkFindsBug). The bugs it cannot
// reach say why (PlantedBug.Unreachable, docs/sim.md). Seconds per bug
// without the race detector, many times that with it: TestSimFindsPlantedBugsRace
// runs two under -race.
func TestSimFindsPlantedBugs(t *testing.T) {
	for _, b := range PlantedBugs() {
		t.Run(b.Name, func(t *testing.T) {
			if b.Unreachable != "" {
				t.Skip(b.Unreachable)
			}
			checkFindsBug(t, b)
		})
	}
}
