package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/tasksim/tasksim/check"
	"github.com/tasksim/tasksim/sim"
)

// Bad input to tasksim sim: one line on stderr, exit 2.
func TestSimBadInput(t *testing.T) {
	dir := t.TempDir()
	notSchedule := filepath.Join(dir, "x.json")
	os.WriteFile(notSchedule, []byte(`{"format":"tasksim-sim-schedule/1","seed":1,"workload":{"transport":"carrier-pigeon","sessions":1,"calls":[]},"faults":[]}`), 0o644)
	garbage := filepath.Join(dir, "g.json")
	os.WriteFile(garbage, []byte("not json at all"), 0o644)
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"seed not a number", []string{"sim", "--seed", "seven"}, `--seed "seven": not a seed`},
		{"negative seed", []string{"sim", "--seed", "-1"}, "not a seed"},
		{"schedule not json", []string{"sim", "--schedule", garbage}, "not a tasksim sim schedule"},
		{"schedule with a bad transport", []string{"sim", "--schedule", notSchedule}, `transport "carrier-pigeon"`},
		{"missing schedule", []string{"sim", "--schedule", filepath.Join(dir, "none.json")}, "no such file"},
		{"fault needs http", []string{"sim", "--transport", "stdio", "--fault", "http-status:code=503"}, "needs HTTP"},
		{"bad partition", []string{"sim", "--partition", "2/2"}, "--partition"},
		{"partition not a number", []string{"sim", "--partition", "a/b"}, "--partition"},
		{"partition of a schedule", []string{"sim", "--partition", "0/2", "--schedule", garbage}, "partitions split a seed range"},
		{"unknown bug", []string{"sim", "--bug", "gremlins"}, "no such planted bug"},
		{"unknown fault", []string{"sim", "--fault", "gremlins"}, "unknown fault"},
		{"bad mode", []string{"sim", "--mode", "telepathy"}, "unknown call mode"},
		{"zero seeds", []string{"sim", "--seeds", "0"}, "--seeds"},
		{"bad shrink", []string{"sim", "--seed", "1", "--shrink", "some"}, "--shrink"},
	} {
		t.Run(tc.name, func(t *testing.T) { wantBadInput(t, tc.want, tc.args...) })
	}
}

// wantBadInput runs args and wants exit 2 and one line on stderr that
// says want.
func wantBadInput(t *testing.T, want string, args ...string) {
	t.Helper()
	code, _, stderr := run(t, "", args...)
	if code != ExitUsage {
		t.Errorf("exit %d, want %d; stderr %q", code, ExitUsage, stderr)
	}
	if strings.Count(strings.TrimRight(stderr, "\n"), "\n") != 0 || !strings.Contains(stderr, want) {
		t.Errorf("stderr %q: want one line with %q", stderr, want)
	}
}

// A fault-free run of a few seeds passes, and says so in text and JSON;
// a kept schedule runs again from its file.
func TestSimRuns(t *testing.T) {
	dir := t.TempDir()
	js := filepath.Join(t.TempDir(), "sim.json")
	junit := filepath.Join(t.TempDir(), "sim.xml")
	code, stdout, stderr := run(t, "", "sim", "--seeds", "5", "--no-faults", "--mode", "task,streaming,partial", "--json", js, "--junit", junit, "--out", dir)
	if code != ExitOK {
		t.Fatalf("exit %d: %s%s", code, stdout, stderr)
	}
	if !strings.Contains(stdout, "5 runs") || !strings.Contains(stdout, "faults applied: delay 0") {
		t.Errorf("summary: %s", stdout)
	}
	var out struct {
		Summary sim.Summary `json:"summary"`
	}
	b, _ := os.ReadFile(js)
	if err := json.Unmarshal(b, &out); err != nil || out.Summary.Runs != 5 || out.Summary.Failures != 0 {
		t.Errorf("--json: %v %+v", err, out.Summary)
	}
	if x, _ := os.ReadFile(junit); !strings.Contains(string(x), `<testsuite name="tasksim sim" tests="5" failures="0"`) {
		t.Errorf("--junit: %s", x)
	}

	s := sim.Draw(3, &sim.WorkloadOptions{Modes: nil, Tasks: 2}, &sim.FaultOptions{None: true})
	data, _ := sim.MarshalSchedule(s)
	path := filepath.Join(dir, "kept.json")
	os.WriteFile(path, data, 0o644)
	trace := filepath.Join(dir, "kept.trace")
	code, stdout, stderr = run(t, "", "sim", "--schedule", path, "--trace", trace)
	if code != ExitOK || !strings.Contains(stdout, "1 runs") {
		t.Fatalf("--schedule: exit %d: %s%s", code, stdout, stderr)
	}
	code, stdout, _ = run(t, "", "trace", "show", trace)
	if code != ExitOK || !strings.Contains(stdout, "seed 3") {
		t.Errorf("trace show of the sim trace: exit %d: %.300s", code, stdout)
	}
	code, stdout, stderr = run(t, "", "sim", "--corpus", dir)
	if code != ExitOK || !strings.Contains(stdout, "1 runs") {
		t.Errorf("--corpus: exit %d: %s%s", code, stdout, stderr)
	}
}

