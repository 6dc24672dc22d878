package cli

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"

	"github.com/tasksim/tasksim/sim"
	"github.com/tasksim/tasksim/sim/suite"
	"github.com/tasksim/tasksim/timeline"
)

// writeTimeline writes the --html page of runs to path.
func writeTimeline(st *State, path, title string, runs []*timeline.Run) error {
	if err := writeOutput(st, path, func(w io.Writer) error { return timeline.Write(w, title, runs...) }); err != nil {
		return fmt.Errorf("--html %s: %w", path, err)
	}
	return nil
}

// simRunTimeline is a simulator run as a timeline: its trace, its
// verdict, and its calls and liveness findings as notes.
func simRunTimeline(res *sim.Result, title string) (*timeline.Run, error) {
	run, err := timeline.FromTrace(res.Trace, title, nil)
	if err != nil {
		return nil, err
	}
	run.Verdict = res.Verdict
	for _, f := range res.Liveness {
		run.Notes = append(run.Notes, f.Rule+": "+f.Message)
	}
	for _, c := range res.Calls {
		run.Notes = append(run.Notes, callNote(c))
	}
	return run, nil
}

// outcomeWords says how a call ended, in words: the outcome names of the
// JSON (sim.CallOutcome.Got) are terse, and "hung" read as a verdict
// where the run passed.
var outcomeWords = map[string]string{
	sim.OutcomeOK:        "the result",
	sim.OutcomeFailed:    "the tool's error",
	sim.OutcomeExpired:   "its ttl's expiry",
	sim.OutcomeCancelled: "its cancellation",
	sim.OutcomeWrong:     "a wrong result",
	sim.OutcomeError:     "an error",
	sim.OutcomeHung:      "no end by its deadline",
}

func outcomeText(o string) string {
	if w, ok := outcomeWords[o]; ok {
		return w
	}
	return o
}

// callNote is a call's line under the timeline. A call that a fault kept
// from its expected end passes SIM-LIVENESS when tasks/result gives that
// end once the faults stopped (sim.judgeCall); the line says so, instead
// of setting what it got against what was expected as if that failed.
func callNote(c sim.CallOutcome) string {
	switch {
	case c.Got == c.Expected:
		line := fmt.Sprintf("call %d: got %s, as expected", c.Call, outcomeText(c.Got))
		if c.Faulted {
			line += ", though a fault acted on its session"
		}
		return line
	case c.Faulted && c.Recovered == c.Expected:
		return fmt.Sprintf("call %d: recovered: after a fault acted on its session it got %s; once the faults stopped, tasks/result gave %s, as expected",
			c.Call, outcomeText(c.Got), outcomeText(c.Recovered))
	case c.Faulted:
		line := fmt.Sprintf("call %d: expected %s, got %s after a fault acted on its session", c.Call, outcomeText(c.Expected), outcomeText(c.Got))
		if c.Recovered != "" {
			line += "; once the faults stopped, tasks/result gave " + outcomeText(c.Recovered)
		}
		return line
	}
	return fmt.Sprintf("call %d: expected %s, got %s, and no fault acted on its session", c.Call, outcomeText(c.Expected), outcomeText(c.Got))
}

// simPick keeps the one run of many that --html draws: the first that
// failed a rule, else the most interesting: the one where most calls
// were recovered after the faults, then where faults acted most often
// and most diversely. Only that run's result is kept.
type simPick struct {
	best  *sim.Result
	score [4]int
	// ignoreFailures picks by faults and recoveries alone (the demo).
	ignoreFailures bool
}

func (p *simPick) offer(res *sim.Result) {
	if p.best != nil && p.score[0] == 1 {
		return // a failure is kept already
	}
	var s [4]int
	if res.Failed() && !p.ignoreFailures {
		s[0] = 1
	}
	for _, c := range res.Calls {
		if c.Recovered != "" {
			s[1]++
		}
	}
	names := map[string]bool{}
	for _, a := range res.Applied {
		names[a.Name] = true
	}
	s[2], s[3] = len(names), len(res.Applied)
	if p.best == nil || greater(s, p.score) {
		p.best, p.score = res, s
	}
}

func greater(a, b [4]int) bool {
	for i := range a {
		if a[i] != b[i] {
			return a[i] > b[i]
		}
	}
	return false
}

// why says why the picked run was picked.
func (p *simPick) why() string {
	switch {
	case p.best == nil:
		return ""
	case p.score[0] == 1:
		return "the first run that failed a rule: " + strings.Join(p.best.FailedRules(), ", ")
	}
	lead := "no run failed; this one had"
	if p.ignoreFailures {
		lead = "the run with"
	}
	return fmt.Sprintf("%s the most calls recovered after the faults (%d), then the most faults acting (%d kinds, %d decisions)",
		lead, p.score[1], p.score[2], p.score[3])
}

// writeSimHTML writes the --html page of tasksim sim: the picked run.
func writeSimHTML(w io.Writer, p *simPick, runs int) error {
	if p.best == nil {
		return nil
	}
	title := fmt.Sprintf("tasksim sim --seed %d", p.best.Schedule.Seed)
	run, err := simRunTimeline(p.best, title)
	if err != nil {
		return fmt.Errorf("seed %d: %w", p.best.Schedule.Seed, err)
	}
	if runs > 1 {
		run.Notes = append([]string{fmt.Sprintf("one of %d runs: %s", runs, p.why())}, run.Notes...)
	}
	return timeline.Write(w, "tasksim sim: "+title, run)
}

// scenarioTimeline reads a check scenario's kept trace into a run.
func scenarioTimeline(r *suite.ScenarioResult) (*timeline.Run, error) {
	data, err := os.ReadFile(r.Trace)
	if err != nil {
		return nil, err
	}
	run, err := timeline.FromTrace(data, fmt.Sprintf("%s: %s", r.Name, r.Status), nil)
	if err != nil {
		return nil, err
	}
	run.Verdict = r.Verdict
	if r.Why != "" {
		run.Notes = append(run.Notes, r.Why)
	}
	for _, f := range r.Faults {
		run.Notes = append(run.Notes, "fault: "+f)
	}
	return run, nil
}

// checkTimelines collects the timelines of tasksim check --html: one per
// scenario that left a trace.
type checkTimelines struct {
	path string
	runs []*timeline.Run
}

// traced is the suite's SuiteOptions.Traced hook; nil without --html.
func (c *checkTimelines) traced() func(*suite.ScenarioResult) {
	if c.path == "" {
		return nil
	}
	return func(r *suite.ScenarioResult) {
		if r.Trace == "" {
			return
		}
		run, err := scenarioTimeline(r)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			return // the scenario ended before it connected
		case err != nil:
			run = timeline.NewRun(fmt.Sprintf("%s: %s", r.Name, r.Status), nil)
			run.Verdict = r.Verdict
			run.Notes = []string{"the trace does not read: " + err.Error()}
		}
		c.runs = append(c.runs, run)
	}
}

// write writes the page, if --html asked for one.
func (c *checkTimelines) write(st *State, res *suite.SuiteResult) error {
	if c.path == "" {
		return nil
	}
	return writeTimeline(st, c.path, fmt.Sprintf("tasksim check %s (seed %d)", res.Target, res.Seed), c.runs)
}
