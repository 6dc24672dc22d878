package cli

import (
	"time"

	"github.com/tasksim/tasksim/sim"
)

// simCase is one run in the JUnit output.
type simCase struct {
	name  string
	rules []string
	text  string
	wall  time.Duration
}

// Bounds on what tasksim sim keeps of its runs, whatever their number:
// the summary counts every run; --json lists the first maxSimFailures
// failing runs, --junit has a testcase for each of the first maxSimCases
// runs (and the first maxSimFailures failing ones), and one testcase for
// the passing and one for the failing runs past them.
const (
	maxSimFailures = 1000
	maxSimCases    = 10000
)

// simTally is what tasksim sim keeps of its runs, in memory that does
// not grow with their number.
type simTally struct {
	sum   sim.Summary
	seeds sim.SeedSet
	// failures are the first maxFailures failing runs; failuresOmitted
	// counts the others.
	failures        []sim.Failure
	failuresOmitted int
	maxFailures     int
	// cases are the JUnit testcases: every run until there are maxCases,
	// then failing runs until maxFailures of them are cases; passOmitted
	// and failOmitted count the runs past that.
	cases                    []simCase
	failCases                int
	passOmitted, failOmitted int
	maxCases                 int
}

// add counts a run; fail is its failure, nil when it passed.
func (t *simTally) add(res *sim.Result, c simCase, fail *sim.Failure) {
	t.sum.Add(res)
	t.seeds.Add(res.Schedule.Seed)
	if fail != nil {
		if len(t.failures) < t.maxFailures {
			t.failures = append(t.failures, *fail)
		} else {
			t.failuresOmitted++
		}
	}
	switch {
	case len(t.cases) < t.maxCases || fail != nil && t.failCases < t.maxFailures:
		t.cases = append(t.cases, c)
		if fail != nil {
			t.failCases++
		}
	case fail != nil:
		t.failOmitted++
	default:
		t.passOmitted++
	}
}
