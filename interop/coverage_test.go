package interop

import (
	"fmt"
	"strings"
	"testing"

	"github.com/tasksim/tasksim/sim/suite"
)

// coverageGoal is the share of applicable rules a `tasksim check` run
// should judge on every real peer; coverageFloor is what each peer's run
// judges today, which the test holds (docs/interop.md, "Rules judged per
// peer"). Raise a floor when the suite judges more; the goal is reached
// when every floor is at it.
const coverageGoal = 0.80

// coverageFloor is, by peer run (the test's name), the least share of
// applicable rules it must judge.
var coverageFloor = map[string]float64{
	"TestCheckTSTaskServer/http":           14.0 / 15,
	"TestCheckTSTaskServer/stdio":          7.0 / 8,
	"TestCheckServerEverything":            15.0 / 15,
	"TestCheckGoSDKEverythingServer/http":  1.0 / 7,
	"TestCheckGoSDKEverythingServer/stdio": 0.0 / 1,
	"TestCheckMCPGo/http":                  15.0 / 15,
	"TestCheckMCPGo/stdio":                 8.0 / 8,
	"TestCheckTSv2Server/no-tool":          3.0 / 7,
	"TestCheckTSv2Server/tool":             3.0 / 7,
}

// assertCoverage logs which applicable rules the run judged (o says
// which apply to the peer) and fails below the peer's floor.
func assertCoverage(t *testing.T, got *checkJSON, o suite.CoverageOptions) {
	t.Helper()
	c := got.suite.Coverage(o)
	t.Logf("coverage %s: %s", t.Name(), coverageRow(c))
	floor, ok := coverageFloor[t.Name()]
	if !ok {
		t.Fatalf("no coverage floor for %s (measured %d/%d)", t.Name(), len(c.Judged), len(c.Applicable))
	}
	// A share is compared with a margin below a whole rule, so that
	// floors written as fractions do not fail on rounding.
	if c.Fraction() < floor-0.5/float64(max(len(c.Applicable), 1)) {
		t.Errorf("%s judged %s, below its floor %.0f%%", t.Name(), c, 100*floor)
	}
	if c.Fraction() < coverageGoal {
		t.Logf("coverage %s: %.0f%% below the goal of %.0f%%", t.Name(), 100*c.Fraction(), 100*coverageGoal)
	}
}

// coverageRow is one line of the table in docs/interop.md: judged /
// applicable, percent, and the rules not judged.
func coverageRow(c suite.Coverage) string {
	missing := "none"
	if m := c.Missing(); len(m) > 0 {
		missing = strings.Join(m, ", ")
	}
	return fmt.Sprintf("| %d / %d | %.0f%% | %s |", len(c.Judged), len(c.Applicable), 100*c.Fraction(), missing)
}
