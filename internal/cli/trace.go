package cli

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/tasksim/tasksim/traces"
)

// NewCmdTrace builds tasksim trace and its subcommands.
func NewCmdTrace(st *State) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "trace",
		Short: "Inspect, check, convert and redact trace files",
		Long: `Work with trace files (made by tasksim record, proxy, check and sim).

A trace is a versioned binary file: magic bytes, a header (format version,
creation time, tasksim version, command line, protocol, seed, labels), then
length-prefixed, checksummed msgpack records. docs/trace-format.md describes
it byte by byte. FILE may be "-" for stdin.

A trace cut short (its writer was killed) reads up to its last whole record:
show, stats and export print what is there and warn. A file that is not a
trace, a trace of a newer format version and a damaged trace are errors
(exit 2); trace verify reports a cut or damaged trace as a finding (exit 1).`,
		Args: cobra.NoArgs,
		RunE: needSubcommand,
	}
	cmd.AddCommand(newCmdTraceShow(st), newCmdTraceStats(st), newCmdTraceVerify(st), newCmdTraceCheck(st),
		newCmdTraceExport(st), newCmdTraceImport(st), newCmdTraceRedact(st))
	return cmd
}

// openTrace opens a trace file, or stdin for "-". Input that cannot be
// read as a trace is a usage error (bad input).
func openTrace(st *State, path string) (*traces.Reader, error) {
	var r *traces.Reader
	var err error
	if path == "-" {
		r, err = traces.NewReader(st.Stdin)
		if err != nil {
			err = fmt.Errorf("stdin: %w", err)
		}
	} else {
		r, err = traces.Open(path)
	}
	if err != nil {
		return nil, &UsageError{Err: err}
	}
	return r, nil
}

// endOfTrace turns the error that ended a trace into the command's
// result: a cut trace is a warning (its whole records were used), a
// damaged one bad input.
func endOfTrace(st *State, err error) error {
	if err == nil {
		return nil
	}
	var t *traces.TruncatedError
	var c *traces.CorruptError
	switch {
	case errors.As(err, &t):
		fmt.Fprintf(st.Stderr, "tasksim: warning: %v\n", err)
		return nil
	case errors.As(err, &c):
		return &UsageError{Err: err}
	}
	return err
}

func headerLine(h traces.Header) string {
	parts := []string{fmt.Sprintf("trace format %d", h.FormatVersion)}
	if h.TasksimVersion != "" {
		parts = append(parts, "tasksim "+h.TasksimVersion)
	}
	if !h.Created.IsZero() {
		parts = append(parts, "created "+h.Created.UTC().Format(time.RFC3339Nano))
	}
	if h.Protocol != "" {
		parts = append(parts, "protocol "+h.Protocol)
	}
	if h.Seed != 0 {
		parts = append(parts, "seed "+strconv.FormatUint(h.Seed, 10))
	}
	return strings.Join(parts, " · ")
}

// inputError makes bad input a usage error; I/O errors stay runtime ones.
func inputError(path string, err error) error {
	var le *traces.LineError
	var c *traces.CorruptError
	if errors.As(err, &le) || errors.As(err, &c) || errors.Is(err, traces.ErrNotTrace) {
		return &UsageError{Err: fmt.Errorf("%s: %w", path, err)}
	}
	return err
}

// convertTrace writes the records of src into a new trace at out. On an
// interrupt (ctx) it closes the trace, keeping what it wrote; on an
// error it leaves out as it was.
func convertTrace(ctx context.Context, st *State, out string, h traces.Header, src traces.Source, opts *traces.WriterOptions) (uint64, error) {
	f, err := createOut(out)
	if err != nil {
		return 0, err
	}
	w, err := traces.NewWriter(f, h, opts)
	if err != nil {
		f.abort()
		return 0, err
	}
	fail := func(err error) (uint64, error) {
		n := w.Written()
		w.Close()
		f.abort()
		return n, err
	}
	for rec, err := range traces.All(src) {
		if err != nil {
			if errors.Is(err, traces.ErrTruncated) {
				fmt.Fprintf(st.Stderr, "tasksim: warning: %v\n", err)
				break
			}
			return fail(err)
		}
		if ctx.Err() != nil {
			if err := w.Close(); err != nil {
				return fail(err)
			}
			if err := f.commit(); err != nil {
				return w.Written(), err
			}
			fmt.Fprintf(st.Stderr, "interrupted: wrote %d records to %s\n", w.Written(), out)
			return w.Written(), ctx.Err()
		}
		if err := w.Write(rec); err != nil {
			return fail(err)
		}
	}
	if err := w.Close(); err != nil {
		return fail(err)
	}
	if err := f.commit(); err != nil {
		return w.Written(), err
	}
	return w.Written(), nil
}
