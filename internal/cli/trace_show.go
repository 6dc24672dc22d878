package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/tasksim/tasksim/traces"
)

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
isComplete, error code), and details (among them a request head's MCP
2026-07-28 routing headers, mcp-method= and mcp-name=, a result's
resultType=, and the record's MCP revision, rev=2026-07-28 or
rev=2025-11-25, when the recorder knew it). A fault record shows what it acted on
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
