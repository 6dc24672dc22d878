package cli

import (
	"fmt"
	"strings"

	"github.com/tasksim/tasksim/load"
)

// DefaultMaxFailureRate is the default of tasksim load --max-failure-rate:
// a run in which more than a tenth of a mode's tasks failed measured a
// broken server, not a fast one, and must not pass as done.
const DefaultMaxFailureRate = 0.1

// checkFailureRate returns a finding when a mode of res had more than max
// of its started tasks fail.
func checkFailureRate(res *load.Result, max float64) error {
	var bad []string
	for _, m := range res.Modes {
		if m.Started == 0 {
			continue
		}
		if rate := float64(m.Failed) / float64(m.Started); rate > max {
			bad = append(bad, fmt.Sprintf("%s %d of %d (%.0f%%)", m.Name, m.Failed, m.Started, 100*rate))
		}
	}
	if len(bad) == 0 {
		return nil
	}
	return &FindingsError{Summary: fmt.Sprintf("tasks failed above --max-failure-rate %g: %s", max, strings.Join(bad, ", "))}
}