// runEnv is run with environment variables.
func runEnv(t *testing.T, env map[string]string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	st := &State{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb, Args: args,
		Getenv: func(k string) string { return env[k] }, Context: context.Background()}
	code = Main(st)
	return code, out.String(), errb.String()
}

// TestSimPartitionsMerge: two partitions of seeds 1-24, one by --partition,
// one by a Kubernetes Indexed Job's environment, merged by tasksim report
// sim-merge, are the result of one run of seeds 1-24, wall time aside.
func TestSimPartitionsMerge(t *testing.T) {
	dir := t.TempDir()
	p0, p1, one, merged := filepath.Join(dir, "p0.json"), filepath.Join(dir, "p1.json"), filepath.Join(dir, "one.json"), filepath.Join(dir, "merged.json")
	common := []string{"sim", "--seeds", "24", "--no-faults", "--tasks", "3", "--shrink", "none", "--out", dir}
	code, stdout, stderr := run(t, "", append(common, "--partition", "0/2", "--json", p0)...)
	if code != ExitOK || !strings.Contains(stdout, "partition 0/2: seeds 1-12") {
		t.Fatalf("partition 0/2: exit %d: %s%s", code, stdout, stderr)
	}
	env := map[string]string{"JOB_COMPLETION_INDEX": "1", "TASKSIM_SIM_PARTITIONS": "2"}
	code, stdout, stderr = runEnv(t, env, append(common, "--json", p1)...)
	if code != ExitOK || !strings.Contains(stdout, "partition 1/2: seeds 13-24") {
		t.Fatalf("partition from the environment: exit %d: %s%s", code, stdout, stderr)
	}
	if code, stdout, stderr = run(t, "", append(common, "--json", one)...); code != ExitOK {
		t.Fatalf("one run: exit %d: %s%s", code, stdout, stderr)
	}
	code, stdout, stderr = run(t, "", "report", "sim-merge", "-o", merged, p0, p1)
	if code != ExitOK || !strings.Contains(stdout, "seeds 1-24") || !strings.Contains(stdout, "24 runs") {
		t.Fatalf("sim-merge: exit %d: %s%s", code, stdout, stderr)
	}
	read := func(path string) sim.Report {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		r, err := sim.ParseReport(path, b)
		if err != nil {
			t.Fatal(err)
		}
		if r.Timing.WallNs <= 0 {
			t.Errorf("%s: no wall time", path)
		}
		r.Timing, r.Summary.Wall = sim.Timing{}, 0
		return r
	}
	a, b := read(merged), read(one)
	if a.Schema != sim.ReportSchema || a.Summary.Runs != 24 || len(a.Seeds) != 1 {
		t.Errorf("merged: %+v", a)
	}
	if diff := cmp.Diff(b, a); diff != "" {
		t.Errorf("merged partitions differ from one run (-one +merged):\n%s", diff)
	}
}

// Bad input to tasksim report sim-merge: one line, exit 2.
func TestReportSimMergeBadInput(t *testing.T) {
	dir := t.TempDir()
	part := filepath.Join(dir, "p.json")
	if code, stdout, stderr := run(t, "", "sim", "--seeds", "2", "--no-faults", "--tasks", "1", "--json", part); code != ExitOK {
		t.Fatalf("exit %d: %s%s", code, stdout, stderr)
	}
	other := filepath.Join(dir, "other.json")
	os.WriteFile(other, []byte(`{"schema":"tasksim.load/v1"}`), 0o644)
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"not json", []string{"report", "sim-merge", filepath.Join("testdata", "..", "sim.go")}, "not a tasksim sim result"},
		{"another schema", []string{"report", "sim-merge", other}, `schema "tasksim.load/v1"`},
		{"overlapping partitions", []string{"report", "sim-merge", part, part}, "seed 1 is in two of the results"},
		{"missing file", []string{"report", "sim-merge", filepath.Join(dir, "none.json")}, "none.json"},
	} {
		t.Run(tc.name, func(t *testing.T) { wantBadInput(t, tc.want, tc.args...) })
	}
}

