package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

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
		{"fault needs http", []string{"sim", "--fault", "http-status:code=503"}, "needs HTTP"},
		{"unknown fault", []string{"sim", "--fault", "gremlins"}, "unknown fault"},
		{"bad mode", []string{"sim", "--mode", "telepathy"}, "unknown call mode"},
		{"zero seeds", []string{"sim", "--seeds", "0"}, "--seeds"},
		{"bad shrink", []string{"sim", "--seed", "1", "--shrink", "some"}, "--shrink"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, _, stderr := run(t, "", tc.args...)
			if code != ExitUsage {
				t.Errorf("exit %d, want %d; stderr %q", code, ExitUsage, stderr)
			}
			if strings.Count(strings.TrimRight(stderr, "\n"), "\n") != 0 || !strings.Contains(stderr, tc.want) {
				t.Errorf("stderr %q: want one line with %q", stderr, tc.want)
			}
		})
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
