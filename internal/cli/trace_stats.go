package cli

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/tasksim/tasksim/traces"
)

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
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
