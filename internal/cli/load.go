package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"golang.org/x/term"

	"github.com/tasksim/tasksim/dashboards"
	"github.com/tasksim/tasksim/internal/refserver"
	"github.com/tasksim/tasksim/load"
	"github.com/tasksim/tasksim/mcp/server"
	"github.com/tasksim/tasksim/mcp/streamhttp"
)

// LoadOptions are the flags of tasksim load.
type LoadOptions struct {
	Modes        string
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

Modes (--mode, comma-separated):
  poll:P      tasks/get every P, then tasks/result (no notifications, no GET stream)
  sse         SEP-1905 streaming: segments on the tools/call SSE stream
  partial     SEP-2679 notifications/tasks/partial, then tasks/result
  immediate   SEP-1905 immediate mode (a server may fall back; see the notes)

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

Thresholds (--threshold, repeatable): MODE.METRIC.STAT OP VALUE, METRIC one
of ttfp, ttr, discovery, lag, requests, bytes, cpu; STAT p50, p90, p99, p999,
max or mean (bytes and cpu: mean); OP < <= > >=; VALUE 50ms, 1.5s, 200us or a
number (milliseconds; requests; bytes with an optional kB, KiB, MB, MiB).

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
	f.StringVar(&o.Modes, "mode", "poll:1s,sse,partial", "modes to compare, comma-separated: poll:INTERVAL, sse, partial, immediate")
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
	cfg := load.Config{
		Modes: modes, Duration: load.Duration(o.Duration), Tasks: o.Tasks, RampUp: load.Duration(o.RampUp),
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
	if cfg.Shape.Chunks, err = load.ParseIntDist(o.Chunks); err != nil {
		return cfg, nil, usagef("--chunks: %v", err)
	}
	if cfg.Shape.ChunkSize, err = load.ParseIntDist(o.ChunkSize); err != nil {
		return cfg, nil, usagef("--chunk-size: %v", err)
	}
	if o.TaskDuration != "" {
		if cfg.Shape.Duration, err = load.ParseDurationDist(o.TaskDuration); err != nil {
			return cfg, nil, usagef("--task-duration: %v", err)
		}
	} else if o.Interval != "" {
		if cfg.Shape.Interval, err = load.ParseDurationDist(o.Interval); err != nil {
			return cfg, nil, usagef("--interval: %v", err)
		}
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
	var ts []load.Threshold
	for _, s := range o.Thresholds {
		t, err := load.ParseThreshold(s)
		if err != nil {
			return cfg, nil, usagef("--threshold: %v", err)
		}
		ts = append(ts, t)
	}
	if err := load.ValidateThresholds(ts, modes); err != nil {
		return cfg, nil, usagef("--threshold: %v", err)
	}
	for _, t := range ts {
		if t.Metric == load.MetricCPU && (o.Server != "" || o.InProcess) {
			return cfg, nil, usagef("--threshold %q: server CPU is measured only for the reference server in its own process (without --server and --in-process)", t.Expr)
		}
	}
	return cfg, ts, nil
}

func runLoad(ctx context.Context, st *State, o *LoadOptions) error {
	cfg, thresholds, err := loadConfig(o)
	if err != nil {
		return err
	}
	if o.Server != "" && o.InProcess {
		return usagef("give --server or --in-process, not both")
	}
	if o.Server != "" && !strings.HasPrefix(o.Server, "http://") && !strings.HasPrefix(o.Server, "https://") {
		return usagef("--server %q: want an http:// or https:// URL", o.Server)
	}
	header, err := o.Header(st)
	if err != nil {
		return err
	}
	if header != nil && o.Server == "" {
		return usagef("--header and --bearer-token-env need --server (the reference server takes no credentials)")
	}
	jsonOut, err := createOutput(st, o.JSON)
	if err != nil {
		return err
	}
	defer jsonOut.abort()
	hlogOut, err := createOutput(st, o.Hlog)
	if err != nil {
		return err
	}
	defer hlogOut.abort()
	htmlOut, err := createOutput(st, o.HTML)
	if err != nil {
		return err
	}
	defer htmlOut.abort()

	targets, stopServers, err := startTargets(ctx, st, o, cfg)
	if err != nil {
		return err
	}
	defer stopServers()
	prof, err := startLoadProfiles(st, o)
	if err != nil {
		return err
	}
	defer prof.abort()
	tableOut := st.Stdout
	if o.JSON == "-" {
		tableOut = st.Stderr
	}
	if o.Intro != "" {
		fmt.Fprint(tableOut, o.Intro)
	}
	if o.Title != "" {
		fmt.Fprintln(st.Stderr, o.Title)
	}
	prog := newProgressPrinter(st, cfg)
	opts := load.Options{Targets: targets, Progress: prog.report, Version: Version, Header: header}
	if o.Prom != "" {
		p := load.NewProm()
		mux := http.NewServeMux()
		mux.Handle("/metrics", p.Handler())
		stop, err := serveLive(st, o.Prom, "--prom", "Prometheus metrics", "/metrics", mux)
		if err != nil {
			return err
		}
		defer stop()
		opts.Observer = p
	}
	if o.Dashboard != "" {
		live := dashboards.NewLive("tasksim load --mode " + o.Modes)
		stop, err := serveLive(st, o.Dashboard, "--dashboard", "live dashboard", "/", live)
		if err != nil {
			return err
		}
		defer stop()
		opts.Progress = func(p load.Progress) { prog.report(p); live.Update(p) }
	}
	if hlogOut != nil {
		opts.Hlog = hlogOut.w
	}
	opts.Progress = prof.progress(opts.Progress)
	res, runErr := load.Run(ctx, cfg, opts)
	prog.done()
	if err := prof.finish(); err != nil && res != nil {
		return err
	}
	if res == nil {
		if errors.Is(runErr, context.Canceled) {
			// Interrupted before the schedule started: nothing measured,
			// not a success either.
			return &InterruptedError{What: "load", Detail: "before the schedule started: nothing measured"}
		}
		return runErr // a *load.TargetError: the server cannot be loaded (exit 3)
	}
	stopServers()

	if err := load.TableReporter(res)(tableOut); err != nil {
		return fmt.Errorf("write table: %w", err)
	}
	if o.Summary != nil {
		if err := o.Summary(tableOut, res); err != nil {
			return fmt.Errorf("write summary: %w", err)
		}
	}
	var sections []load.HTMLSection
	if o.After != nil && runErr == nil {
		if sections, err = o.After(ctx, tableOut); err != nil {
			return err
		}
	}
	if jsonOut != nil {
		if err := load.JSONReporter(res)(jsonOut.w); err != nil {
			return fmt.Errorf("write %s: %w", o.JSON, err)
		}
		if err := jsonOut.close(); err != nil {
			return err
		}
	}
	if hlogOut != nil {
		if err := hlogOut.close(); err != nil {
			return err
		}
	}
	if htmlOut != nil {
		if err := load.HTMLPageReporter(res, &load.HTMLOptions{Title: o.HTMLTitle, Intro: o.HTMLIntro, Sections: sections})(htmlOut.w); err != nil {
			return fmt.Errorf("write %s: %w", o.HTML, err)
		}
		if err := htmlOut.close(); err != nil {
			return err
		}
		if o.HTML != "-" {
			fmt.Fprintln(tableOut, "report: "+o.HTML)
		}
	}
	interrupted := errors.Is(runErr, context.Canceled)
	switch {
	case interrupted:
		// Thresholds are judged on what ran, as k6 does: a run cut short
		// whose figures already miss one is a finding (exit 1); one that
		// meets them is still not a pass (exit 130, ExitInterrupted).
	case errors.Is(runErr, load.ErrOverloaded):
		return fmt.Errorf("%w (the table shows what ran)", runErr)
	case runErr != nil:
		return runErr
	}
	checks, err := load.CheckThresholds(res, thresholds)
	if err != nil {
		return usagef("%v", err)
	}
	var missed []string
	for _, c := range checks {
		fmt.Fprintln(st.Stderr, "threshold "+c.String())
		if !c.Pass {
			missed = append(missed, c.Threshold.Expr)
		}
	}
	if len(missed) > 0 {
		what := ""
		if interrupted {
			what = "interrupted; "
		}
		return &FindingsError{Summary: fmt.Sprintf("%s%d of %d thresholds missed: %s", what, len(missed), len(checks), strings.Join(missed, ", "))}
	}
	if interrupted {
		// Tasks cut off by the interrupt count as failed: the failure
		// rate says nothing about the server here.
		return &InterruptedError{What: "load", Detail: "the table shows what ran (thresholds met so far)"}
	}
	return checkFailureRate(res, o.MaxFailureRate)
}

// serveLive serves h on addr (a bare :PORT binds loopback) for the run
// and says where on stderr; stop shuts it down.
func serveLive(st *State, addr, flag, what, path string, h http.Handler) (stop func(), err error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, usagef("%s %q: want HOST:PORT such as 127.0.0.1:9464", flag, addr)
	}
	if host == "" {
		host = "127.0.0.1"
	}
	ln, err := net.Listen("tcp", net.JoinHostPort(host, port))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", flag, err) // cannot listen: a runtime failure (exit 3)
	}
	hs := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = hs.Serve(ln) }()
	fmt.Fprintf(st.Stderr, "load: %s at http://%s%s\n", what, ln.Addr(), path)
	return func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		_ = hs.Shutdown(ctx)
	}, nil
}

