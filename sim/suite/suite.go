package suite

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"slices"
	"time"

	"github.com/tasksim/tasksim/check"
)

// SuiteOptions configure RunSuite. The zero value (or nil) runs every
// scenario with seed 1, per scenario timeout DefaultScenarioTimeout, and
// keeps no trace.
type SuiteOptions struct {
	// Scenarios are glob patterns (path.Match) of the scenarios to run;
	// empty means all. Skip are patterns of scenarios to leave out.
	Scenarios, Skip []string
	// Tool and Args replace the tool the suite picks from tools/list by
	// its hints (execution.taskSupport, execution.streamPartial) and its
	// arguments: a JSON object, or a template with the placeholders of
	// toolargs ({{durationMs}}, {{chunks}}, ...) filled per call from what
	// the scenario asks.
	Tool string
	Args string
	// Stream, Slow and Fail name the tool of a role, when the hints and
	// Tool do not give it: one that produces content over time, one that
	// works as long as the scenario asks (a task to cancel, to outlive its
	// ttl or its stream), one that fails. The zero ToolSpec leaves the
	// role to the suite (pickTools).
	Stream, Slow, Fail ToolSpec
	// Seed seeds every fault decision of the run.
	Seed uint64
	// Timeout bounds one scenario.
	Timeout time.Duration
	// TraceDir keeps every scenario's trace there as SCENARIO.trace; ""
	// writes them to a temporary directory and keeps only the traces of
	// failed and warned scenarios (Result.TraceDir says where).
	TraceDir string
	// Command is the command line written into each trace header.
	Command []string
	// Strict judges a SHOULD broken as FAIL, not WARN (--strict).
	Strict bool
	// Traced, when set, is called after each scenario, while its trace
	// file (ScenarioResult.Trace, "" if none) is still there, kept or
	// not (tasksim check --html draws it).
	Traced func(*ScenarioResult)
}

// ToolSpec names a server's tool and its arguments, a JSON object that may
// hold the placeholders of toolargs; "" Args: made from the tool's input
// schema.
type ToolSpec struct {
	Name string
	Args string
}

// DefaultScenarioTimeout bounds one scenario when SuiteOptions.Timeout is 0.
const DefaultScenarioTimeout = 20 * time.Second

// DefaultSeed is the seed of a run whose options give none.
const DefaultSeed = 1

// ErrNoScenario is the error of a pattern that names no scenario.
var ErrNoScenario = errors.New("no such scenario")

// RuleOutcome is one rule's outcome in one scenario.
type RuleOutcome struct {
	ID     string       `json:"id"`
	Status check.Status `json:"status"`
	// Checked counts the observations judged (checker and assertions).
	Checked  int             `json:"checked"`
	Findings []check.Finding `json:"findings,omitempty"`
	// Why says why a rule was skipped.
	Why string `json:"why,omitempty"`
}

// ScenarioResult is one scenario's outcome.
type ScenarioResult struct {
	Name    string `json:"name"`
	Summary string `json:"summary"`
	// Status is FAIL if a MUST rule failed or the scenario could not run
	// to its end, WARN if only SHOULD rules were broken (FAIL under
	// SuiteOptions.Strict), SKIP or PASS.
	Status check.Status `json:"status"`
	// Why is the reason of a SKIP, the error that ended a scenario
	// early, or the steps a PASS left out.
	Why string `json:"why,omitempty"`
	// Rules are the rules the scenario exercises, then any other rule its
	// trace broke.
	Rules []RuleOutcome `json:"rules"`
	// Trace is the trace file, when kept.
	Trace string `json:"trace,omitempty"`
	// LeftOut are the steps of a scenario not done, each with why (a PASS
	// with steps left out says so in Why: "partial, left out: ...").
	LeftOut []string `json:"leftOut,omitempty"`
	// Faults are the fault decisions applied, one line each.
	Faults     []string      `json:"faults,omitempty"`
	Duration   time.Duration `json:"-"`
	DurationMs int64         `json:"durationMs"`
	// Verdict is the checker's whole verdict on the trace.
	Verdict *check.Verdict `json:"-"`
}

// Rule returns the outcome of rule id.
func (r *ScenarioResult) Rule(id string) (RuleOutcome, bool) {
	for _, o := range r.Rules {
		if o.ID == id {
			return o, true
		}
	}
	return RuleOutcome{}, false
}

