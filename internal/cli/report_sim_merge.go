package cli

import (
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/tasksim/tasksim/sim"
)

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
