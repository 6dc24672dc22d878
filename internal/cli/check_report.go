package cli

import (
	"fmt"
	"io"
	"strings"

	"github.com/tasksim/tasksim/check"
	"github.com/tasksim/tasksim/sim/suite"
)

// reportCheck writes the table, --json and --junit, and maps the verdict
// to the exit code.
func reportCheck(st *State, o *CheckOptions, res *suite.SuiteResult, tl *checkTimelines) error {
	repro := reproCommand(o)
	if err := writeCheckText(st.Stdout, res, repro); err != nil {
		return fmt.Errorf("write: %w", err)
	}
	if err := tl.write(st, res); err != nil {
		return err
	}
	if o.JSON != "" {
		if err := writeOutput(st, o.JSON, func(w io.Writer) error { return writeCheckJSON(w, res, repro) }); err != nil {
			return fmt.Errorf("--json %s: %w", o.JSON, err)
		}
	}
	if o.JUnit != "" {
		if err := writeOutput(st, o.JUnit, func(w io.Writer) error { return writeCheckJUnit(w, res, repro) }); err != nil {
			return fmt.Errorf("--junit %s: %w", o.JUnit, err)
		}
	}
	interrupted := ""
	if res.Interrupted {
		interrupted = fmt.Sprintf("interrupted, %d scenarios not run; ", len(res.NotRun))
	}
	if res.Failed() {
		n := 0
		for _, r := range res.Scenarios {
			if r.Status == check.Fail {
				n++
			}
		}
		rules := ""
		if failed := res.FailedRules(); len(failed) > 0 {
			rules = " (rules: " + strings.Join(failed, ", ") + ")"
		}
		return &FindingsError{Summary: fmt.Sprintf("%s%d of %d scenarios failed%s", interrupted, n, len(res.Scenarios), rules)}
	}
	if res.Interrupted {
		// What ran passed, but the suite did not: not a success (exit 130).
		return &InterruptedError{What: "check", Detail: fmt.Sprintf("%d scenarios ran and none failed, %d not run: %s", len(res.Scenarios), len(res.NotRun), strings.Join(res.NotRun, ", "))}
	}
	return nil
}

// reproCommand returns the command that reruns one scenario as this run
// did.
func reproCommand(o *CheckOptions) func(scenario string) string {
	return func(scenario string) string {
		parts := []string{"tasksim", "check"}
		switch {
		case o.Server != "":
			parts = append(parts, "--server", shellQuote(o.Server))
		case o.ServerCmd != "":
			parts = append(parts, "--server-cmd", shellQuote(o.ServerCmd))
		default:
			if o.ClientTransport == "stdio" {
				parts = append(parts, "--client-transport", "stdio")
			}
			parts = append(parts, "--client-cmd", shellQuote(o.ClientCmd))
		}
		for _, f := range [][2]string{
			{"--tool", o.Tool}, {"--args", o.Args}, {"--stream-tool", o.StreamTool}, {"--stream-args", o.StreamArgs},
			{"--slow-tool", o.SlowTool}, {"--slow-args", o.SlowArgs}, {"--fail-tool", o.FailTool}, {"--fail-args", o.FailArgs},
		} {
			if f[1] != "" {
				parts = append(parts, f[0], shellQuote(f[1]))
			}
		}
		parts = append(parts, "--scenario", scenario, "--seed", fmt.Sprint(o.Seed))
		return strings.Join(parts, " ")
	}
}

