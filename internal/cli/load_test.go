package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tasksim/tasksim/load"
)

// loadArgs is a short in-process run: 8 tasks per mode of 3 × 10 ms. A
// busy machine may start its tasks late; --max-lag 1h keeps that from
// stopping the run (TestLoadOverloaded is about that).
func loadArgs(extra ...string) []string {
	return append([]string{"load", "--in-process", "--mode", "poll:100ms,sse,partial", "--rate", "40", "--tasks", "8",
		"--chunks", "3", "--interval", "10ms", "--sessions", "2", "--max-lag", "1h"}, extra...)
}

// TestLoadRun checks what a run reports, never how fast it went: the
// thresholds that must pass are causal lower bounds (a task of 3 chunks
// 10 ms apart takes 30 ms or more; a polled task makes at least the call,
// one poll and tasks/result), so a busy machine cannot fail them.

func TestLoadRun(t *testing.T) {
	dir := t.TempDir()
	jsonFile, hlogFile := filepath.Join(dir, "run.json"), filepath.Join(dir, "run.hlog")
	code, stdout, stderr := run(t, "", loadArgs("--json", jsonFile, "--hlog", hlogFile, "--threshold", "sse.ttr.p50>=30ms", "--threshold", "poll:100ms.requests.mean>=3")...)
	if code != ExitOK {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	for _, want := range []string{"poll:100ms", "sse", "partial", "discovery mean", load.TableLegend, "server CPU not measured"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("table lacks %q:\n%s", want, stdout)
		}
	}
	if !strings.Contains(stderr, "threshold sse.ttr.p50>=30ms: ok") || !strings.Contains(stderr, "threshold poll:100ms.requests.mean>=3: ok") {
		t.Errorf("stderr:\n%s", stderr)
	}
	res := readLoadJSON(t, jsonFile)
	for _, m := range res.Modes {
		if m.Started != 8 || m.Completed != 8 {
			t.Errorf("%s: %d started, %d completed, want 8 and 8 (%v)", m.Name, m.Started, m.Completed, m.Errors)
		}
	}
	if d := res.Mode("poll:100ms").Discovery; d.Count != 8 {
		t.Errorf("poll:100ms discovery delay %+v: want one per task", d)
	}
	hlog, err := os.Open(hlogFile)
	if err != nil {
		t.Fatal(err)
	}
	defer hlog.Close()
	totals, err := load.HlogTotals(hlog)
	if err != nil {
		t.Fatal(err)
	}
	if h := totals["partial.ttr"]; h == nil || h.TotalCount() != 8 {
		t.Errorf("hlog partial.ttr: %v", h)
	}
}

func TestLoadThresholdMissed(t *testing.T) {
	code, _, stderr := run(t, "", loadArgs("--threshold", "sse.ttr.p50<1us", "--threshold", "sse.requests.mean<=1")...)
	if code != ExitFindings {
		t.Fatalf("exit %d, want %d; stderr:\n%s", code, ExitFindings, stderr)
	}
	if !strings.Contains(stderr, "threshold sse.ttr.p50<1us: MISSED") || !strings.Contains(stderr, "1 of 2 thresholds missed: sse.ttr.p50<1us") {
		t.Errorf("stderr:\n%s", stderr)
	}
}

func TestLoadBadInput(t *testing.T) {
	notMCP := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		_, _ = w.Write([]byte("<html>not MCP</html>"))
	}))
	defer notMCP.Close()
	cases := []struct {
		name string
		args []string
		code int
		want string
	}{
		{"threshold does not parse", []string{"load", "--threshold", "sse.ttr.p99<<50ms"}, ExitUsage, "more than one comparison"},
		{"threshold unknown metric", []string{"load", "--threshold", "sse.speed.p99<50ms"}, ExitUsage, `unknown metric "speed"`},
		{"threshold for a mode not run", []string{"load", "--mode", "sse", "--threshold", "partial.ttr.p99<50ms"}, ExitUsage, "no mode partial in this run"},
		{"cpu threshold without CPU", []string{"load", "--in-process", "--threshold", "sse.cpu.mean<1ms"}, ExitUsage, "server CPU is measured only"},
		{"unknown mode", []string{"load", "--mode", "sse,carrier-pigeon"}, ExitUsage, `unknown mode "carrier-pigeon"`},
		{"rate and concurrency", []string{"load", "--rate", "5", "--concurrency", "3"}, ExitUsage, "not both"},
		{"bad interval", []string{"load", "--interval", "slow"}, ExitUsage, "--interval"},
		{"bad server URL", []string{"load", "--server", "ftp://x"}, ExitUsage, "want an http://"},
		{"profile to stdout", []string{"load", "--in-process", "--cpuprofile", "-"}, ExitUsage, "--cpuprofile: give a file"},
		{"not an MCP server", []string{"load", "--server", notMCP.URL, "--tasks", "1"}, ExitRuntime, "is this an MCP endpoint?"},
		{"nobody listening", []string{"load", "--server", "http://127.0.0.1:1/mcp", "--tasks", "1"}, ExitRuntime, "cannot load it"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			code, _, stderr := run(t, "", tc.args...)
			if code != tc.code || !strings.Contains(stderr, tc.want) {
				t.Errorf("exit %d, stderr %q; want %d and %q", code, stderr, tc.code, tc.want)
			}
			if lines := strings.Split(strings.TrimSpace(stderr), "\n"); !strings.HasPrefix(lines[len(lines)-1], "tasksim: ") {
				t.Errorf("stderr does not end with one tasksim: line: %q", stderr)
			}
		})
	}
}

