package cli

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/tasksim/tasksim/check"
	"github.com/tasksim/tasksim/sim"
	"github.com/tasksim/tasksim/timeline"
	"github.com/tasksim/tasksim/traces"
)

// TraceCheckOptions are the flags of tasksim trace check.
type TraceCheckOptions struct {
	Rules []string
	JSON  string
	JUnit string
	HTML  string
	// Strict fails a SHOULD broken (WARN) as a MUST is.
	Strict bool
}

func newCmdTraceCheck(st *State) *cobra.Command {
	o := &TraceCheckOptions{}
	cmd := &cobra.Command{
		Use:   "check FILE...",
		Short: "Judge traces by the rule catalog: a verdict per rule, with evidence",
		Long: `Judge each trace, recorded from anyone's traffic (tasksim record, proxy,
check, sim), by the rule catalog: one line per rule (PASS, FAIL, or SKIP with
what the trace would need to show), then the evidence of each failure: the
record numbers (tasksim trace show --json) and one line saying what is wrong.
docs/rules.md lists every rule and the spec sentence it enforces.

A trace cut short (its writer was killed) is judged up to its last whole
record, and the verdict says so.

Exit codes: 0 no rule failed, 1 a rule failed, 2 bad input (not a trace, an
unknown rule id), 3 an output could not be written.`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runTraceCheck(st, o, args)
		},
	}
	cmd.Flags().StringSliceVar(&o.Rules, "rule", nil, "judge only these rule IDs (repeatable, or comma-separated)")
	cmd.Flags().StringVar(&o.JSON, "json", "", "also write the verdicts as JSON to this file (- for stdout)")
	cmd.Flags().StringVar(&o.JUnit, "junit", "", "also write a JUnit XML report to this file: one testcase per trace and rule")
	cmd.Flags().BoolVar(&o.Strict, "strict", false, "judge a SHOULD broken as FAIL (exit 1), not WARN")
	cmd.Flags().StringVar(&o.HTML, "html", "", "also write the timeline of each trace, its violations highlighted, to this HTML file")
	return cmd
}

// checkedTrace is one file's verdict in the JSON output.
type checkedTrace struct {
	File    string         `json:"file"`
	Verdict *check.Verdict `json:"verdict"`
}

func runTraceCheck(st *State, o *TraceCheckOptions, paths []string) error {
	if err := checkRuleIDs(o.Rules); err != nil {
		return err
	}
	var all []checkedTrace
	var runs []*timeline.Run
	failed := 0
	for _, path := range paths {
		var run *timeline.Run
		if o.HTML != "" {
			run = timeline.NewRun(path, nil)
			runs = append(runs, run)
		}
		v, err := checkTraceFile(st, path, o.Rules, run)
		if err != nil {
			return err
		}
		if o.Strict {
			v.Strict()
		}
		if len(paths) > 1 {
			fmt.Fprintf(st.Stdout, "== %s\n", path)
		}
		if err := v.WriteText(st.Stdout); err != nil {
			return fmt.Errorf("write: %w", err)
		}
		if v.Failed() {
			failed++
		}
		all = append(all, checkedTrace{File: path, Verdict: v})
	}
	if o.JSON != "" {
		err := writeOutput(st, o.JSON, func(w io.Writer) error {
			return writeJSON(w, map[string]any{"schema": "tasksim.trace-check/v1", "traces": all})
		})
		if err != nil {
			return fmt.Errorf("--json %s: %w", o.JSON, err)
		}
	}
	if o.HTML != "" {
		if err := writeTimeline(st, o.HTML, "tasksim trace check "+strings.Join(paths, " "), runs); err != nil {
			return err
		}
	}
	if o.JUnit != "" {
		if err := writeOutput(st, o.JUnit, func(w io.Writer) error { return writeTraceCheckJUnit(w, all) }); err != nil {
			return fmt.Errorf("--junit %s: %w", o.JUnit, err)
		}
	}
	if failed > 0 {
		return &FindingsError{Summary: fmt.Sprintf("%d of %d traces break a rule", failed, len(paths))}
	}
	return nil
}

// checkRuleIDs refuses a --rule that names no rule of the catalog.
func checkRuleIDs(rules []string) error {
	for _, id := range rules {
		if _, ok := check.RuleByID(id); !ok {
			var ids []string
			for _, r := range check.Catalog() {
				ids = append(ids, r.ID)
			}
			return usagef("--rule %s: no such rule (rules: %s)", id, strings.Join(ids, ", "))
		}
	}
	return nil
}

// writeTraceCheckJUnit writes the --junit report: a testsuite per trace.
func writeTraceCheckJUnit(w io.Writer, all []checkedTrace) error {
	if _, err := io.WriteString(w, "<testsuites>\n"); err != nil {
		return err
	}
	for _, t := range all {
		if err := t.Verdict.WriteJUnitSuite(w, t.File); err != nil {
			return err
		}
	}
	_, err := io.WriteString(w, "</testsuites>\n")
	return err
}

// checkTraceFile judges the trace at path; run, when not nil, gets its
// records, header and verdict for the --html page.
func checkTraceFile(st *State, path string, rules []string, run *timeline.Run) (*check.Verdict, error) {
	r, err := openTrace(st, path)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	records := r.Records()
	if run != nil {
		run.Header = r.Header()
		records = run.Tee(records)
	}
	// A trace of tasksim sim is judged as the simulator judged it.
	opts := sim.CheckOptions(r.Header())
	opts.Rules = rules
	v, err := check.Check(records, opts)
	if err != nil {
		var c *traces.CorruptError
		if errors.As(err, &c) {
			return nil, &UsageError{Err: fmt.Errorf("%s: %w", path, err)}
		}
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if v.Cut != "" {
		fmt.Fprintf(st.Stderr, "tasksim: warning: %s: %s; judged up to its last whole record\n", path, v.Cut)
	}
	if run != nil {
		run.Verdict = v
		if v.Cut != "" {
			run.Notes = append(run.Notes, "the trace is cut ("+v.Cut+"): drawn and judged up to its last whole record")
		}
	}
	return v, nil
}
