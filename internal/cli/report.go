package cli

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"
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
