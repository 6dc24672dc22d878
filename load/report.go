package load

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/tasksim/tasksim/mcp/client"
)

// TableLegend explains the table's columns in one line.
const TableLegend = "first: intended start → first content (poll and immediate: the result) · result: → whole result · " +
	"discovery: server completion → result in hand · req, bytes: per task on the wire, both directions · " +
	"cpu: server CPU per task · lag: intended → actual start"

// TableReporter writes the summary table of r: one row per mode, then the
// legend, errors, the servers and warnings.
func TableReporter(r *Result) Reporter {
	return func(w io.Writer) error {
		ew := &errWriter{w: w}
		tw := tabwriter.NewWriter(ew, 0, 0, 2, ' ', tabwriter.AlignRight)
		header, rows := r.tableRows()
		width := len(header[0])
		for _, row := range rows {
			width = max(width, len(row[0]))
		}
		for _, row := range append([][]string{header}, rows...) {
			fmt.Fprintf(tw, "%-*s\t%s\t\n", width, row[0], strings.Join(row[1:], "\t"))
		}
		if err := tw.Flush(); err != nil {
			return err
		}
		fmt.Fprintln(ew, TableLegend)
		for _, m := range r.Modes {
			if line := m.notes(); line != "" {
				fmt.Fprintln(ew, m.Name+": "+line)
			}
		}
		fmt.Fprintln(ew, r.serversLine())
		if r.ClientCPUMs > 0 || r.ClientPeakRSS > 0 {
			fmt.Fprintf(ew, "generator: %s CPU, peak memory %s, %s\n", FormatMs(r.ClientCPUMs), FormatBytes(float64(r.ClientPeakRSS)), r.Machine.summary())
		}
		if o := r.Overload; o != nil {
			fmt.Fprintf(ew, "stopped early, %s into the run: a task started %s late (bound %s): %s\n", FormatMs(o.AtMs), FormatMs(o.LagMs), FormatMs(o.MaxLagMs), o.Reason)
		}
		for _, wn := range r.Warnings {
			fmt.Fprintln(ew, "warning: "+wn)
		}
		return ew.err
	}
}

// tableRows returns the summary table's header and one row per mode: the
// text table's and the HTML report's cells.
func (r *Result) tableRows() (header []string, rows [][]string) {
	header = []string{"mode", "done", "failed", "first p50", "result p50", "result p99", "discovery mean", "discovery p99",
		"req/task", "bytes/task", "cpu/task", "lag p99"}
	for _, m := range r.Modes {
		cpu := "-"
		if m.ServerCPU != nil {
			cpu = FormatMs(m.ServerCPU.PerTaskMs)
			if m.ServerCPU.Shared {
				cpu += "*"
			}
		}
		rows = append(rows, []string{m.Name, fmt.Sprint(m.Completed), fmt.Sprint(m.Failed),
			latency(m.TTFP, m.TTFP.P50), latency(m.TTR, m.TTR.P50), latency(m.TTR, m.TTR.P99),
			latency(m.Discovery, m.Discovery.Mean) + m.discoveryMark(), latency(m.Discovery, m.Discovery.P99) + m.discoveryMark(),
			requests(m.Requests), bytesPerTask(m), cpu, latency(m.Lag, m.Lag.P99)})
	}
	if slices.ContainsFunc(r.Modes, func(m ModeResult) bool { return m.Revision.IsStateless() }) {
		header, rows = r.statelessColumns(header, rows)
	}
	return header, rows
}

// statelessColumns adds what a run with 2026-07-28 modes compares: the
// discovery delay's p50, the figure a push is judged by, and, when a
// 2026-07-28 mode polls, after the mode how its tasks/get were paced (the
// interval given, which overrides the server's pollIntervalMs, or the
// server's, honoured; a listen's only as its fallback) and one
// tasks/get's round trip (p50), a push's yardstick. 2025-11-25 modes
// show "-" in the last two.
func (r *Result) statelessColumns(header []string, rows [][]string) ([]string, [][]string) {
	polls := slices.ContainsFunc(r.Modes, func(m ModeResult) bool { return m.Revision.IsStateless() && m.Kind == KindPoll })
	at := 7 // after the discovery mean
	if polls {
		header = slices.Insert(header, 1, "tasks/get every", "get rtt p50")
		at += 2
	}
	header = slices.Insert(header, at, "discovery p50")
	for i, m := range r.Modes {
		rows[i] = slices.Insert(rows[i], 7, latency(m.Discovery, m.Discovery.P50)+m.discoveryMark())
		if !polls {
			continue
		}
		pacing, rtt := "-", "-"
		if m.Revision.IsStateless() {
			pacing = m.pacing()
		}
		if m.GetRoundTrip != nil {
			rtt = latency(*m.GetRoundTrip, m.GetRoundTrip.P50)
		}
		rows[i] = slices.Insert(rows[i], 1, pacing, rtt)
	}
	return header, rows
}

