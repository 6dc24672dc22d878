package harness

import (
	"fmt"
	"slices"

	"github.com/tasksim/tasksim/check"
	"github.com/tasksim/tasksim/traces"
)

// rulesOf lists the rules judging side: a server scenario's scripted
// client is tasksim's own, and is not what the scenario judges.
func rulesOf(sides ...check.Side) []string {
	var out []string
	for _, r := range check.Catalog() {
		if slices.Contains(sides, r.Side) {
			out = append(out, r.ID)
		}
	}
	return out
}

// JudgeTrace judges the trace file at path by the rules of sides.
func JudgeTrace(path string, side ...check.Side) (*check.Verdict, error) {
	tr, err := traces.Open(path)
	if err != nil {
		return nil, fmt.Errorf("trace: %w", err)
	}
	defer tr.Close()
	v, err := check.Check(tr.Records(), &check.Options{Rules: rulesOf(side...)})
	if err != nil {
		return nil, fmt.Errorf("trace: %w", err)
	}
	return v, nil
}
