package cli

import (
	"context"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/tasksim/tasksim/traces"
)

// TraceImportOptions are the flags of tasksim trace import.
type TraceImportOptions struct {
	Output string
}

func newCmdTraceImport(st *State) *cobra.Command {
	o := &TraceImportOptions{}
	cmd := &cobra.Command{
		Use:   "import [FILE.jsonl] -o FILE.trace",
		Short: "Turn a JSONL export (hand-edited, say) back into a trace",
		Long: `Read the JSONL form of a trace (tasksim trace export --format jsonl) and write a
trace, so that an edited trace can be replayed. Records are numbered again in
line order; their times are kept. A record without "rpc" gets its JSON-RPC
fields derived from its raw text. Without a header line the trace gets a new
header. FILE defaults to stdin.`,
		Example: `  tasksim trace export run.trace | jq -c 'select(.kind != "fault")' | tasksim trace import -o edited.trace`,
		Args:    cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			in := "-"
			if len(args) == 1 {
				in = args[0]
			}
			return runTraceImport(cmd.Context(), st, o, in)
		},
	}
	cmd.Flags().StringVarP(&o.Output, "output", "o", "", "trace file to write (required)")
	return cmd
}

func runTraceImport(ctx context.Context, st *State, o *TraceImportOptions, path string) error {
	if o.Output == "" || o.Output == "-" {
		return usagef("-o FILE is required (a trace is binary)")
	}
	var in io.Reader = st.Stdin
	if path != "-" {
		if same(path, o.Output) {
			return usagef("-o %s is the input file", o.Output)
		}
		f, err := openInput(path)
		if err != nil {
			return err
		}
		defer f.Close()
		in = f
	}
	jr, err := traces.NewJSONLReader(in)
	if err != nil {
		return inputError(path, err)
	}
	h := jr.Header()
	if h.Created.IsZero() && h.TasksimVersion == "" && len(h.Command) == 0 {
		h = traces.Header{TasksimVersion: Version, Command: append([]string{"tasksim"}, st.Args...)}
	}
	n, err := convertTrace(ctx, st, o.Output, h, jr, &traces.WriterOptions{KeepTimes: true})
	if err != nil {
		return inputError(path, err)
	}
	fmt.Fprintf(st.Stderr, "imported %d records into %s\n", n, o.Output)
	return nil
}