// TestSimBug: with a planted bug, tasksim sim finds it, shrinks it, and
// the reproduce command it prints fails again with the same rule.
func TestSimBug(t *testing.T) {
	dir := t.TempDir()
	code, stdout, stderr := run(t, "", "sim", "--seeds", "3", "--bug", "empty-partial", "--out", dir)
	if code != ExitFindings || !strings.Contains(stdout, "FAIL S2679-CONTENT") {
		t.Fatalf("exit %d: %s%s", code, stdout, stderr)
	}
	_, repro, ok := strings.Cut(stdout, "reproduce: tasksim ")
	if !ok {
		t.Fatalf("no reproduce command: %s", stdout)
	}
	repro, _, _ = strings.Cut(repro, "\n")
	args := strings.Fields(repro)
	if !strings.Contains(repro, "--bug empty-partial") {
		t.Errorf("reproduce %q: want --bug empty-partial", repro)
	}
	code, stdout, stderr = run(t, "", args...)
	if code != ExitFindings || !strings.Contains(stdout, "FAIL S2679-CONTENT") || !strings.Contains(stdout, "1 runs") {
		t.Errorf("reproduce: exit %d: %s%s", code, stdout, stderr)
	}
}

// stopSimAt makes tasksim sim stop as a SIGINT would, deterministically:
// after run k ended (the context is cancelled as it returns) or, with
// inRun, during run k (it is cut short: cancelled, it returns the
// context's error). It returns how many runs were asked for.
func stopSimAt(t *testing.T, k int, inRun bool, cancel context.CancelFunc) *int {
	t.Helper()
	orig := simRun
	t.Cleanup(func() { simRun = orig })
	runs := 0
	simRun = func(ctx context.Context, s sim.Schedule, o *sim.RunOptions) (*sim.Result, error) {
		runs++
		if runs == k && inRun {
			cancel()
			return nil, fmt.Errorf("run cut short: %w", ctx.Err())
		}
		res, err := orig(ctx, s, o)
		if runs == k {
			cancel()
		}
		return res, err
	}
	return &runs
}

// simState is a State whose context the test cancels.
func simState(ctx context.Context, stdout, stderr *bytes.Buffer, args ...string) *State {
	return &State{Stdin: strings.NewReader(""), Stdout: stdout, Stderr: stderr, Args: args,
		Getenv: func(string) string { return "" }, Context: ctx}
}

