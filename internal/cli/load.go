package cli

import (
	"cmp"
	"context"
	"html/template"
	"io"
	"time"

	"github.com/spf13/cobra"

	"github.com/tasksim/tasksim/load"
	"github.com/tasksim/tasksim/mcp"
)

// LoadOptions are the flags of tasksim load.
type LoadOptions struct {
	Modes string
	// Revision is --revision: the protocol revision of the tasks.
	Revision     string
	Rate         float64
	Concurrency  int
	Duration     time.Duration
	Tasks        int64
	RampUp       time.Duration
	Chunks       string
	ChunkSize    string
	Interval     string
	TaskDuration string
	Seed         uint64
	Sessions     int
	Timeout      time.Duration
	MaxLag       time.Duration
	MaxInFlight  int

	Server    string
	InProcess bool
	// Tool and Args: the tool every task calls and its arguments (a
	// template, or @FILE of one JSON object per line); "": slow_text.
	Tool string
	Args string
	HeaderOptions
	ServerPerMode bool

	JSON string
	Hlog string
	// CPUProfile and MemProfile are files for Go profiles of the
	// generator (load_profile.go; "": none).
	CPUProfile string
	MemProfile string
	// HTML is the file of the HTML report ("": none).
	HTML       string
	Thresholds []string
	// MaxFailureRate is the share of a mode's started tasks that may fail
	// before the run is a finding (exit 1).
	MaxFailureRate float64
	// Prom and Dashboard are addresses to serve Prometheus metrics and
	// the live page on during the run ("": none).
	Prom      string
	Dashboard string

	// rateSet says --rate was given (it conflicts with --concurrency).
	rateSet bool

	// Title, when set, is printed before the run (tasksim demo).
	Title string
	// Intro, when set, is printed before the run where the table goes
	// (tasksim demo's lesson: what is compared and what to watch).
	Intro string
	// HTMLTitle and HTMLIntro, when set, title the HTML report and open
	// it (tasksim demo).
	HTMLTitle string
	HTMLIntro template.HTML
	// Summary, when set, prints lines after the table (tasksim demo).
	Summary func(io.Writer, *load.Result) error
	// After, when set, runs after a complete run's table and Summary,
	// once the servers stopped (tasksim demo's fault half); its sections
	// go into the HTML report.
	After func(context.Context, io.Writer) ([]load.HTMLSection, error)
}

