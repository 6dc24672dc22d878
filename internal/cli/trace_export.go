package cli

import (
	"errors"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/tasksim/tasksim/traces"
)

// TraceExportOptions are the flags of tasksim trace export.
type TraceExportOptions struct {
	Format string
	Output string
}

func newCmdTraceExport(st *State) *cobra.Command {
	o := &TraceExportOptions{}
	cmd := &cobra.Command{
		Use:   "export FILE --format jsonl|har",
		Short: "Convert a trace to JSON lines or to a HAR 1.2 log",
		Long: `Convert a trace for other tools.

jsonl  a header line {"header":{…}}, then one record a line with stable field
       names (index, offsetNs, wall, conn, exchange, stream, dir, kind, raw or
       rawB64, http, sse, rpc, note) for jq and grep; tasksim trace import reads
       it back.
har    HAR 1.2, one entry per HTTP exchange; an SSE response's events are its
       content text, and "_sseEvents" lists them with their times. A trace
       without HTTP exchanges (stdio) cannot be exported as HAR (exit 2).`,
		Example: `  tasksim trace export run.trace --format jsonl | jq 'select(.kind=="message") | .rpc.method'
  tasksim trace export run.trace --format har -o run.har`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runTraceExport(st, o, args[0])
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.Format, "format", "jsonl", "jsonl or har")
	f.StringVarP(&o.Output, "output", "o", "-", `output file ("-": stdout)`)
	return cmd
}

func runTraceExport(st *State, o *TraceExportOptions, path string) error {
	var write func(io.Writer, traces.Header, traces.Source) error
	switch o.Format {
	case "jsonl":
		write = traces.WriteJSONL
	case "har":
		write = traces.WriteHAR
	default:
		return usagef("--format %q: want jsonl or har", o.Format)
	}
	if path != "-" && o.Output != "-" && o.Output != "" && same(path, o.Output) {
		return usagef("-o %s is the input file", o.Output)
	}
	r, err := openTrace(st, path)
	if err != nil {
		return err
	}
	defer r.Close()
	// A cut trace exports its whole records; the cut is reported after.
	src := &cutSource{src: r}
	err = writeOutput(st, o.Output, func(w io.Writer) error { return write(w, r.Header(), src) })
	if errors.Is(err, traces.ErrNoHTTP) {
		return &UsageError{Err: fmt.Errorf("%s: %w", path, err)}
	}
	if err != nil {
		return endOfTrace(st, err)
	}
	return endOfTrace(st, src.cut)
}

// cutSource ends at a truncation as at io.EOF and keeps the error.
type cutSource struct {
	src traces.Source
	cut error
}

func (c *cutSource) Next() (traces.Record, error) {
	rec, err := c.src.Next()
	if errors.Is(err, traces.ErrTruncated) {
		c.cut = err
		return rec, io.EOF
	}
	return rec, err
}
