package cli

import (
	"net"
	"strings"
	"testing"

	"github.com/tasksim/tasksim/load"
)

// A run in which every task failed is a finding, not a success (Hardening
// item 14). Here each task needs 3 × 200 ms and may take 1 ms.
func TestLoadAllTasksFailed(t *testing.T) {
	code, _, stderr := run(t, "", "load", "--in-process", "--mode", "sse", "--rate", "50", "--tasks", "3",
		"--chunks", "3", "--interval", "200ms", "--timeout", "1ms")
	if code != ExitFindings {
		t.Fatalf("exit %d, want %d; stderr:\n%s", code, ExitFindings, stderr)
	}
	lines := strings.Split(strings.TrimSpace(stderr), "\n")
	if last := lines[len(lines)-1]; !strings.Contains(last, "--max-failure-rate") || !strings.Contains(last, "sse 3 of 3") {
		t.Errorf("last line %q: want the failure rate named", last)
	}
}

func TestCheckFailureRate(t *testing.T) {
	res := func(started, failed int64) *load.Result {
		return &load.Result{Modes: []load.ModeResult{{Name: "sse", Started: started, Completed: started - failed, Failed: failed}}}
	}
	cases := []struct {
		name            string
		started, failed int64
		max             float64
		finding         bool
	}{
		{"none failed", 10, 0, 0.1, false},
		{"at the limit", 10, 1, 0.1, false},
		{"above the limit", 10, 2, 0.1, true},
		{"all failed", 4, 4, 0.1, true},
		{"all failed, limit off", 4, 4, 1, false},
		{"nothing started", 0, 0, 0, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := checkFailureRate(res(tc.started, tc.failed), tc.max)
			if got := err != nil; got != tc.finding || (got && ExitCode(err) != ExitFindings) {
				t.Errorf("err %v (exit %d), want finding %v", err, ExitCode(err), tc.finding)
			}
		})
	}
}

// --prom on a port in use cannot listen: a runtime failure, exit 3, as
// docs/cli.md says (Hardening item 14).
func TestLoadPromPortInUse(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	for _, flag := range []string{"--prom", "--dashboard"} {
		code, _, stderr := run(t, "", "load", "--in-process", "--tasks", "1", flag, ln.Addr().String())
		if code != ExitRuntime {
			t.Errorf("%s: exit %d, want %d; stderr %q", flag, code, ExitRuntime, stderr)
		}
		oneErrorLine(t, stderr, flag)
	}
}
