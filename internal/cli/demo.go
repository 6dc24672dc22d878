package cli

import (
	"context"
	"fmt"
	"html/template"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/tasksim/tasksim/load"
)

// Demo workload: six ways of getting a task's result in two protocol
// revisions, on the same schedule, against the reference server (which
// serves both on one endpoint): 2025-11-25 polling and the two streaming
// drafts, and 2026-07-28's polling and push (a 2025-11-25 run, where
// poll:1s@2026-07-28 and listen speak 2026-07-28, load.ModeSpec).
const (
	demoModes = "poll:1s,poll:100ms,sse,partial," + demoPoll2026 + ",listen"
	// demoPoll2026 is 2026-07-28's polling at 2025-11-25's 1 s: the same
	// discovery delay, fewer requests (tasks/get inlines the result).
	demoPoll2026 = "poll:1s@2026-07-28"
	// demoModesServer are the modes of demo --server: 2025-11-25's.
	demoModesServer = "poll:1s,poll:100ms,sse,partial"
	demoRate        = 20
	demoDuration    = 20 * time.Second
	demoRampUp      = 2 * time.Second
	demoChunks      = "10"
	// A 50-150 ms interval makes tasks of 0.5 to 1.5 s: their completion
	// falls anywhere in a 1 s poll interval, as polling theory assumes.
	demoInterval = "50ms..150ms"
	// demoMaxLag is lenient: the demo's light load should not fail on a
	// machine that is busy for a moment; the lag is still reported.
	demoMaxLag = 5 * time.Second
	// demoHTML is where the demo writes its HTML report.
	demoHTML = "tasksim-demo.html"
)

// demoLesson is what the demo compares, mode by mode, and what to watch:
// printed before the table and opening the HTML report.
var demoLesson = struct {
	lead, leadServer string
	modes            [][2]string
	watch            string
}{
	lead:       "What this compares: six ways for a client to get a long-running tool call's result, in two protocol revisions, on one server and one schedule.",
	leadServer: "What this compares: four ways for a client to get a long-running tool call's result, on one server and one schedule.",
	modes: [][2]string{
		{"poll:1s, poll:100ms", "MCP Tasks (2025-11-25): the call returns a task; the client polls tasks/get every 1 s or every 100 ms, then fetches tasks/result"},
		{"sse", "SEP-1905 streaming: the server sends the result as numbered segments (seqNr) on the call's own SSE stream, the last one complete"},
		{"partial", "SEP-2679 partials: the server pushes notifications/tasks/partial (seq) as content is made; tasks/result fetches the whole"},
		{demoPoll2026, "MCP 2026-07-28 with the tasks extension: the same polling of tasks/get every 1 s, whose answer inlines the result (no tasks/result)"},
		{"listen", "MCP 2026-07-28 with the tasks extension: the client opens subscriptions/listen naming the task, and the server pushes notifications/tasks, the last one with the result inlined"},
	},
	watch: "Watch discovery delay, from the task's completion on the server to the result in the client's hand: " +
		"polling pays half its interval on average (P/2), push pays almost nothing, and faster polling buys it back only with more requests.",
}

// demoLessonFor is the lesson's lead and modes for a demo with or
// without 2026-07-28 (demo --server leaves it out).
func demoLessonFor(rev2026 bool) (string, [][2]string) {
	if rev2026 {
		return demoLesson.lead, demoLesson.modes
	}
	var modes [][2]string
	for _, m := range demoLesson.modes {
		if m[0] != load.KindListen && m[0] != demoPoll2026 {
			modes = append(modes, m)
		}
	}
	return demoLesson.leadServer, modes
}

// demoIntro is the lesson as text, before the table.
func demoIntro(rev2026 bool) string {
	lead, modes := demoLessonFor(rev2026)
	var b strings.Builder
	b.WriteString(lead + "\n")
	for _, m := range modes {
		fmt.Fprintf(&b, "  %-20s %s\n", m[0], m[1])
	}
	b.WriteString(demoLesson.watch + "\n\n")
	return b.String()
}