// TestSimInterrupted: an interrupted tasksim sim prints the summary of the
// runs that ended, writes --json and --junit for them and exits 130, or 1
// when one of them failed a rule. It used to exit 0 with only "context
// canceled", writing nothing.
func TestSimInterrupted(t *testing.T) {
	for _, tc := range []struct {
		name        string
		args        []string
		stopAt      int
		inRun       bool
		code        int
		runs, fails int
		stderr      string
		notShrunk   string
	}{
		{"between runs, none failed", []string{"--no-faults"}, 3, false, ExitInterrupted, 3, 0,
			"sim interrupted before its end; 3 of 1000 runs ended, none failed", ""},
		{"in a run, some failed", []string{"--bug", "empty-partial", "--shrink", "none"}, 3, true, ExitFindings, 2, 2,
			"interrupted after 2 of 1000 runs; 2 of them failed a rule", ""},
		{"while shrinking", []string{"--bug", "empty-partial"}, 1, false, ExitFindings, 1, 1,
			"interrupted after 1 of 1000 runs; 1 of them failed a rule", "interrupted while shrinking"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			js, junit, out := filepath.Join(dir, "sim.json"), filepath.Join(dir, "sim.xml"), filepath.Join(dir, "failures")
			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			asked := stopSimAt(t, tc.stopAt, tc.inRun, cancel)
			var stdout, stderr bytes.Buffer
			args := append([]string{"sim", "--seeds", "1000", "--tasks", "2", "--transport", "stdio", "--json", js, "--junit", junit, "--out", out}, tc.args...)
			code := Main(simState(ctx, &stdout, &stderr, args...))
			if code != tc.code || strings.TrimSpace(stderr.String()) != "tasksim: "+tc.stderr {
				t.Fatalf("exit %d, want %d; stderr %q, want %q\nstdout:\n%s", code, tc.code, stderr.String(), tc.stderr, stdout.String())
			}
			if *asked != tc.stopAt {
				t.Errorf("%d runs started, want %d: the command went on after the interrupt", *asked, tc.stopAt)
			}
			wantOut := fmt.Sprintf("%d runs, ", tc.runs)
			wantSeeds := []sim.SeedRange{{First: 1, Last: uint64(tc.runs)}}
			wantEnd := fmt.Sprintf("interrupted: %d of 1000 runs ended (seeds %s)\n", tc.runs, sim.SeedsText(wantSeeds))
			if !strings.Contains(stdout.String(), wantOut) || !strings.HasSuffix(stdout.String(), wantEnd) {
				t.Errorf("stdout lacks %q or does not end with %q:\n%s", wantOut, wantEnd, stdout.String())
			}
			b, err := os.ReadFile(js)
			if err != nil {
				t.Fatalf("--json not written: %v", err)
			}
			rep, err := sim.ParseReport(js, b)
			if err != nil {
				t.Fatal(err)
			}
			if !rep.Interrupted || rep.Summary.Runs != tc.runs || rep.Summary.Failures != tc.fails || len(rep.Failures) != tc.fails || !cmp.Equal(rep.Seeds, wantSeeds) {
				t.Errorf("--json: interrupted %v, %d runs, %d failures (%d listed), seeds %v; want true, %d, %d, %v",
					rep.Interrupted, rep.Summary.Runs, rep.Summary.Failures, len(rep.Failures), rep.Seeds, tc.runs, tc.fails, wantSeeds)
			}
			if tc.notShrunk != "" {
				f := rep.Failures[0]
				if f.NotShrunk != tc.notShrunk || f.Schedule == "" {
					t.Errorf("failure: notShrunk %q, schedule %q; want %q and the schedule kept", f.NotShrunk, f.Schedule, tc.notShrunk)
				} else if _, err := os.Stat(f.Schedule); err != nil {
					t.Errorf("the failing schedule is not in --out: %v", err)
				}
			}
			x, err := os.ReadFile(junit)
			if err != nil {
				t.Fatalf("--junit not written: %v", err)
			}
			head := fmt.Sprintf(`<testsuite name="tasksim sim" tests="%d" failures="%d" skipped="1"`, tc.runs+1, tc.fails)
			if !strings.Contains(string(x), head) || !strings.Contains(string(x), fmt.Sprintf(`<skipped message="interrupted after %d of 1000 runs">`, tc.runs)) {
				t.Errorf("--junit lacks %q and the interrupted testcase:\n%s", head, x)
			}
		})
	}
}

// TestSimHugeSeedsBoundedMemory: tasksim sim --seeds 1000000000000 draws
// each schedule as its run starts. It used to draw them all first (out of
// memory at once; 22 GB for 100,000,000 seeds, deaf to SIGINT while
// drawing). Interrupted after 40 runs, it has run 40, with a heap that
// does not grow with the number of seeds.
func TestSimHugeSeedsBoundedMemory(t *testing.T) {
	const k = 40
	dir := t.TempDir()
	js := filepath.Join(dir, "sim.json")
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	var base, at runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&base)
	asked := stopSimAt(t, k, false, func() {
		runtime.GC()
		runtime.ReadMemStats(&at)
		cancel()
	})
	var stdout, stderr bytes.Buffer
	code := Main(simState(ctx, &stdout, &stderr, "sim", "--seeds", "1000000000000", "--no-faults", "--tasks", "1", "--transport", "stdio",
		"--shrink", "none", "--json", js, "--junit", filepath.Join(dir, "sim.xml")))
	if code != ExitInterrupted || *asked != k {
		t.Fatalf("exit %d after %d runs, want %d after %d\nstdout:\n%s\nstderr:\n%s", code, *asked, ExitInterrupted, k, stdout.String(), stderr.String())
	}
	const bound = 64 << 20
	if grew := int64(at.HeapAlloc) - int64(base.HeapAlloc); grew > bound {
		t.Errorf("heap grew by %d MiB during the run, want under %d MiB", grew>>20, bound>>20)
	}
	b, err := os.ReadFile(js)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := sim.ParseReport(js, b)
	if err != nil {
		t.Fatal(err)
	}
	if want := []sim.SeedRange{{First: 1, Last: k}}; rep.Summary.Runs != k || !cmp.Equal(rep.Seeds, want) {
		t.Errorf("--json: %d runs, seeds %v; want %d, %v", rep.Summary.Runs, rep.Seeds, k, want)
	}
}

