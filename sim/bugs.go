package sim

import (
	"fmt"
	"strings"

	"github.com/tasksim/tasksim/internal/plant"
)

// Bugs says how known bugs are planted in a run's reference server, its
// HTTP transport and the reference client, from outside (internal/plant):
// the simulator's own test and tasksim sim --bug break it one bug at a
// time and expect the rule that names the bug to fail within 1,000 seeds.
type Bugs = plant.Plant

// PlantedBug is one planted bug by name, with the rule it breaks.
type PlantedBug struct {
	Name string
	// Rule is the catalog rule the bug breaks.
	Rule string
	Bugs Bugs
	// ShownBy, when set, is the rule the simulation shows the bug by
	// instead, and why: "RULE: why".
	ShownBy string
	// Unreachable, when set, says why the simulation's workload cannot
	// show the bug (the check suite's scenarios do): it sends nothing
	// that would.
	Unreachable string
}

// shownBy are the bugs the simulation shows by another rule than their
// own, and why (PlantedBug.ShownBy).
var shownBy = map[string]string{
	"reversed-merge":  "SIM-LIVENESS: a task-mode call's result (tasks/result, which merges the segments) is wrong; S1905-MERGE compares tasks/result with the segments a stream delivered, and the workload fetches no tasks/result of a streamed task",
	"client-no-dedup": "SIM-RESULT: the result the client calls complete holds a segment twice; CLIENT-DEDUP judges a client's delivered output, which the simulation judges as SIM-RESULT",
}

// PlantedBugs returns every planted bug of the server, its HTTP transport
// and the client, by name (plant.Bugs).
func PlantedBugs() []PlantedBug {
	all := plant.Bugs()
	out := make([]PlantedBug, len(all))
	for i, b := range all {
		out[i] = PlantedBug{Name: b.Name, Rule: b.Rule, Bugs: b.Plant, ShownBy: shownBy[b.Name]}
	}
	return out
}

// SimRule is the rule a run with the bug planted fails: ShownBy's, else
// Rule.
func (b PlantedBug) SimRule() string {
	if b.ShownBy != "" {
		rule, _, _ := strings.Cut(b.ShownBy, ":")
		return rule
	}
	return b.Rule
}

// BugNamed returns the planted bug called name.
func BugNamed(name string) (PlantedBug, error) {
	for _, b := range PlantedBugs() {
		if b.Name == name {
			return b, nil
		}
	}
	_, err := plant.Named(name)
	return PlantedBug{}, fmt.Errorf("--bug: %w", err)
}