// TestLoadOverloaded: a rate the generator cannot drive (here: one task
// in flight at a time, 1 s tasks, 100 a second) stops the run once a task
// starts --max-lag late, says so, and still reports what ran.
func TestLoadOverloaded(t *testing.T) {
	code, stdout, stderr := run(t, "", "load", "--in-process", "--mode", "sse", "--rate", "100", "--duration", "5s",
		"--chunks", "2", "--interval", "500ms", "--max-in-flight", "1", "--max-lag", "50ms")
	if code != ExitRuntime {
		t.Fatalf("exit %d, want %d; stderr:\n%s", code, ExitRuntime, stderr)
	}
	if !strings.Contains(stderr, "cannot keep the schedule") || !strings.Contains(stderr, "in-flight slots were taken") {
		t.Errorf("stderr:\n%s", stderr)
	}
	if !strings.Contains(stdout, "sse") {
		t.Errorf("no table for what ran:\n%s", stdout)
	}
}

func TestDemoInProcess(t *testing.T) {
	if testing.Short() {
		t.Skip("a few seconds of load")
	}
	report, jsonFile := filepath.Join(t.TempDir(), "demo.html"), filepath.Join(t.TempDir(), "demo.json")
	code, stdout, stderr := run(t, "", "demo", "--in-process", "--duration", "1s", "--rate", "10", "--html", report, "--json", jsonFile, "--sim-seeds", "4")
	if code != ExitOK {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	// Both revisions: 2025-11-25's four modes under their names as ever,
	// 2026-07-28's polling and push.
	res := readLoadJSON(t, jsonFile)
	var modes []string
	for _, m := range res.Modes {
		modes = append(modes, m.Name+" "+m.Kind+" "+string(m.Revision))
	}
	if want := []string{"poll:1s poll 2025-11-25", "poll:100ms poll 2025-11-25", "sse sse 2025-11-25", "partial partial 2025-11-25",
		"poll:1s@2026-07-28 poll 2026-07-28", "listen listen 2026-07-28"}; !slices.Equal(modes, want) {
		t.Errorf("modes %q, want %q", modes, want)
	}
	for _, want := range []string{"poll:1s", "poll:100ms", "sse", "partial", "poll:1s@2026-07-28", "listen", "theory P/2 = 500ms",
		"(theory 2.5 + D/P", "(theory 1.5 + D/P", "report: " + report,
		"Faults: tasksim sim --seeds 4", "4 runs, ", "faults applied: ", "timeline of seed "} {
		if !strings.Contains(stdout, want) {
			t.Errorf("demo output lacks %q:\n%s", want, stdout)
		}
	}
	// The rule table's columns are as wide as the rules it shows.
	if !regexp.MustCompile(`\nSIM-LIVENESS +4 +0 +0\n`).MatchString(stdout) {
		t.Errorf("demo output lacks SIM-LIVENESS passing 4 runs:\n%s", stdout)
	}
	if !strings.Contains(stderr, "tasksim demo:") {
		t.Errorf("stderr:\n%s", stderr)
	}
	// The report embeds the timeline of the run the output names.
	seed := regexp.MustCompile(`timeline of seed (\d+) in the report`).FindStringSubmatch(stdout)
	page, err := os.ReadFile(report)
	if seed == nil || err != nil {
		t.Fatalf("no timeline named (%v):\n%s", err, stdout)
	}
	for _, want := range []string{"<h2>Faults: the simulator</h2>", `<h2 class="tl-title">tasksim sim --seed ` + seed[1] + `</h2>`, `<g class="tl-lane"`, `class="tl-arrow`} {
		if !strings.Contains(string(page), want) {
			t.Errorf("the report lacks %q", want)
		}
	}
	if code, _, stderr := run(t, "", "demo", "--sim-seeds", "-1"); code != ExitUsage || !strings.Contains(stderr, "--sim-seeds") {
		t.Errorf("--sim-seeds -1: exit %d, %q", code, stderr)
	}
}

// TestLoadChildServers: without --server or --in-process, load starts the
// reference server as a child process (this test binary playing tasksim),
// one per mode with --server-per-mode, and measures its CPU.
func TestLoadChildServers(t *testing.T) {
	t.Setenv(asTasksimEnv, "1") // inherited by the children
	dir := t.TempDir()
	jsonFile := filepath.Join(dir, "run.json")
	code, stdout, stderr := run(t, "", "load", "--mode", "sse,partial", "--server-per-mode", "--rate", "40", "--tasks", "3",
		"--chunks", "2", "--interval", "5ms", "--sessions", "1", "--max-lag", "1h", "--json", jsonFile)
	if code != ExitOK {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	res := readLoadJSON(t, jsonFile)
	for _, m := range res.Modes {
		if m.Completed != 3 || m.ServerCPU == nil || m.ServerCPU.Shared {
			t.Errorf("%s: %d completed, server CPU %+v: want 3, measured for its own server", m.Name, m.Completed, m.ServerCPU)
		}
	}
	if len(res.Targets) != 2 || res.Targets[0].URL == res.Targets[1].URL || !res.Targets[0].CPUMeasured || !res.Targets[1].CPUMeasured {
		t.Errorf("targets %+v: want one child per mode, CPU measured", res.Targets)
	}
}

// TestLoadProgressNotATerminal: the progress line is written to stderr,
// so stderr decides whether it may carry escape codes. Stdout being a
// terminal (StdoutTTY) does not make a buffer, a pipe or a file one.
func TestLoadProgressNotATerminal(t *testing.T) {
	pipeR, pipeW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer pipeR.Close()
	defer pipeW.Close()
	file, err := os.Create(filepath.Join(t.TempDir(), "stderr"))
	if err != nil {
		t.Fatal(err)
	}
	defer file.Close()
	for _, w := range []io.Writer{&bytes.Buffer{}, pipeW, file} {
		if isTerminalWriter(w) {
			t.Errorf("%T is taken for a terminal", w)
		}
	}

	var stderr bytes.Buffer
	st := &State{Stdout: io.Discard, Stderr: &stderr, StdoutTTY: true}
	p := newProgressPrinter(st, load.Config{Duration: load.Duration(time.Second)})
	p.report(load.Progress{Elapsed: time.Second, LagMax: time.Second})
	p.report(load.Progress{Elapsed: 2 * time.Second, Draining: true})
	p.done()
	if strings.ContainsAny(stderr.String(), "\x1b\r") {
		t.Errorf("escape codes on a stderr that is not a terminal:\n%q", stderr.String())
	}
	if !strings.Contains(stderr.String(), "load: warning: tasks started up to") || !strings.Contains(stderr.String(), "\nload: ") {
		t.Errorf("plain progress lines missing:\n%s", stderr.String())
	}
}

// cancelOnWrite is a stderr that cancels the run's context when a line
// containing trigger is written (the first progress line: the run is
// going), as SIGINT would.
type cancelOnWrite struct {
	mu      sync.Mutex
	buf     bytes.Buffer
	trigger string
	cancel  context.CancelFunc
}

func (w *cancelOnWrite) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if bytes.Contains(p, []byte(w.trigger)) {
		w.cancel()
	}
	return w.buf.Write(p)
}

func (w *cancelOnWrite) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.String()
}

