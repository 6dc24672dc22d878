package cli

import (
	"fmt"
	"io"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/tasksim/tasksim/traces"
)

// TraceVerifyOptions are the flags of tasksim trace verify.
type TraceVerifyOptions struct {
	JSON bool
}

func newCmdTraceVerify(st *State) *cobra.Command {
	o := &TraceVerifyOptions{}
	cmd := &cobra.Command{
		Use:   "verify FILE",
		Short: "Check every record of a trace; report where it is cut or damaged",
		Long: `Read a whole trace and check every frame's length and checksum and every
record's index.

Exit codes: 0 the trace is whole, 1 it is cut short (a killed writer) or damaged
(the report says at which record and byte), 2 the file is not a trace or has a
newer format version.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runTraceVerify(st, o, args[0])
		},
	}
	cmd.Flags().BoolVar(&o.JSON, "json", false, "print the report as JSON")
	return cmd
}

func runTraceVerify(st *State, o *TraceVerifyOptions, path string) error {
	var in io.Reader = st.Stdin
	if path != "-" {
		f, err := os.Open(path)
		if err != nil {
			return &UsageError{Err: err}
		}
		defer f.Close()
		in = f
	}
	v, err := traces.Verify(in)
	if err != nil {
		// Not a trace, a newer format version, or unreadable: bad input.
		return &UsageError{Err: fmt.Errorf("%s: %w", path, err)}
	}
	var problem string
	switch {
	case v.Truncated != nil:
		problem = v.Truncated.Error()
	case v.Corrupt != nil:
		problem = v.Corrupt.Error()
	}
	if o.JSON {
		out := map[string]any{"schema": "tasksim.trace-verify/v1", "file": path, "ok": v.OK(), "records": v.Records, "size": v.Size,
			"durationNs": v.Duration, "truncated": nil, "corrupt": nil}
		if t := v.Truncated; t != nil {
			out["truncated"] = map[string]any{"index": t.Index, "offset": t.Offset, "inHeader": t.Header}
		}
		if c := v.Corrupt; c != nil {
			out["corrupt"] = map[string]any{"index": c.Index, "offset": c.Offset, "reason": c.Reason, "inHeader": c.Header}
		}
		if err := writeJSON(st.Stdout, out); err != nil {
			return err
		}
	} else {
		status := "ok"
		if problem != "" {
			status = problem
		}
		if _, err := fmt.Fprintf(st.Stdout, "%s: %s; %d whole records, %d valid bytes, last at +%v\n",
			path, status, v.Records, v.Size, v.Duration.Round(time.Microsecond)); err != nil {
			return fmt.Errorf("write: %w", err)
		}
	}
	if problem != "" {
		return &FindingsError{Summary: path + ": " + problem}
	}
	return nil
}