// Failed lists the rules that failed, in order.
func (r *ScenarioResult) Failed() []string { return r.withStatus(check.Fail) }

// Warned lists the rules that are WARN, in order.
func (r *ScenarioResult) Warned() []string { return r.withStatus(check.Warn) }

func (r *ScenarioResult) withStatus(s check.Status) []string {
	var out []string
	for _, o := range r.Rules {
		if o.Status == s {
			out = append(out, o.ID)
		}
	}
	return out
}

// settle gives each broken rule of r its status by its keyword (a SHOULD
// is WARN unless strict), adds the SHOULD rules the verdict holds broken
// that r does not list yet, and sets r.Status from its rules: FAIL if one
// failed, else WARN if one warned. A scenario that failed on its own (an
// error, a timeout: r.Why) stays FAIL.
func settle(r *ScenarioResult, strict bool) {
	if r.Status == check.Skip {
		return
	}
	ownFail := r.Status == check.Fail && (len(r.Failed()) == 0 || r.Why != "")
	if r.Verdict != nil {
		if strict {
			r.Verdict.Strict()
		}
		for _, rr := range r.Verdict.Rules {
			if rr.Status == check.Warn && !slices.ContainsFunc(r.Rules, func(o RuleOutcome) bool { return o.ID == rr.Rule.ID }) {
				r.Rules = append(r.Rules, RuleOutcome{ID: rr.Rule.ID, Checked: rr.Checked, Findings: rr.Findings})
			}
		}
	}
	for i := range r.Rules {
		o := &r.Rules[i]
		if len(o.Findings) == 0 && !o.Status.Broken() {
			continue
		}
		o.Status = check.Fail
		if rule, ok := check.RuleByID(o.ID); ok {
			o.Status = rule.Breach(strict)
		}
	}
	switch {
	case ownFail || len(r.Failed()) > 0:
		r.Status = check.Fail
	case len(r.Warned()) > 0:
		r.Status = check.Warn
	default:
		r.Status = check.Pass
	}
}

// SuiteResult is a whole run.
type SuiteResult struct {
	Target    string            `json:"target"`
	Seed      uint64            `json:"seed"`
	Tool      string            `json:"tool,omitempty"`
	Scenarios []*ScenarioResult `json:"scenarios"`
	// TraceDir is where the kept traces are.
	TraceDir string `json:"traceDir,omitempty"`
	// Interrupted says the run's context ended before its last scenario
	// did: Scenarios are those that finished, NotRun those cut short or
	// never begun (not judged).
	Interrupted bool     `json:"interrupted,omitempty"`
	NotRun      []string `json:"notRun,omitempty"`
}

// Failed reports whether any scenario failed.
func (s *SuiteResult) Failed() bool {
	for _, r := range s.Scenarios {
		if r.Status == check.Fail {
			return true
		}
	}
	return false
}

// Warned reports whether any scenario is WARN: a SHOULD broken.
func (s *SuiteResult) Warned() bool {
	for _, r := range s.Scenarios {
		if r.Status == check.Warn {
			return true
		}
	}
	return false
}

// FailedRules returns every rule that failed in some scenario, sorted.
func (s *SuiteResult) FailedRules() []string {
	return s.rules((*ScenarioResult).Failed)
}

// WarnedRules returns every rule that is WARN in some scenario, sorted.
func (s *SuiteResult) WarnedRules() []string {
	return s.rules((*ScenarioResult).Warned)
}

func (s *SuiteResult) rules(of func(*ScenarioResult) []string) []string {
	var out []string
	for _, r := range s.Scenarios {
		for _, id := range of(r) {
			if !slices.Contains(out, id) {
				out = append(out, id)
			}
		}
	}
	slices.Sort(out)
	return out
}