// NewCmdLoad builds tasksim load.
func NewCmdLoad(st *State) *cobra.Command {
	o := &LoadOptions{}
	cmd := &cobra.Command{
		Use:   "load",
		Short: "Load-test task delivery: polling against SEP-1905 streaming and SEP-2679 partials",
		Long: `Drive tasks against an MCP server and measure how their results are delivered,
in several modes at once, interleaved on the same schedule for a fair comparison.

Every task calls slow_text (the reference server's tool): --chunks blocks of
--chunk-size bytes, one every --interval, or spread over --task-duration. Each
of these takes a fixed value (100ms), a uniform range (50ms..150ms) or, for
durations, an exponential distribution (exp:1s), drawn per task from --seed:
the k-th task of every mode has the same shape. By default a task lasts
500ms..1.5s: drawn, so that tasks end at every phase of a poll interval (fixed
durations on a fixed schedule phase-lock with polling, whose discovery delay
then looks near 0 instead of half the interval).

Modes (--mode, comma-separated), --revision 2025-11-25 (the default):
  poll:P      tasks/get every P, then tasks/result (no notifications, no GET stream)
  poll:server the same at the server's pollInterval (also: poll)
  sse         SEP-1905 streaming: segments on the tools/call SSE stream
  partial     SEP-2679 notifications/tasks/partial, then tasks/result
  immediate   SEP-1905 immediate mode (a server may fall back; see the notes)
--revision 2026-07-28 (stateless requests, the tasks extension):
  poll:P      tasks/get every P, overriding the task's pollIntervalMs; the
              result comes inlined in the tasks/get that finds the end
  poll:server tasks/get at the task's pollIntervalMs, as the server asks
  listen      push: subscriptions/listen with the task's id, the end from
              notifications/tasks (tasks/get only if the listen fails);
              listen speaks 2026-07-28 in a 2025-11-25 run too
MODE@REVISION runs a mode of that revision in a run of the other:
poll:1s,poll:1s@2026-07-28 polls in both side by side on a server that
speaks both (as tasksim demo does).
The table of a run with 2026-07-28 modes adds how tasks/get was paced, one
tasks/get's round trip (p50) and the discovery delay's p50.

Workload, per mode: --rate tasks/s (open model: tasks start on schedule
whatever the server does; the default) or --concurrency clients (closed
model), for --duration or --tasks, with a linear --ramp-up. Tasks share
--sessions MCP sessions per mode.

Tool: every task calls slow_text unless --tool NAME names another (any
server's own tool, with --server), called with --args: a JSON object in which
{{task}} (the task's number in its mode), {{draw}} (a seeded number in [0,1)),
{{durationMs}}, {{chunks}} and {{chunkSize}} (the task's drawn shape) are
replaced, or @FILE: one JSON object per line, task k taking line k mod n.
Discovery delay then comes from the task's lastUpdatedAt when the result has
no completion time (marked † in the table).

Target: without --server, the reference server runs as a child process of
this binary, one for all modes, which interleave on it for a fair comparison
(server CPU per task is then over all modes, marked *; --server-per-mode
runs one per mode so each mode's CPU is measured alone); --in-process runs
it inside this process (CPU not measured). --server URL loads any Streamable HTTP server
offering slow_text (CPU not measured).

Metrics (latencies from each task's intended start, so a slow server cannot
hide its delay): time to first content, time to result, discovery delay
(server completion -> result in hand), requests and bytes per task, server
CPU per task, start lag (intended -> actual start), errors by kind.

Outputs: a progress line on stderr; the summary table on stdout; --json FILE
(the full result, with HDR histograms); --hlog FILE (HdrHistogram interval
log, one histogram per mode and metric per second); --html FILE (a
self-contained report with plots; tasksim report html renders one later from
--json).

Thresholds (--threshold, repeatable): MODE.METRIC.STAT OP VALUE, e.g.
sse.first.p99<2s. METRIC a column of the table: first, result, discovery,
lag, req (or requests), bytes, cpu (ttfp and ttr, older names of first and
result, still work); STAT p50, p90, p99, p999, max or mean (bytes and cpu:
mean); OP < <= > >=; VALUE 50ms, 1.5s, 200us or a number (milliseconds;
requests; bytes with an optional kB, KiB, MB, MiB).

Exit codes: 0 done, 1 a threshold missed (also judged on what ran when
interrupted; met, an interrupted run exits 130) or more than --max-failure-rate of
a mode's tasks failed, 2 bad flags or threshold, 3 the
server cannot be loaded, or this machine cannot drive the rate: a task
started more than --max-lag after its intended start (the run stops there
and reports what it measured).`,
		Example: `  tasksim load --mode poll:1s,poll:100ms,sse,partial --rate 20 --duration 30s
  tasksim load --mode sse --rate 500 --duration 20s --ramp-up 5s --chunks 25 --interval 400ms --threshold 'sse.result.p99<11s'
  tasksim load --mode poll:100ms --task-duration 500ms..1.5s --rate 50 --tasks 1000 --json run.json --hlog run.hlog
  tasksim load --server http://127.0.0.1:7070/mcp --mode partial --concurrency 100 --duration 1m`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			o.rateSet = cmd.Flags().Changed("rate")
			return runLoad(cmd.Context(), st, o)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.Modes, "mode", "poll:1s,sse,partial", "modes to compare, comma-separated: poll:INTERVAL, poll:server, sse, partial, immediate (2025-11-25); poll:INTERVAL, poll:server, listen (2026-07-28)")
	f.StringVar(&o.Revision, "revision", string(mcp.Revision20251125), "protocol revision of the tasks: 2025-11-25 (sessions) or 2026-07-28 (stateless, the tasks extension)")
	f.Float64Var(&o.Rate, "rate", 10, "task arrivals per second, per mode (open model)")
	f.IntVar(&o.Concurrency, "concurrency", 0, "clients per mode, each starting a task when its last ended (closed model; replaces --rate)")
	f.DurationVar(&o.Duration, "duration", 0, "how long tasks keep starting (default 10s unless --tasks is given)")
	f.Int64Var(&o.Tasks, "tasks", 0, "tasks per mode (with --duration: whichever comes first)")
	f.DurationVar(&o.RampUp, "ramp-up", 0, "grow the rate (or clients) linearly from 0 over this long")
	f.StringVar(&o.Chunks, "chunks", "10", "chunks per task: N or A..B")
	f.StringVar(&o.ChunkSize, "chunk-size", "32", "bytes per chunk: N or A..B")
	f.StringVar(&o.Interval, "interval", "", "pause before each chunk: D, A..B or exp:MEAN (default: --task-duration's)")
	f.StringVar(&o.TaskDuration, "task-duration", "", "total task duration, spread over the chunks (replaces --interval): D, A..B or exp:MEAN (default 500ms..1.5s: see the help)")
	f.Uint64Var(&o.Seed, "seed", 1, "seed of the task shapes")
	f.IntVar(&o.Sessions, "sessions", load.DefaultSessions, "MCP sessions per mode, shared by its tasks")
	f.DurationVar(&o.Timeout, "timeout", load.DefaultTimeout, "give up on a task after this long")
	f.DurationVar(&o.MaxLag, "max-lag", load.DefaultMaxLag, "stop when a task starts this late: the machine cannot drive the rate")
	f.IntVar(&o.MaxInFlight, "max-in-flight", load.DefaultMaxInFlight, "tasks running at once, all modes (more wait, and their lag grows)")
	f.StringVar(&o.Server, "server", "", "Streamable HTTP URL of the server to load (default: the reference server in a child process)")
	addToolFlags(f, o)
	AddHeaderFlags(f, &o.HeaderOptions)
	f.BoolVar(&o.InProcess, "in-process", false, "run the reference server inside this process (server CPU not measured)")
	f.BoolVar(&o.ServerPerMode, "server-per-mode", false, "one reference server process per mode, so each mode's server CPU is measured alone")
	f.StringVar(&o.JSON, "json", "", `write the result as JSON to FILE ("-": stdout; the table then goes to stderr)`)
	f.StringVar(&o.Hlog, "hlog", "", "write the HdrHistogram interval log to FILE")
	f.StringVar(&o.CPUProfile, "cpuprofile", "", "write a Go CPU profile of the generator's run to FILE (go tool pprof)")
	f.StringVar(&o.MemProfile, "memprofile", "", "write a Go heap profile of the generator to FILE, taken when the schedule ends (go tool pprof)")
	f.StringVar(&o.HTML, "html", "", "write a self-contained HTML report (plots, table, configuration) to FILE")
	f.StringVar(&o.Prom, "prom", "", "serve Prometheus metrics at http://ADDR/metrics during the run (e.g. 127.0.0.1:9464; a bare :PORT binds loopback)")
	f.StringVar(&o.Dashboard, "dashboard", "", "serve a live web dashboard at http://ADDR/ during the run (e.g. 127.0.0.1:8080; a bare :PORT binds loopback)")
	f.Float64Var(&o.MaxFailureRate, "max-failure-rate", DefaultMaxFailureRate, "fail (exit 1) when more than this share of a mode's started tasks fail (1: never)")
	f.StringArrayVar(&o.Thresholds, "threshold", nil, "fail (exit 1) unless MODE.METRIC.STAT OP VALUE holds, e.g. 'sse.result.p99<50ms'; METRIC is a column of the table: first, result, discovery, lag, requests, bytes, cpu (repeatable)")
	return cmd
}