// output is a file the run writes, or stdout for "-".
type output struct {
	w io.Writer
	f *outFile
}

func createOutput(st *State, name string) (*output, error) {
	switch name {
	case "":
		return nil, nil
	case "-":
		return &output{w: st.Stdout}, nil
	}
	f, err := createOut(name)
	if err != nil {
		return nil, fmt.Errorf("create output: %w", err)
	}
	return &output{w: f, f: f}, nil
}

// close commits the file: it replaces name only now.
func (o *output) close() error {
	if o == nil || o.f == nil {
		return nil
	}
	if err := o.f.commit(); err != nil {
		return fmt.Errorf("write %s: %w", o.f.path, err)
	}
	return nil
}

// abort drops the file of a run that failed, unless it was committed.
func (o *output) abort() {
	if o != nil {
		o.f.abort()
	}
}

// startTargets starts the servers the run loads: none for --server, one
// in-process for --in-process, else reference servers in child processes,
// one shared by every mode (or one per mode with --server-per-mode).
func startTargets(ctx context.Context, st *State, o *LoadOptions, cfg load.Config) ([]load.Target, func(), error) {
	switch {
	case o.Server != "":
		return []load.Target{{URL: o.Server, Label: o.Server + " (external)"}}, func() {}, nil
	case o.InProcess:
		url, stop, err := startInProcess(cfg)
		if err != nil {
			return nil, nil, err
		}
		return []load.Target{{URL: url, Label: "reference server in-process"}}, stop, nil
	}
	exe, err := os.Executable()
	if err != nil {
		return nil, nil, fmt.Errorf("start the reference server: %w", err)
	}
	n := 1
	if o.ServerPerMode {
		n = len(cfg.Modes)
	}
	copts := &refserver.ChildOptions{Args: []string{"--log-level", "warn", "--max-tasks-per-session", strconv.Itoa(cfg.MaxInFlight)}}
	// A child that neither listens nor exits (it hangs) is given up on.
	sctx, cancel := context.WithTimeout(ctx, childStartTimeout)
	defer cancel()
	children := make([]*refserver.Child, n)
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i := range n {
		wg.Go(func() { children[i], errs[i] = refserver.StartChild(sctx, exe, copts) })
	}
	wg.Wait()
	var once sync.Once
	stop := func() {
		once.Do(func() {
			for _, c := range children {
				if c != nil {
					c.Stop()
				}
			}
		})
	}
	if err := errors.Join(errs...); err != nil {
		stop()
		return nil, nil, err
	}
	targets := make([]load.Target, n)
	for i, c := range children {
		targets[i] = load.Target{URL: c.URL, Label: fmt.Sprintf("reference server, child process %d", c.Pid),
			CPU: func() (time.Duration, error) { return load.ProcessCPU(c.Pid) }}
	}
	if n > 1 {
		for i := range targets {
			targets[i].Label = fmt.Sprintf("pid %d", children[i].Pid)
		}
	}
	return targets, stop, nil
}

