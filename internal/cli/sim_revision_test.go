package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tasksim/tasksim/sim"
)

// tasksim sim --revision 2026-07-28 runs the stateless pair: the summary
// and --json say the revision and count the revision's faults alone; a
// kept schedule reruns with its revision; the trace header's command
// reproduces it.
func TestSimRevision26(t *testing.T) {
	dir := t.TempDir()
	js := filepath.Join(dir, "sim.json")
	tr := filepath.Join(dir, "one.trace")
	code, stdout, stderr := run(t, "", "sim", "--revision", "2026-07-28", "--seeds", "20", "--mode", "poll,listen", "--shrink", "none", "--json", js, "--out", dir)
	// The verdict is the rule catalog's (exit 0 or 1); the run itself
	// must not fail (exit 3) nor be refused (exit 2).
	if code != ExitOK && code != ExitFindings {
		t.Fatalf("exit %d: %s%s", code, stdout, stderr)
	}
	if !strings.HasPrefix(stdout, "revision 2026-07-28\n") && !strings.Contains(stdout, "\nrevision 2026-07-28\n") {
		t.Errorf("the summary does not say the revision: %s", stdout)
	}
	if !strings.Contains(stdout, "faults applied: delay ") || strings.Contains(stdout, "drop-partial") || strings.Contains(stdout, "server-restart") {
		t.Errorf("faults applied of another revision: %s", stdout)
	}
	var out struct {
		Summary sim.Summary `json:"summary"`
	}
	b, _ := os.ReadFile(js)
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	if out.Summary.Revision != sim.Revision20260728 || out.Summary.Runs != 20 {
		t.Errorf("--json summary: revision %q, %d runs", out.Summary.Revision, out.Summary.Runs)
	}
	if _, ok := out.Summary.Fired["duplicate-seqnr"]; ok {
		t.Errorf("--json counts a fault of 2025-11-25: %v", out.Summary.Fired)
	}
	if _, ok := out.Summary.Fired["ttl-expiry"]; !ok {
		t.Errorf("--json does not name every fault of the revision: %v", out.Summary.Fired)
	}
	code, stdout, stderr = run(t, "", "sim", "--revision", "2026-07-28", "--seed", "7", "--trace", tr, "--out", dir)
	if code != ExitOK && code != ExitFindings {
		t.Fatalf("exit %d: %s%s", code, stdout, stderr)
	}
	code, stdout, _ = run(t, "", "trace", "show", tr)
	if code != ExitOK || !strings.Contains(stdout, "# command: tasksim sim --seed 7 --revision 2026-07-28\n") || !strings.Contains(stdout, "protocol 2026-07-28") || !strings.Contains(stdout, "# revision: 2026-07-28\n") {
		t.Errorf("trace header: %s", firstLines(stdout, 8))
	}
	// A 2025-11-25 run says nothing of a revision, as before.
	code, stdout, stderr = run(t, "", "sim", "--seeds", "2", "--no-faults")
	if code != ExitOK || strings.Contains(stdout, "revision") {
		t.Errorf("a run of 2025-11-25: exit %d: %s%s", code, stdout, stderr)
	}
}

func firstLines(s string, n int) string {
	lines := strings.SplitN(s, "\n", n+1)
	return strings.Join(lines[:min(n, len(lines))], "\n")
}

// What a run of 2026-07-28 cannot do is bad input: one line, exit 2.
func TestSimRevision26BadInput(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"unknown revision", []string{"sim", "--revision", "2024-11-05"}, `revision "2024-11-05"`},
		{"duplicate-seqnr", []string{"sim", "--revision", "2026-07-28", "--fault", "duplicate-seqnr"}, "has no meaning on 2026-07-28"},
		{"drop-partial", []string{"sim", "--revision", "2026-07-28", "--fault", "drop-partial"}, "has no meaning on 2026-07-28"},
		{"server-restart", []string{"sim", "--revision", "2026-07-28", "--fault", "server-restart"}, "loss of the sessions"},
		{"seqnr selector", []string{"sim", "--revision", "2026-07-28", "--fault", "drop-response:seqnr=1"}, "seqnr="},
		{"seq selector", []string{"sim", "--revision", "2026-07-28", "--fault", "delay:seq=1"}, "seq="},
		{"stream=get", []string{"sim", "--revision", "2026-07-28", "--fault", "disconnect:stream=get"}, "stream=get"},
		{"mode of 2025-11-25", []string{"sim", "--revision", "2026-07-28", "--mode", "partial"}, "poll or listen"},
		{"planted bug", []string{"sim", "--revision", "2026-07-28", "--bug", "sequential-ids"}, "plants none yet"},
	} {
		t.Run(tc.name, func(t *testing.T) { wantBadInput(t, tc.want, tc.args...) })
	}
}