// TestLoadInterrupted: an interrupted run judges its thresholds on what
// ran. One missed exits 1 (it used to exit 0, "thresholds not checked");
// all met exits 130: the run is incomplete, not a success.
func TestLoadInterrupted(t *testing.T) {
	for _, tc := range []struct {
		name, threshold string
		code            int
		stderr          string
	}{
		{"missed", "sse.ttr.p50<1us", ExitFindings, "interrupted; 1 of 1 thresholds missed"},
		{"met", "sse.ttr.p50>=30ms", ExitInterrupted, "interrupted before its end"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			stderr := &cancelOnWrite{trigger: "started", cancel: cancel}
			var stdout bytes.Buffer
			st := &State{Stdin: strings.NewReader(""), Stdout: &stdout, Stderr: stderr, Getenv: func(string) string { return "" }, Context: ctx,
				Args: []string{"load", "--in-process", "--mode", "sse", "--rate", "20", "--duration", "10s",
					"--chunks", "3", "--interval", "10ms", "--sessions", "1", "--max-lag", "1h", "--threshold", tc.threshold}}
			if code := Main(st); code != tc.code {
				t.Fatalf("exit %d, want %d\nstderr:\n%s", code, tc.code, stderr)
			}
			if !strings.Contains(stderr.String(), tc.stderr) {
				t.Errorf("stderr lacks %q:\n%s", tc.stderr, stderr)
			}
		})
	}
}