// demoHTMLIntro is the lesson as the HTML report's opening.
func demoHTMLIntro(rev2026 bool) template.HTML {
	lead, modes := demoLessonFor(rev2026)
	var b strings.Builder
	fmt.Fprintf(&b, "<p class=\"intro\">%s</p>\n<table class=\"kv\">\n", template.HTMLEscapeString(lead))
	for _, m := range modes {
		fmt.Fprintf(&b, "<tr><td>%s</td><td>%s</td></tr>\n", template.HTMLEscapeString(m[0]), template.HTMLEscapeString(m[1]))
	}
	fmt.Fprintf(&b, "</table>\n<p class=\"intro\">%s</p>\n", template.HTMLEscapeString(demoLesson.watch))
	return template.HTML(b.String())
}

// NewCmdDemo builds tasksim demo.
func NewCmdDemo(st *State) *cobra.Command {
	o := &LoadOptions{}
	simSeeds := demoSimSeeds
	cmd := &cobra.Command{
		Use:   "demo",
		Short: "Compare polling, SEP-1905 streaming, SEP-2679 partials and 2026-07-28 push on the reference server, then faults in the simulator (about 25 s once built)",
		Long: `Start the reference server (one child process on 127.0.0.1, shared by every
mode; --in-process: inside this process) and compare six ways of getting a
task's result on the same schedule, interleaved on that one server: in MCP
2025-11-25, polling tasks/get every second and every 100 ms, SEP-1905
streaming (sse) and SEP-2679 partial notifications; in MCP 2026-07-28,
polling tasks/get every second (poll:1s@2026-07-28) and push through
subscriptions/listen (listen; both left out with --server, which keeps to
2025-11-25). Each mode gets 20 tasks/s for 20 s; each task
is 10 chunks, one every 50-150 ms (0.5-1.5 s in all). It first prints what
is compared and why discovery delay is the number to watch. Then the table:
how long until the first content and the whole result, how late the client
learns of the result (discovery delay), what it cost in requests, bytes and
server CPU (the shared server's, per task over all modes, marked *). Write the
same with plots to tasksim-demo.html (--html) and print its path.

Then the fault half (not with --server, where stderr says it is skipped):
tasksim sim over 200 seeds (at most 15 s; --sim-seeds), the reference client
and server in one process under fault schedules drawn from every in-process
fault, judged by the rule catalog. Print its summary and a verdict table per rule, and put the
timeline of the run where the faults did most (calls recovered after them)
in the report.

It is tasksim load with fixed flags; see tasksim load --help to vary them.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			target := "reference server on 127.0.0.1"
			if o.Server != "" {
				target = redactURL(o.Server, nil)
				// A server of 2025-11-25 alone would fail the whole run on
				// the 2026-07-28 modes' connections: the demo of any server
				// stays the one era it is sure to speak.
				o.Modes, o.Intro, o.HTMLIntro = demoModesServer, demoIntro(false), demoHTMLIntro(false)
				fmt.Fprintf(st.Stderr, "demo: %s and listen (2026-07-28) are left out with --server; tasksim load --server URL --mode %s compares them on a server that speaks both revisions\n", demoPoll2026, demoModes)
			} else if o.Tool != "" || o.Args != "" {
				return usagef("--tool and --args need --server (the reference server's tool is slow_text)")
			}
			what := fmt.Sprintf("tasks of %s chunks every %s", o.Chunks, o.Interval)
			if o.Tool != "" {
				what = "tool " + o.Tool
			}
			o.Title = fmt.Sprintf("tasksim demo: %s, %g tasks/s each for %v (%s), %s",
				strings.ReplaceAll(o.Modes, ",", ", "), o.Rate, o.Duration, what, target)
			if simSeeds < 0 {
				return usagef("--sim-seeds %d: want 0 (no fault half) or more", simSeeds)
			}
			if simSeeds > 0 && o.Server != "" {
				fmt.Fprintf(st.Stderr, "demo: the fault half (--sim-seeds %d) is skipped with --server: it runs the reference client and server in one process, not the server given\n", simSeeds)
			}
			if simSeeds > 0 && o.Server == "" {
				o.After = func(ctx context.Context, w io.Writer) ([]load.HTMLSection, error) {
					return demoFaults(ctx, w, simSeeds, demoSimBudget)
				}
			}
			return runLoad(cmd.Context(), st, o)
		},
	}
	*o = LoadOptions{
		Modes: demoModes, Rate: demoRate, Duration: demoDuration, RampUp: demoRampUp,
		Chunks: demoChunks, ChunkSize: "32", Interval: demoInterval, Seed: 1,
		Sessions: load.DefaultSessions, Timeout: load.DefaultTimeout, MaxLag: demoMaxLag, MaxInFlight: load.DefaultMaxInFlight,
		MaxFailureRate: DefaultMaxFailureRate,
		Summary:        demoSummary, HTML: demoHTML,
		Intro: demoIntro(true), HTMLTitle: "tasksim demo", HTMLIntro: demoHTMLIntro(true),
	}
	f := cmd.Flags()
	f.DurationVar(&o.Duration, "duration", demoDuration, "how long tasks keep starting")
	f.Float64Var(&o.Rate, "rate", demoRate, "task arrivals per second, per mode")
	f.BoolVar(&o.InProcess, "in-process", false, "run the reference server inside this process (server CPU not measured)")
	f.StringVar(&o.Server, "server", "", "compare the modes on this Streamable HTTP server instead of the reference server")
	addToolFlags(f, o)
	AddHeaderFlags(f, &o.HeaderOptions)
	f.StringVar(&o.JSON, "json", "", "also write the result as JSON to FILE")
	f.StringVar(&o.Hlog, "hlog", "", "also write the HdrHistogram interval log to FILE")
	f.StringVar(&o.HTML, "html", demoHTML, "write the HTML report to FILE (\"\": none)")
	f.IntVar(&simSeeds, "sim-seeds", demoSimSeeds, "seeds of the fault half, run within 15 s (0: none; not with --server)")
	return cmd
}

// demoSummary sets the measurements against polling theory: with poll
// interval P and tasks of mean duration D, the client learns of a result
// P/2 after it is ready on average, and makes 2 + D/P requests (the call,
// the polls, tasks/result), plus half a poll on average for the poll that
// finds the task done: 2.5 + D/P. In 2026-07-28 the poll that finds the
// task done carries its result: 1.5 + D/P.
func demoSummary(w io.Writer, r *load.Result) error {
	d := r.Config.Shape.MeanDuration()
	ew := &summaryWriter{w: w}
	fmt.Fprintln(ew)
	for _, m := range r.Modes {
		if m.Discovery.Count == 0 {
			continue
		}
		if m.Kind == load.KindPoll && m.PollIntervalMs > 0 {
			p, fixed := m.PollIntervalMs, 2.5
			if m.Revision.IsStateless() {
				fixed = 1.5
			}
			fmt.Fprintf(ew, "%s: results found %s after they were ready (theory P/2 = %s), %.2f requests per task (theory %g + D/P = %.2f)\n",
				m.Name, load.FormatMs(m.Discovery.Mean), load.FormatMs(p/2), m.Requests.Mean, fixed, fixed+float64(d.Milliseconds())/p)
			continue
		}
		fmt.Fprintf(ew, "%s: results found %s after they were ready, first content after %s, %.2f requests per task\n",
			m.Name, load.FormatMs(m.Discovery.Mean), load.FormatMs(m.TTFP.P50), m.Requests.Mean)
	}
	return ew.err
}

// summaryWriter keeps the first write error and drops later writes.
type summaryWriter struct {
	w   io.Writer
	err error
}

func (e *summaryWriter) Write(p []byte) (int, error) {
	if e.err != nil {
		return 0, e.err
	}
	n, err := e.w.Write(p)
	e.err = err
	return n, err
}
