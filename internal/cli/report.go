package cli

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/tasksim/tasksim/load"
	"github.com/tasksim/tasksim/sim"
)

// NewCmdReport builds tasksim report: reports from the files of earlier
// load runs.
func NewCmdReport(st *State) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "report",
		Short: "Merge interval logs and render HTML reports of tasksim load runs; merge tasksim sim partitions",
		Long: `Work on the outputs of tasksim load runs: merge the --hlog interval logs of
several runs or machines into one (tasksim report merge), or render the HTML
report of a --json result (tasksim report html). Merge the --json results of
tasksim sim partitions into one (tasksim report sim-merge).`,
		Args: cobra.NoArgs,
		RunE: needSubcommand,
	}
	cmd.AddCommand(newCmdReportMerge(st), newCmdReportHTML(st), newCmdReportSimMerge(st))
	return cmd
}

func newCmdReportMerge(st *State) *cobra.Command {
	var out string
	var width time.Duration
	cmd := &cobra.Command{
		Use:   "merge -o OUT.hlog A.hlog B.hlog ...",
		Short: "Merge HdrHistogram interval logs exactly",
		Long: `Merge the interval logs (tasksim load --hlog) of several runs or load
generators into one: the histograms with the same tag (MODE.METRIC) whose
interval starts in the same slot of --interval are added up. Percentiles are
never averaged: the merged log's totals are the histograms of all the inputs
together, as if one generator had done all the work.`,
		Example: `  tasksim report merge -o all.hlog part-0.hlog part-1.hlog part-2.hlog`,
		Args:    cobra.MinimumNArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			if out == "" {
				return usagef("give the merged log's file with -o")
			}
			if width < time.Millisecond {
				return usagef("--interval %v: want at least 1ms", width)
			}
			logs := make([]io.Reader, len(args))
			for i, name := range args {
				b, err := readInput(name)
				if err != nil {
					return err
				}
				if err := checkHlog(b); err != nil {
					return usagef("%s: not an interval log: %v", name, err)
				}
				logs[i] = bytes.NewReader(b)
			}
			var buf bytes.Buffer
			if err := load.MergeHlogs(&buf, width, logs...); err != nil {
				return usagef("%v", err)
			}
			return writeBytes(st, out, buf.Bytes())
		},
	}
	cmd.Flags().StringVarP(&out, "output", "o", "", `write the merged log to FILE ("-": stdout)`)
	cmd.Flags().DurationVar(&width, "interval", load.DefaultInterval, "width of the merged intervals")
	return cmd
}

func newCmdReportHTML(st *State) *cobra.Command {
	var out string
	cmd := &cobra.Command{
		Use:   "html [-o FILE] RESULT.json",
		Short: "Render the HTML report of a tasksim load --json result",
		Long: `Render the self-contained HTML report (plots, table, configuration) of a result written by tasksim load --json, as tasksim load --html does.

Without -o the report goes next to the result, RESULT.json -> RESULT.html,
and an existing file of that name is left alone (exit 2): name it with -o to
replace it.`,
		Example: `  tasksim report html run.json             # writes run.html
  tasksim report html -o report.html run.json`,
		Args: cobra.ExactArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			if out == "" {
				out = strings.TrimSuffix(args[0], ".json") + ".html"
				if _, err := os.Lstat(out); err == nil {
					return usagef("%s exists: give -o %s to replace it, or another file", out, out)
				}
			}
			b, err := readInput(args[0])
			if err != nil {
				return err
			}
			var res load.Result
			if err := json.Unmarshal(b, &res); err != nil {
				return usagef("%s: not a tasksim load result: %v", args[0], err)
			}
			if len(res.Modes) == 0 {
				return usagef("%s: not a tasksim load result: no modes", args[0])
			}
			var buf bytes.Buffer
			// Writing to memory cannot fail: an error is about the result.
			if err := load.HTMLReporter(&res)(&buf); err != nil {
				return usagef("%s: %v", args[0], err)
			}
			if err := writeBytes(st, out, buf.Bytes()); err != nil {
				return err
			}
			if out != "-" {
				fmt.Fprintln(st.Stdout, "report: "+out)
			}
			return nil
		},
	}
	cmd.Flags().StringVarP(&out, "output", "o", "", `write the report to FILE ("-": stdout; default: RESULT.html beside RESULT.json, never replaced)`)
	return cmd
}

func newCmdReportSimMerge(st *State) *cobra.Command {
	var out string
	cmd := &cobra.Command{
		Use:   "sim-merge [-o FILE] RESULT.json ...",
		Short: "Merge the --json results of tasksim sim partitions into one",
		Long: `Merge the results (tasksim sim --partition I/N --json FILE, schema
tasksim.sim/v1) of the partitions of a seed range into the result of the
whole range: seeds, runs, failures by rule, faults applied, the failing
seeds. The merge is the result one run of the whole range writes, but for
the wall time (added up) and shrinking (each partition shrinks the first
failure of each rule it met). Partitions must not share a seed.

Prints the failing seeds and the summary, as tasksim sim does; -o also
writes the merged result. Exit codes: 0 no run failed, 1 a run failed a
rule, 2 an input that is not a tasksim sim result, or partitions that
overlap.`,
		Example: `  tasksim report sim-merge -o all.json part-0.json part-1.json part-2.json`,
		Args:    cobra.MinimumNArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			reports := make([]sim.Report, len(args))
			for i, name := range args {
				b, err := readInput(name)
				if err != nil {
					return err
				}
				if reports[i], err = sim.ParseReport(name, b); err != nil {
					return &UsageError{Err: err}
				}
			}
			merged, err := sim.MergeReports(reports)
			if err != nil {
				return usagef("%v", err)
			}
			if out != "" {
				if err := writeOutput(st, out, func(w io.Writer) error { return writeJSON(w, merged) }); err != nil {
					return fmt.Errorf("write output: %w", err)
				}
			}
			if out != "-" {
				for _, f := range merged.Failures {
					fmt.Fprintf(st.Stdout, "seed %d: FAIL %s: %s\n", f.Seed, strings.Join(f.Rules, ","), f.Finding)
				}
				fmt.Fprintf(st.Stdout, "seeds %s\n", sim.SeedsText(merged.Seeds))
				if err := merged.Summary.WriteText(st.Stdout); err != nil {
					return fmt.Errorf("write: %w", err)
				}
			}
			if merged.Summary.Failures > 0 {
				return &FindingsError{Summary: fmt.Sprintf("%d of %d runs failed a rule", merged.Summary.Failures, merged.Summary.Runs)}
			}
			return nil
		},
	}
	cmd.Flags().StringVarP(&out, "output", "o", "", `also write the merged result to FILE ("-": stdout, instead of the text)`)
	return cmd
}

// readInput reads an input file; a missing or unreadable one is bad input.
func readInput(name string) ([]byte, error) {
	f, err := openInput(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(f)
	if err != nil {
		return nil, fmt.Errorf("read input: %w", err)
	}
	return b, nil
}

// checkHlog reports whether b is an interval log with at least one
// interval.
func checkHlog(b []byte) error {
	n := 0
	for _, err := range load.HlogIntervals(bytes.NewReader(b)) {
		if err != nil {
			return err
		}
		n++
	}
	if n == 0 {
		return errors.New("no interval histograms")
	}
	return nil
}

// writeBytes writes b to the file name, or to stdout for "-".
func writeBytes(st *State, name string, b []byte) error {
	err := writeOutput(st, name, func(w io.Writer) error {
		_, err := w.Write(b)
		return err
	})
	if err != nil {
		return fmt.Errorf("write output: %w", err)
	}
	return nil
}