// TestLoadProgressEverySecond: off a terminal, a run of up to a minute
// prints a progress line every interval (a second), as docs/load.md says;
// it used to print one per 5 s for runs over 10 s.
func TestLoadProgressEverySecond(t *testing.T) {
	for _, tc := range []struct {
		name  string
		cfg   load.Config
		lines int
	}{
		{"30s", load.Config{Rate: 10, Duration: load.Duration(30 * time.Second)}, 30},
		{"300 tasks at 10/s", load.Config{Rate: 10, Tasks: 300}, 30},
		{"5m", load.Config{Rate: 10, Duration: load.Duration(5 * time.Minute)}, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var errb bytes.Buffer
			p := newProgressPrinter(&State{Stderr: &errb}, tc.cfg)
			for i := range 30 {
				p.report(load.Progress{Elapsed: time.Duration(i+1) * time.Second})
			}
			if n := strings.Count(errb.String(), "load: "); n != tc.lines {
				t.Errorf("%d lines in 30 intervals, want %d:\n%s", n, tc.lines, errb.String())
			}
		})
	}
}

// TestLoadProgressFitsTerminal: the live line is cut to the terminal's
// width (it used to be cut at 150 runes whatever the width, so an 80-column
// terminal wrapped it and every update printed a new line).
func TestLoadProgressFitsTerminal(t *testing.T) {
	for _, width := range []int{40, 80, 200} {
		var errb bytes.Buffer
		p := &progressPrinter{st: &State{Stderr: &errb}, live: true, every: 1, width: func() int { return width }}
		p.report(load.Progress{Elapsed: 3 * time.Second, Planned: 10 * time.Second, Started: 123456, Completed: 123000, InFlight: 456,
			TasksPerSec: 1000, PartialsPerSec: 9999, SegmentsPerSec: 9999, LagMax: 1234 * time.Microsecond,
			Modes: []load.ModeProgress{{Name: "poll:100ms", TTRP50: time.Second}, {Name: "sse", TTRP50: time.Second}, {Name: "partial", TTRP50: time.Second}}})
		line := strings.TrimPrefix(errb.String(), "\r\x1b[K")
		if n := len([]rune(line)); n >= width {
			t.Errorf("width %d: a line of %d runes: %q", width, n, line)
		}
	}
}

// load --revision 2026-07-28: the revision's poll and listen modes, the
// table stating how tasks/get was paced; modes the revision lacks and an
// unknown revision are usage errors.
func TestLoadRevision2026(t *testing.T) {
	dir := t.TempDir()
	jsonFile := filepath.Join(dir, "run.json")
	code, stdout, stderr := run(t, "", "load", "--in-process", "--revision", "2026-07-28", "--mode", "poll:100ms,poll:server,listen",
		"--rate", "40", "--tasks", "6", "--chunks", "3", "--interval", "10ms", "--sessions", "2", "--max-lag", "1h", "--json", jsonFile)
	if code != ExitOK {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	for _, want := range []string{"tasks/get every", "get rtt p50", "discovery p50", "100ms, not server's 500ms", "500ms (server's)", "fallback only"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("table lacks %q:\n%s", want, stdout)
		}
	}
	res := readLoadJSON(t, jsonFile)
	if res.Config.Revision != "2026-07-28" {
		t.Errorf("config revision %q", res.Config.Revision)
	}
	for _, m := range res.Modes {
		if m.Completed != 6 || m.Discovery.Count != 6 || m.Revision != "2026-07-28" {
			t.Errorf("%s: %+v", m.Name, m)
		}
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--revision", "2026-07-28", "--mode", "poll:1s,sse"}, "mode sse does not exist in 2026-07-28"},
		{[]string{"--revision", "1999-01-01"}, "--revision: unknown protocol revision"},
	} {
		code, _, stderr := run(t, "", append([]string{"load", "--in-process"}, tc.args...)...)
		if code != ExitUsage || !strings.Contains(stderr, tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want %d and %q", tc.args, code, stderr, ExitUsage, tc.want)
		}
	}
}

// demo --server keeps to 2025-11-25's modes, which any server of that
// revision speaks, and says 2026-07-28's were left out.
func TestDemoServerLeavesOutListen(t *testing.T) {
	url := referenceServer(t)
	code, stdout, stderr := run(t, "", "demo", "--server", url, "--duration", "500ms", "--rate", "4", "--html", "", "--sim-seeds", "0")
	if code != ExitOK || !strings.Contains(stderr, "poll:1s@2026-07-28 and listen (2026-07-28) are left out with --server") ||
		strings.Contains(stdout, "listen") || strings.Contains(stdout, "2026-07-28") || !strings.Contains(stdout, "partial") {
		t.Errorf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
}

// readLoadJSON reads the result a load or demo run wrote with --json.
func readLoadJSON(t *testing.T, file string) load.Result {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var res load.Result
	if err := json.Unmarshal(b, &res); err != nil {
		t.Fatal(err)
	}
	return res
}
