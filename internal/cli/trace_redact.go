package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"slices"

	"github.com/spf13/cobra"

	"github.com/tasksim/tasksim/traces"
)

// TraceRedactOptions are the flags of tasksim trace redact.
type TraceRedactOptions struct {
	Output    string
	Headers   []string
	JSONPaths []string
	Patterns  []string
	RedactFlags
}

func newCmdTraceRedact(st *State) *cobra.Command {
	o := &TraceRedactOptions{}
	cmd := &cobra.Command{
		Use:   "redact FILE -o OUT",
		Short: "Replace secrets in a trace by stable tokens",
		Long: `Write a copy of a trace with secrets replaced by tokens "[redacted:N]": the same
secret gets the same token throughout the trace, so the redacted trace still
replays and still shows which requests shared a credential.

Always redacted: the values of Authorization, Proxy-Authorization, Cookie and
Set-Cookie header fields. Add header names with --redact-header, values in
JSON text (JSON-RPC messages, SSE data, stdio lines, HTTP bodies) with
--redact-json, and anything matching a regular expression with
--redact-regexp (a pattern with a capture group replaces the group only): the
flags of tasksim record. The old names --header, --json-path and --pattern
still work, deprecated.

JSON paths: params.arguments.apiKey, result.content[*].text, $..password,
params._meta["example.com/token"].`,
		Example: `  tasksim trace redact run.trace -o shared.trace --redact-header X-Api-Key \
      --redact-json params.arguments.password --redact-regexp 'sk-[A-Za-z0-9]{20,}'`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runTraceRedact(cmd.Context(), st, o, args[0])
		},
	}
	f := cmd.Flags()
	f.StringVarP(&o.Output, "output", "o", "", "trace file to write (required)")
	// The flags tasksim record takes; the old names still work, with a
	// deprecation note (--header now means a header to send elsewhere).
	AddRedactFlags(f, &o.RedactFlags)
	f.StringArrayVar(&o.Headers, "header", nil, "")
	f.StringArrayVar(&o.JSONPaths, "json-path", nil, "")
	f.StringArrayVar(&o.Patterns, "pattern", nil, "")
	_ = f.MarkDeprecated("header", "use --redact-header, as tasksim record does")
	_ = f.MarkDeprecated("json-path", "use --redact-json, as tasksim record does")
	_ = f.MarkDeprecated("pattern", "use --redact-regexp, as tasksim record does")
	return cmd
}

func runTraceRedact(ctx context.Context, st *State, o *TraceRedactOptions, path string) error {
	if o.Output == "" || o.Output == "-" {
		return usagef("-o FILE is required (a trace is binary)")
	}
	if path != "-" && same(path, o.Output) {
		return usagef("-o %s is the input file", o.Output)
	}
	rf := RedactFlags{Headers: append(o.RedactFlags.Headers, o.Headers...), JSONPaths: append(o.RedactFlags.JSONPaths, o.JSONPaths...),
		Patterns: append(o.RedactFlags.Patterns, o.Patterns...)}
	red, err := traces.NewRedactor(traces.RedactOptions{Headers: rf.Headers, JSONPaths: rf.JSONPaths, Patterns: rf.Patterns})
	if err != nil {
		return usagef("%v", err)
	}
	// Two passes: the first notes the tokens an earlier redaction left,
	// so new tokens do not reuse their numbers.
	open := func() (*traces.Reader, error) { return openTrace(st, path) }
	if path == "-" {
		data, err := io.ReadAll(st.Stdin)
		if err != nil {
			return fmt.Errorf("read stdin: %w", err)
		}
		open = func() (*traces.Reader, error) {
			r, err := traces.NewReader(bytes.NewReader(data))
			if err != nil {
				return nil, &UsageError{Err: fmt.Errorf("stdin: %w", err)}
			}
			return r, nil
		}
	}
	r, err := open()
	if err != nil {
		return err
	}
	h := r.Header()
	red.ObserveHeader(&h)
	for rec, err := range r.Records() {
		if err != nil {
			if !errors.Is(err, traces.ErrTruncated) {
				r.Close()
				return inputError(path, err)
			}
			break
		}
		red.Observe(&rec)
	}
	r.Close()
	if r, err = open(); err != nil {
		return err
	}
	defer r.Close()
	h = r.Header()
	if mark := (traces.Label{Key: "redacted", Value: "tasksim trace redact"}); !slices.Contains(h.Labels, mark) {
		h.Labels = append(h.Labels, mark)
	}
	n, err := convertTrace(ctx, st, o.Output, h, r, &traces.WriterOptions{Redactor: red, KeepTimes: true})
	if err != nil {
		return inputError(path, err)
	}
	fmt.Fprintf(st.Stderr, "redacted %d records into %s\n", n, o.Output)
	return nil
}