// childStartTimeout bounds the start of a child server that hangs before
// it listens; one that fails exits, and is seen at once.
const childStartTimeout = 20 * time.Second

// startInProcess serves the reference server on a loopback port inside
// this process.
func startInProcess(cfg load.Config) (string, func(), error) {
	s, err := refserver.Listen(&refserver.Options{
		Server: &server.Options{Version: Version, MaxTasksPerSession: cfg.MaxInFlight},
		HTTP:   &streamhttp.Options{Logger: slog.New(slog.DiscardHandler)},
	})
	if err != nil {
		return "", nil, err
	}
	return s.URL, func() { _ = s.Close() }, nil
}

// progressPrinter shows progress on stderr: one updating line when stderr
// is a terminal, else a plain line per interval (a second) for runs up to
// a minute, per 10 intervals beyond (and when draining starts), as
// docs/load.md says.
type progressPrinter struct {
	st       *State
	every    int
	n        int
	live     bool
	warned   bool
	draining bool
	// width returns the terminal's width (0: unknown).
	width func() int
}

func newProgressPrinter(st *State, cfg load.Config) *progressPrinter {
	// The live line's escape codes go to stderr, so stderr decides, not
	// stdout: tasksim load >result.txt on a terminal still gets it, and
	// 2>log gets plain lines.
	p := &progressPrinter{st: st, live: isTerminalWriter(st.Stderr), every: 10,
		width: func() int { return terminalWidth(st.Stderr) }}
	d := time.Duration(cfg.Duration)
	if cfg.Concurrency == 0 && cfg.Tasks > 0 {
		// Bounded by task count, the open schedule's length is known too.
		if byCount := time.Duration(float64(cfg.Tasks) / cfg.Rate * float64(time.Second)); d == 0 || byCount < d {
			d = byCount
		}
	}
	if d > 0 && d <= time.Minute {
		p.every = 1
	}
	return p
}