// Select returns the scenarios of catalog that match patterns (all when
// empty) and none of skip, in catalog order. A pattern that is malformed
// or matches no scenario is an error wrapping ErrNoScenario.
func Select(catalog []*Scenario, patterns, skip []string) ([]*Scenario, error) {
	match := func(p, name string) (bool, error) {
		ok, err := path.Match(p, name)
		if err != nil {
			return false, fmt.Errorf("%w: bad pattern %q", ErrNoScenario, p)
		}
		return ok, nil
	}
	for _, group := range [][]string{patterns, skip} {
		for _, p := range group {
			n := 0
			for _, sc := range catalog {
				ok, err := match(p, sc.Name)
				if err != nil {
					return nil, err
				}
				if ok {
					n++
				}
			}
			if n == 0 {
				return nil, fmt.Errorf("%w matches %q (list them with --list)", ErrNoScenario, p)
			}
		}
	}
	var out []*Scenario
	for _, sc := range catalog {
		in := len(patterns) == 0
		for _, p := range patterns {
			if ok, _ := match(p, sc.Name); ok {
				in = true
			}
		}
		for _, p := range skip {
			if ok, _ := match(p, sc.Name); ok {
				in = false
			}
		}
		if in {
			out = append(out, sc)
		}
	}
	return out, nil
}

// withDefaults returns opts with the zero fields set to their defaults.
func (opts *SuiteOptions) withDefaults() SuiteOptions {
	var o SuiteOptions
	if opts != nil {
		o = *opts
	}
	if o.Seed == 0 {
		o.Seed = DefaultSeed
	}
	if o.Timeout <= 0 {
		o.Timeout = DefaultScenarioTimeout
	}
	return o
}

// RunSuite runs the server scenarios that opts select against target, one
// after the other, each on fresh sessions. It first probes the target
// (initialize, tools/list): a target that cannot be reached or is not an
// MCP server is an error wrapping ErrUnreachable, and nothing runs; ctx
// ending during the probe is an error wrapping ctx's. ctx ending later
// ends the run with the scenarios that finished, Interrupted set.
func RunSuite(ctx context.Context, target Target, opts *SuiteOptions) (*SuiteResult, error) {
	o := opts.withDefaults()
	selected, err := Select(ServerScenarios(), o.Scenarios, o.Skip)
	if err != nil {
		return nil, err
	}
	probe, err := probeTarget(ctx, target, o.Timeout)
	if err != nil {
		return nil, err
	}
	tools := pickTools(probe, &o)
	res := &SuiteResult{Target: target.String(), Seed: o.Seed, Tool: tools.stream.name}
	names := make([]string, len(selected))
	for i, sc := range selected {
		names[i] = sc.Name
	}
	err = runEach(ctx, &o, res, names, func(i int, tracePath string) *ScenarioResult {
		return runScenario(ctx, selected[i], target, &o, probe, tools, tracePath)
	})
	if err != nil {
		return nil, err
	}
	return res, nil
}

// runEach runs the scenarios named, one after the other, into res: each
// writes its trace to DIR/NAME.trace, DIR being o.TraceDir or, when that
// is "", a temporary directory that keeps only the traces of failed and
// warned scenarios (and is removed if there are none). Each scenario's
// status is settled by the keywords of its broken rules (settle). Once ctx ends, the
// scenario it cut short and those not begun go to res.NotRun, not judged.
func runEach(ctx context.Context, o *SuiteOptions, res *SuiteResult, names []string, run func(i int, tracePath string) *ScenarioResult) error {
	dir, keepAll := o.TraceDir, true
	if dir == "" {
		keepAll = false
		var err error
		if dir, err = os.MkdirTemp("", "tasksim-check-"); err != nil {
			return fmt.Errorf("traces: %w", err)
		}
	} else if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("--traces %s: %w", dir, err)
	}
	kept := 0
	for i, name := range names {
		if ctx.Err() != nil {
			res.Interrupted, res.NotRun = true, names[i:]
			break
		}
		r := run(i, filepath.Join(dir, name+".trace"))
		if ctx.Err() != nil {
			// Cut short: what it saw is not a verdict.
			if r.Trace != "" && !keepAll {
				os.Remove(r.Trace)
			}
			res.Interrupted, res.NotRun = true, names[i:]
			break
		}
		settle(r, o.Strict)
		if o.Traced != nil {
			o.Traced(r)
		}
		if !r.Status.Broken() && !keepAll {
			if r.Trace != "" {
				os.Remove(r.Trace)
			}
			r.Trace = ""
		} else {
			kept++
		}
		res.Scenarios = append(res.Scenarios, r)
	}
	if kept == 0 && !keepAll {
		os.Remove(dir)
	} else {
		res.TraceDir = dir
	}
	return nil
}