// pacing says how a 2026-07-28 mode paced its tasks/get.
func (m ModeResult) pacing() string {
	server := "?"
	if m.ServerPollIntervalMs > 0 {
		server = FormatMs(m.ServerPollIntervalMs)
	}
	switch {
	case m.Kind == KindListen:
		return "fallback only"
	case m.PollIntervalMs > 0:
		return fmt.Sprintf("%s, not server's %s", FormatMs(m.PollIntervalMs), server)
	}
	return server + " (server's)"
}

func latency(st Stats, v float64) string {
	if st.Count == 0 {
		return "-"
	}
	return FormatMs(v)
}

func requests(st Stats) string {
	if st.Count == 0 {
		return "-"
	}
	return fmt.Sprintf("%.2f", st.Mean)
}

func bytesPerTask(m ModeResult) string {
	if m.Completed+m.Failed == 0 {
		return "-"
	}
	return FormatBytes(m.Wire.BytesPerTask)
}

// expectedAnswer is how a server offering everything answers each mode.
var expectedAnswer = map[string]string{
	KindPoll: client.AnswerTask, KindPartial: client.AnswerTask, KindListen: client.AnswerTask, KindSSE: client.AnswerStreaming, KindImmediate: client.AnswerImmediate,
}

// notes lists a mode's errors, unexpected answers and stream troubles.
func (m ModeResult) notes() string {
	var parts []string
	if len(m.Errors) > 0 {
		var es []string
		for _, k := range slices.Sorted(maps.Keys(m.Errors)) {
			es = append(es, fmt.Sprintf("%d %s", m.Errors[k], k))
		}
		parts = append(parts, "errors: "+strings.Join(es, ", "))
		for _, k := range slices.Sorted(maps.Keys(m.ErrorSamples)) {
			parts = append(parts, fmt.Sprintf("first %s error: %s", k, m.ErrorSamples[k]))
		}
	}
	var other []string
	for _, a := range slices.Sorted(maps.Keys(m.Answers)) {
		if a != expectedAnswer[m.Kind] {
			other = append(other, fmt.Sprintf("%d %s", m.Answers[a], a))
		}
	}
	if len(other) > 0 {
		parts = append(parts, "answered "+strings.Join(other, ", ")+" (fallback)")
	}
	if n := m.DiscoveryFromLastUpdated; n > 0 {
		parts = append(parts, fmt.Sprintf("%s discovery from the task's lastUpdatedAt for %d of %d tasks (the server's resolution, often 1 ms), the rest from the result's completion time", DiscoveryMark, n, m.Discovery.Count))
	}
	if m.ListenFallbacks > 0 {
		parts = append(parts, fmt.Sprintf("%d of %d listens fell back to tasks/get (the listen failed, was refused or ended before the task's end)", m.ListenFallbacks, m.Started))
	}
	if m.Gaps+m.DataLoss+m.StreamsLost > 0 {
		parts = append(parts, fmt.Sprintf("%d seqNr gaps, %d partials lost, %d streams lost, %d resumes", m.Gaps, m.DataLoss, m.StreamsLost, m.Resumes))
	}
	return strings.Join(parts, "; ")
}

// DiscoveryMark follows a discovery figure measured, for some or all of
// the mode's tasks, from the terminal task's lastUpdatedAt rather than the
// result's dev.tasksim/completed-at.
const DiscoveryMark = "†"

func (m ModeResult) discoveryMark() string {
	if m.DiscoveryFromLastUpdated > 0 {
		return DiscoveryMark
	}
	return ""
}

// serversLine says where the servers ran and whether CPU was measured.
func (r *Result) serversLine() string {
	var parts []string
	shared := false
	for _, t := range r.Targets {
		s := t.Label
		if s == "" {
			s = t.URL
		}
		if len(r.Targets) > 1 {
			s = strings.Join(t.Modes, ",") + " on " + s
		} else {
			shared = len(t.Modes) > 1 && t.CPUMeasured
		}
		if !t.CPUMeasured {
			s += " (server CPU not measured)"
		}
		parts = append(parts, s)
	}
	line := "servers: " + strings.Join(parts, "; ")
	if len(r.Targets) == 1 {
		line = "server: " + parts[0]
	}
	if shared {
		line += " · *cpu/task: one server for every mode, its CPU over all their tasks"
	}
	return line
}

// errWriter keeps the first write error and drops later writes.
type errWriter struct {
	w   io.Writer
	err error
}

func (e *errWriter) Write(p []byte) (int, error) {
	if e.err != nil {
		return 0, e.err
	}
	n, err := e.w.Write(p)
	e.err = err
	return n, err
}