// maxLiveLine is the live line's width when the terminal's is unknown.
const maxLiveLine = 150

// terminalWidth is the width of the terminal w writes to, 0 when unknown.
func terminalWidth(w io.Writer) int {
	f, ok := w.(interface{ Fd() uintptr })
	if !ok {
		return 0
	}
	n, _, err := term.GetSize(int(f.Fd()))
	if err != nil {
		return 0
	}
	return n
}

func (p *progressPrinter) report(pr load.Progress) {
	if pr.LagMax > load.LagWarning && !p.warned {
		p.warned = true
		if p.live {
			fmt.Fprint(p.st.Stderr, "\r\x1b[K")
		}
		fmt.Fprintf(p.st.Stderr, "load: warning: tasks started up to %s after their intended start: the generator is falling behind (latencies count from the intended start, so they include it)\n",
			load.FormatMs(float64(pr.LagMax)/1e6))
	}
	if p.live {
		// The line must not wrap: a wrapped line cannot be rewritten in
		// place. The terminal may be resized during the run, so its
		// width is read every time.
		width := maxLiveLine
		if p.width != nil {
			if w := p.width(); w > 0 {
				width = w - 1 // the cursor's column after the last rune
			}
		}
		line := pr.Bar(20)
		if r := []rune(line); len(r) > width {
			line = string(r[:max(width-1, 0)]) + "…"
		}
		fmt.Fprint(p.st.Stderr, "\r\x1b[K"+line)
		return
	}
	p.n++
	if p.n%p.every == 0 || pr.Draining && !p.draining {
		fmt.Fprintln(p.st.Stderr, "load: "+pr.Line())
	}
	p.draining = pr.Draining
}

func (p *progressPrinter) done() {
	if p.live {
		fmt.Fprint(p.st.Stderr, "\r\x1b[K")
	}
}

// isTerminalWriter reports whether w is a terminal: a file (os.Stderr) on a
// terminal device. Buffers, pipes and regular files are not.
func isTerminalWriter(w io.Writer) bool {
	f, ok := w.(interface{ Fd() uintptr })
	return ok && term.IsTerminal(int(f.Fd()))
}

// addToolFlags adds --tool and --args (load, and demo with --server).
func addToolFlags(f *pflag.FlagSet, o *LoadOptions) {
	f.StringVar(&o.Tool, "tool", "", "the tool every task calls (default: the reference server's slow_text with the drawn shape)")
	f.StringVar(&o.Args, "args", "", `--tool's arguments: a JSON object with {{task}}, {{draw}}, {{durationMs}}, {{chunks}}, {{chunkSize}} replaced per task, or @FILE of one JSON object per line`)
}

// toolConfig puts --tool and --args into cfg.
func toolConfig(cfg *load.Config, o *LoadOptions) error {
	if o.Args != "" && o.Tool == "" {
		return usagef("--args needs --tool (slow_text's arguments come from the task shape flags)")
	}
	cfg.Tool = o.Tool
	name, ok := strings.CutPrefix(o.Args, "@")
	if !ok {
		cfg.Args = o.Args
		return nil
	}
	b, err := readInput(name)
	if err != nil {
		return err
	}
	for i, line := range strings.Split(string(b), "\n") {
		if line = strings.TrimSpace(line); line == "" {
			continue
		}
		if !json.Valid([]byte(line)) || !strings.HasPrefix(line, "{") {
			return usagef("--args %s: line %d: not a JSON object: %.60s", o.Args, i+1, line)
		}
		cfg.ArgSets = append(cfg.ArgSets, json.RawMessage(line))
	}
	if len(cfg.ArgSets) == 0 {
		return usagef("--args %s: no argument sets in it", o.Args)
	}
	return nil
}