// loadConfig turns the flags into a load.Config and thresholds.
func loadConfig(o *LoadOptions) (load.Config, []load.Threshold, error) {
	modes, err := load.ParseModes(o.Modes)
	if err != nil {
		return load.Config{}, nil, usagef("--mode: %v", err)
	}
	revision, err := mcp.ParseRevision(cmp.Or(o.Revision, string(mcp.Revision20251125)))
	if err != nil {
		return load.Config{}, nil, usagef("--revision: %v", err)
	}
	cfg := load.Config{
		Modes: modes, Revision: revision, Duration: load.Duration(o.Duration), Tasks: o.Tasks, RampUp: load.Duration(o.RampUp),
		Seed: o.Seed, Sessions: o.Sessions, Timeout: load.Duration(o.Timeout), MaxLag: load.Duration(o.MaxLag), MaxInFlight: o.MaxInFlight,
	}
	if o.Concurrency > 0 {
		if o.rateSet {
			return cfg, nil, usagef("give --rate (open model) or --concurrency (closed model), not both")
		}
		cfg.Concurrency = o.Concurrency
	} else {
		cfg.Rate = o.Rate
	}
	if err := loadShape(&cfg.Shape, o); err != nil {
		return cfg, nil, err
	}
	if o.Sessions < 1 || o.Timeout <= 0 || o.MaxLag <= 0 || o.MaxInFlight < 1 {
		return cfg, nil, usagef("--sessions, --timeout, --max-lag and --max-in-flight must be positive")
	}
	if err := toolConfig(&cfg, o); err != nil {
		return cfg, nil, err
	}
	cfg = cfg.WithDefaults()
	if err := cfg.Validate(); err != nil {
		return cfg, nil, usagef("%v", err)
	}
	ts, err := loadThresholds(o, modes)
	if err != nil {
		return cfg, nil, err
	}
	return cfg, ts, nil
}