func shellQuote(s string) string {
	if s != "" && !strings.ContainsAny(s, " \t\n'\"\\$`*?[]{}();&|<>!#~") {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// statusCounts counts statuses; skip counts any but PASS, WARN and FAIL.
type statusCounts struct{ pass, warn, fail, skip int }

func (c *statusCounts) add(s check.Status) {
	switch s {
	case check.Pass:
		c.pass++
	case check.Warn:
		c.warn++
	case check.Fail:
		c.fail++
	default:
		c.skip++
	}
}

func writeCheckText(w io.Writer, res *suite.SuiteResult, repro func(string) string) error {
	var b strings.Builder
	fmt.Fprintf(&b, "tasksim check %s (seed %d", res.Target, res.Seed)
	if res.Tool != "" {
		fmt.Fprintf(&b, ", tool %s", res.Tool)
	}
	b.WriteString(")\n\n")
	var n statusCounts
	for _, r := range res.Scenarios {
		n.add(r.Status)
		writeScenarioText(&b, r, repro)
	}
	fmt.Fprintf(&b, "\n%d scenarios: %d passed, %d warned, %d failed, %d skipped\n", len(res.Scenarios), n.pass, n.warn, n.fail, n.skip)
	if n.warn > 0 {
		b.WriteString("warned: a SHOULD of the spec broken, not a failure (--strict fails it)\n")
	}
	if res.Interrupted {
		fmt.Fprintf(&b, "interrupted: %d not run (not judged): %s\n", len(res.NotRun), strings.Join(res.NotRun, ", "))
	}
	writeRuleTable(&b, res)
	if res.TraceDir != "" {
		fmt.Fprintf(&b, "\ntraces: %s\n", res.TraceDir)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// writeScenarioText writes a scenario's line, its rules and their
// findings, and for a broken one its trace and how to reproduce it.
func writeScenarioText(b *strings.Builder, r *suite.ScenarioResult, repro func(string) string) {
	fmt.Fprintf(b, "%-4s  %-26s %6dms", r.Status, r.Name, r.DurationMs)
	if r.Why != "" {
		fmt.Fprintf(b, "  %s", r.Why)
	}
	b.WriteByte('\n')
	if r.Status == check.Skip {
		return
	}
	for _, o := range r.Rules {
		fmt.Fprintf(b, "        %-4s %-24s", o.Status, o.ID)
		switch o.Status {
		case check.Pass:
			fmt.Fprintf(b, " %d checked", o.Checked)
		case check.Skip:
			fmt.Fprintf(b, " not observed: %s", o.Why)
		}
		b.WriteByte('\n')
		for _, f := range o.Findings {
			b.WriteString("             " + findingLine(f) + "\n")
		}
	}
	if r.Status.Broken() {
		if r.Trace != "" {
			fmt.Fprintf(b, "        trace:     %s\n", r.Trace)
		}
		fmt.Fprintf(b, "        reproduce: %s\n", repro(r.Name))
	}
}

// writeRuleTable writes the per-rule table: each rule across the
// scenarios that judged it.
func writeRuleTable(b *strings.Builder, res *suite.SuiteResult) {
	b.WriteString("\nrule                      keyword  pass  warn  fail  skip\n")
	for _, rule := range check.Catalog() {
		var n statusCounts
		for _, r := range res.Scenarios {
			if o, ok := r.Rule(rule.ID); ok {
				n.add(o.Status)
			}
		}
		if n.pass+n.warn+n.fail+n.skip == 0 {
			continue
		}
		fmt.Fprintf(b, "%-25s %-7s %5d %5d %5d %5d\n", rule.ID, rule.Keyword, n.pass, n.warn, n.fail, n.skip)
	}
}

func findingLine(f check.Finding) string {
	if len(f.Records) == 0 {
		return f.Message
	}
	rs := make([]string, len(f.Records))
	for i, r := range f.Records {
		rs[i] = fmt.Sprint(r)
	}
	return "records " + strings.Join(rs, ",") + ": " + f.Message
}

// checkJSON is the --json document, schema tasksim.check/v1 (docs/ci.md).
type checkJSON struct {
	Schema string `json:"schema"`
	*suite.SuiteResult
	Failed    bool              `json:"failed"`
	Warned    bool              `json:"warned"`
	Reproduce map[string]string `json:"reproduce,omitempty"`
	Rules     []check.Rule      `json:"catalog"`
	Counts    map[string]int    `json:"counts"`
}

func writeCheckJSON(w io.Writer, res *suite.SuiteResult, repro func(string) string) error {
	doc := checkJSON{Schema: "tasksim.check/v1", SuiteResult: res, Failed: res.Failed(), Warned: res.Warned(), Rules: check.Catalog(), Counts: map[string]int{"pass": 0, "warn": 0, "fail": 0, "skip": 0}}
	for _, r := range res.Scenarios {
		doc.Counts[strings.ToLower(string(r.Status))]++
		if r.Status.Broken() {
			if doc.Reproduce == nil {
				doc.Reproduce = map[string]string{}
			}
			doc.Reproduce[r.Name] = repro(r.Name)
		}
	}
	return writeJSON(w, doc)
}

// writeCheckJUnit writes one testsuite per scenario and one testcase per
// scenario × rule; failures carry the evidence, the trace and the command
// that reproduces them; a scenario's own failure (an error that ended it)
// is a testcase named after the scenario.
func writeCheckJUnit(w io.Writer, res *suite.SuiteResult, repro func(string) string) error {
	type (
		failure   = check.JUnitFailure
		skipped   = check.JUnitSkipped
		testcase  = check.JUnitCase
		testsuite = check.JUnitSuite
	)
	all := check.JUnitSuites{Name: "tasksim check " + res.Target}
	for _, r := range res.Scenarios {
		secs := fmt.Sprintf("%.3f", float64(r.DurationMs)/1000)
		s := testsuite{Name: "tasksim check: " + r.Name, Time: secs}
		class := "tasksim.check." + r.Name
		footer := ""
		if r.Status.Broken() {
			if r.Trace != "" {
				footer += "trace: " + r.Trace + "\n"
			}
			footer += "reproduce: " + repro(r.Name) + "\n"
		}
		if r.Status == check.Fail && r.Why != "" {
			s.Cases = append(s.Cases, testcase{Name: r.Name, Classname: class, Time: secs, Failure: &failure{Message: r.Why, Text: r.Why + "\n" + footer}})
		}
		for _, o := range r.Rules {
			tc := testcase{Name: r.Name + " " + o.ID, Classname: class, Time: "0"}
			switch o.Status {
			case check.Fail:
				var b strings.Builder
				for _, f := range o.Findings {
					b.WriteString(findingLine(f) + "\n")
				}
				b.WriteString(footer)
				msg := o.ID
				if rule, ok := check.RuleByID(o.ID); ok {
					msg = o.ID + ": " + rule.Summary + " (" + rule.Spec + ")"
				}
				tc.Failure = &failure{Message: msg, Text: b.String()}
			case check.Warn:
				// A SHOULD broken: a passing testcase that says so.
				rule, _ := check.RuleByID(o.ID)
				rule.ID = o.ID
				tc.SystemOut = check.WarnText(rule, check.Evidence(o.Findings)+footer)
			case check.Skip:
				why := o.Why
				if r.Status == check.Skip {
					why = r.Why
				}
				tc.Skipped = &skipped{Message: why}
			}
			s.Cases = append(s.Cases, tc)
		}
		for _, tc := range s.Cases {
			s.Tests++
			if tc.Failure != nil {
				s.Failures++
			}
			if tc.Skipped != nil {
				s.Skipped++
			}
		}
		all.Tests += s.Tests
		all.Failures += s.Failures
		all.Suites = append(all.Suites, s)
	}
	for _, name := range res.NotRun {
		// Cut short or never begun by an interrupt: not judged.
		all.Tests++
		all.Suites = append(all.Suites, testsuite{Name: "tasksim check: " + name, Tests: 1, Skipped: 1, Time: "0",
			Cases: []testcase{{Name: name, Classname: "tasksim.check." + name, Time: "0", Skipped: &skipped{Message: "not run: the check was interrupted"}}}})
	}
	return check.WriteJUnitXML(w, all)
}
