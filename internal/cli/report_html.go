package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/tasksim/tasksim/load"
)

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