// TestSimTallyBounded: what tasksim sim keeps of its runs is bounded
// whatever their number: the first failures, the first testcases, and
// counts of the rest.
func TestSimTallyBounded(t *testing.T) {
	tally := simTally{maxFailures: 2, maxCases: 3}
	for seed := uint64(1); seed <= 20; seed++ {
		res := &sim.Result{Schedule: sim.Schedule{Seed: seed}, Verdict: &check.Verdict{}}
		c := simCase{name: fmt.Sprint("seed ", seed)}
		var fail *sim.Failure
		if seed%4 == 0 { // seeds 4, 8, 12, 16, 20 fail
			res.Liveness = []sim.Finding{{Rule: sim.RuleLiveness, Message: "hung"}}
			c.rules = []string{sim.RuleLiveness}
			fail = &sim.Failure{Seed: seed, Rules: c.rules}
		}
		tally.add(res, c, fail)
	}
	var names []string
	for _, c := range tally.cases {
		names = append(names, c.name)
	}
	got := fmt.Sprintf("runs %d failures %d listed %d omitted %d; cases %v; more passed %d, failed %d; seeds %v",
		tally.sum.Runs, tally.sum.Failures, len(tally.failures), tally.failuresOmitted, names, tally.passOmitted, tally.failOmitted, tally.seeds.Ranges())
	want := "runs 20 failures 5 listed 2 omitted 3; cases [seed 1 seed 2 seed 3 seed 4 seed 8]; more passed 12, failed 3; seeds [{1 20}]"
	if got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	var b bytes.Buffer
	if err := writeSimJUnit(&b, &tally, false, 20); err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{`tests="7" failures="3"`, `<testcase name="12 more runs passed"`, `<testcase name="3 more runs failed"`} {
		if !strings.Contains(b.String(), s) {
			t.Errorf("--junit lacks %q:\n%s", s, b.String())
		}
	}
}

// TestSimOutputsCheckedFirst: every output path is checked before any is
// written: a bad one is one line and exit 2, and no file is touched. The
// trace used to be overwritten before a --html directory was found.
func TestSimOutputsCheckedFirst(t *testing.T) {
	for _, tc := range []struct {
		name string
		args func(dir, trace string) []string
		want string
	}{
		{"--html a directory", func(dir, trace string) []string { return []string{"--trace", trace, "--html", dir} }, "is a directory"},
		{"--json in no directory", func(dir, trace string) []string {
			return []string{"--trace", trace, "--json", filepath.Join(dir, "none", "sim.json")}
		}, "no directory"},
		{"--junit the trace", func(dir, trace string) []string { return []string{"--trace", trace, "--junit", trace} }, "--trace writes there too"},
		{"--json the trace's HTTP record", func(dir, trace string) []string {
			return []string{"--trace", trace, "--json", httpTracePath(trace)}
		}, "--trace writes there too"},
		{"--out a file", func(dir, trace string) []string {
			return []string{"--html", filepath.Join(dir, "x.html"), "--out", trace}
		}, "not a directory"},
		{"--out under a file", func(dir, trace string) []string {
			return []string{"--json", filepath.Join(dir, "x.json"), "--out", filepath.Join(trace, "failures")}
		}, "not a directory"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			trace := filepath.Join(dir, "keep.trace")
			if err := os.WriteFile(trace, []byte("not to be lost"), 0o644); err != nil {
				t.Fatal(err)
			}
			wantBadInput(t, tc.want, append([]string{"sim", "--seed", "1", "--tasks", "1", "--transport", "stdio"}, tc.args(dir, trace)...)...)
			if b, _ := os.ReadFile(trace); string(b) != "not to be lost" {
				t.Errorf("%s was touched: %.40q", trace, b)
			}
			if ents, _ := os.ReadDir(dir); len(ents) != 1 {
				t.Errorf("files left in %s: %v", dir, ents)
			}
		})
	}
}