// loadShape reads the task shape flags: chunks, chunk size, and the
// task duration or the interval between chunks.
func loadShape(s *load.Shape, o *LoadOptions) error {
	var err error
	if s.Chunks, err = load.ParseIntDist(o.Chunks); err != nil {
		return usagef("--chunks: %v", err)
	}
	if s.ChunkSize, err = load.ParseIntDist(o.ChunkSize); err != nil {
		return usagef("--chunk-size: %v", err)
	}
	if o.TaskDuration != "" {
		if s.Duration, err = load.ParseDurationDist(o.TaskDuration); err != nil {
			return usagef("--task-duration: %v", err)
		}
	} else if o.Interval != "" {
		if s.Interval, err = load.ParseDurationDist(o.Interval); err != nil {
			return usagef("--interval: %v", err)
		}
	}
	return nil
}

// loadThresholds parses the --threshold flags and checks them against
// the modes and the target.
func loadThresholds(o *LoadOptions, modes []load.ModeSpec) ([]load.Threshold, error) {
	var ts []load.Threshold
	for _, s := range o.Thresholds {
		t, err := load.ParseThreshold(s)
		if err != nil {
			return nil, usagef("--threshold: %v", err)
		}
		ts = append(ts, t)
	}
	if err := load.ValidateThresholds(ts, modes); err != nil {
		return nil, usagef("--threshold: %v", err)
	}
	for _, t := range ts {
		if t.Metric == load.MetricCPU && (o.Server != "" || o.InProcess) {
			return nil, usagef("--threshold %q: server CPU is measured only for the reference server in its own process (without --server and --in-process)", t.Expr)
		}
	}
	return ts, nil
}
