package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
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

// TraceShowOptions are the flags of tasksim trace show.
type TraceShowOptions struct {
	JSON   bool
	Kinds  []string
	Stream string
}

func newCmdTraceShow(st *State) *cobra.Command {
	o := &TraceShowOptions{}
	cmd := &cobra.Command{
		Use:   "show FILE",
		Short: "Print a trace as a timeline",
		Long: `Print a trace as a timeline, one record a line: time since the start, connection,
stream, direction, kind, JSON-RPC method (or HTTP request line), id, task,
seqNr (SEP-1905) or seq (SEP-2679), status (HTTP status, task status,
isComplete, error code), and details. A fault record shows what it acted on
in those columns and the whole fault in its details: name, parameters,
target and action. Behind a fault layer, DIR says on which side a record
was observed ("s>c/server": as the server sent it, "s>c/client": as the
client got it).

--json prints {"header":…, "records":[…]} with the records in their JSONL
export form.`,
		Example: `  tasksim trace show run.trace
  tasksim trace show run.trace --kind message,sse-event
  tasksim trace show run.trace --json | jq '.records[] | select(.rpc.taskId != null)'`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runTraceShow(cmd.Context(), st, o, args[0])
		},
	}
	f := cmd.Flags()
	f.BoolVar(&o.JSON, "json", false, "print the header and records as JSON")
	f.StringSliceVar(&o.Kinds, "kind", nil, "show only these record kinds (message, sse-event, request-head, ...)")
	f.StringVar(&o.Stream, "stream", "", "show only this stream (post:3, get:4, stdin, stdout)")
	return cmd
}

func runTraceShow(ctx context.Context, st *State, o *TraceShowOptions, path string) error {
	keep := map[traces.Kind]bool{}
	for _, k := range o.Kinds {
		kind, ok := traces.ParseKind(strings.TrimSpace(k))
		if !ok {
			return usagef("--kind: unknown record kind %q", k)
		}
		keep[kind] = true
	}
	r, err := openTrace(st, path)
	if err != nil {
		return err
	}
	defer r.Close()
	selected := func(rec traces.Record) bool {
		return (len(keep) == 0 || keep[rec.Kind]) && (o.Stream == "" || rec.Stream == o.Stream)
	}
	if o.JSON {
		return showJSON(ctx, st, r, selected)
	}
	h := r.Header()
	fmt.Fprintf(st.Stdout, "# %s\n", headerLine(h))
	if len(h.Command) > 0 {
		fmt.Fprintf(st.Stdout, "# command: %s\n", strings.Join(h.Command, " "))
	}
	for _, l := range h.Labels {
		fmt.Fprintf(st.Stdout, "# %s: %s\n", l.Key, l.Value)
	}
	if f := h.Faults; f != nil {
		for _, spec := range f.Specs {
			fmt.Fprintf(st.Stdout, "# fault: %s\n", spec)
		}
		for _, d := range f.Decisions {
			fmt.Fprintf(st.Stdout, "# fault decision: %s\n", d)
		}
		if f.Note != "" {
			fmt.Fprintf(st.Stdout, "# faults: %s\n", f.Note)
		}
	}
	tw := tabwriter.NewWriter(st.Stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, strings.Join(traces.TimelineColumns(), "\t"))
	n := 0
	end, err := eachSelected(ctx, r, selected, func(rec traces.Record) error {
		fmt.Fprintln(tw, strings.Join(traces.TimelineRow(rec), "\t"))
		if n++; n%512 == 0 {
			return tw.Flush()
		}
		return nil
	})
	if err == nil {
		err = tw.Flush()
	}
	if err != nil {
		return fmt.Errorf("write: %w", err)
	}
	return endOfTrace(st, end)
}

