package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

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