// eachSelected calls f with each record of r that keep selects, in order.
// It returns what ended the trace early, a read error or ctx being done,
// as end, and the error of f, which stops it, as err.
func eachSelected(ctx context.Context, r *traces.Reader, keep func(traces.Record) bool, f func(traces.Record) error) (end, err error) {
	for rec, rerr := range r.Records() {
		if rerr != nil {
			return rerr, nil
		}
		if cerr := ctx.Err(); cerr != nil {
			return cerr, nil
		}
		if keep(rec) {
			if err := f(rec); err != nil {
				return nil, err
			}
		}
	}
	return nil, nil
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

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// showJSON streams {"header":…,"records":[…]} so a long trace needs no
// memory.
func showJSON(ctx context.Context, st *State, r *traces.Reader, selected func(traces.Record) bool) error {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	buf.WriteString(`{"header":`)
	enc.Encode(traces.HeaderJSON(r.Header()))
	buf.WriteString(`,"records":[`)
	first := true
	end, err := eachSelected(ctx, r, selected, func(rec traces.Record) error {
		if !first {
			buf.WriteByte(',')
		}
		first = false
		buf.WriteByte('\n')
		if err := enc.Encode(traces.RecordJSON(rec)); err != nil {
			return err
		}
		buf.Truncate(buf.Len() - 1) // the encoder's newline
		if buf.Len() > 64<<10 {
			if _, err := st.Stdout.Write(buf.Bytes()); err != nil {
				return err
			}
			buf.Reset()
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("write JSON: %w", err)
	}
	buf.WriteString("\n]")
	var t *traces.TruncatedError
	if errors.As(end, &t) {
		fmt.Fprintf(&buf, `,"truncated":{"index":%d,"offset":%d}`, t.Index, t.Offset)
	}
	buf.WriteString("}\n")
	if _, err := st.Stdout.Write(buf.Bytes()); err != nil {
		return fmt.Errorf("write JSON: %w", err)
	}
	return endOfTrace(st, end)
}

// TraceStatsOptions are the flags of tasksim trace stats.
type TraceStatsOptions struct {
	JSON bool
}

func newCmdTraceStats(st *State) *cobra.Command {
	o := &TraceStatsOptions{}
	cmd := &cobra.Command{
		Use:   "stats FILE",
		Short: "Summarise a trace: records by kind, methods, tasks, bytes, duration",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runTraceStats(st, o, args[0])
		},
	}
	cmd.Flags().BoolVar(&o.JSON, "json", false, "print the summary as JSON")
	return cmd
}

func runTraceStats(st *State, o *TraceStatsOptions, path string) error {
	r, err := openTrace(st, path)
	if err != nil {
		return err
	}
	defer r.Close()
	s, end := traces.Summarize(r)
	var t *traces.TruncatedError
	cut := errors.As(end, &t)
	if end != nil && !cut {
		return endOfTrace(st, end)
	}
	if o.JSON {
		out := map[string]any{"file": path, "header": traces.HeaderJSON(r.Header()), "stats": s, "truncated": nil}
		if cut {
			out["truncated"] = map[string]any{"index": t.Index, "offset": t.Offset}
		}
		if err := writeJSON(st.Stdout, out); err != nil {
			return err
		}
		return endOfTrace(st, end)
	}
	w := &errWriter{w: st.Stdout}
	w.printf("trace      %s (%s)\n", path, headerLine(r.Header()))
	w.printf("records    %d over %v\n", s.Records, s.Duration.Round(time.Microsecond))
	w.printf("traffic    %d conns, %d HTTP exchanges, %d streams, %d tasks\n", s.Conns, s.Exchanges, s.Streams, s.Tasks)
	w.printf("bytes      %d raw (%d client to server, %d server to client)\n", s.RawBytes, s.ClientBytes, s.ServerBytes)
	w.printf("kinds      %s\n", countList(s.Kinds))
	w.printf("methods    %s\n", countList(s.Methods))
	w.printf("responses  %d (%d errors)\n", s.Responses, s.ErrorResponses)
	statuses := map[string]int{}
	for code, n := range s.Statuses {
		statuses[strconv.Itoa(code)] = n
	}
	w.printf("http       %s\n", countList(statuses))
	w.printf("streaming  %d seqNr segments (SEP-1905), %d partial notifications (SEP-2679)\n", s.Segments, s.Partials)
	if w.err != nil {
		return fmt.Errorf("write: %w", w.err)
	}
	return endOfTrace(st, end)
}

// countList renders counts as "a 3, b 1", most first.
func countList(m map[string]int) string {
	if len(m) == 0 {
		return "-"
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b string) int {
		if m[a] != m[b] {
			return m[b] - m[a]
		}
		return strings.Compare(a, b)
	})
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s %d", dash(k), m[k])
	}
	return strings.Join(parts, ", ")
}

type errWriter struct {
	w   io.Writer
	err error
}

func (e *errWriter) printf(format string, args ...any) {
	if e.err == nil {
		_, e.err = fmt.Fprintf(e.w, format, args...)
	}
}

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

// writeOutput runs write on stdout ("-") or on the file at path, which
// is replaced only when write succeeds (see outFile).
func writeOutput(st *State, path string, write func(io.Writer) error) error {
	if path == "-" || path == "" {
		return write(st.Stdout)
	}
	f, err := createOut(path)
	if err != nil {
		return err
	}
	if err := write(f); err != nil {
		f.abort()
		return err
	}
	return f.commit()
}

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

// same reports whether two paths name the same file.
func same(a, b string) bool {
	fa, err1 := os.Stat(a)
	fb, err2 := os.Stat(b)
	if err1 == nil && err2 == nil {
		return os.SameFile(fa, fb)
	}
	aa, _ := filepath.Abs(a)
	ab, _ := filepath.Abs(b)
	return aa == ab
}

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
