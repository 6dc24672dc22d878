package cli

import (
	"strings"
	"testing"

	"github.com/tasksim/tasksim/internal/plant"
)

// TestServeBug: tasksim serve --bug NAME serves the reference server with
// that bug planted, on a real HTTP server on 127.0.0.1: tasksim check
// against it fails the bug's rule. One bug of each way of planting: a
// decorator of the server, a seam of its options, a decorator of the
// transport's handler.
func TestServeBug(t *testing.T) {
	for _, tc := range []struct{ bug, scenario string }{
		{"seqnr-from-zero", "sep1905-streaming"},
		{"sequential-ids", "task-id-entropy"},
		{"missing-session-404", "http-session"},
	} {
		t.Run(tc.bug, func(t *testing.T) {
			rule := plant.MustNamed(tc.bug).Rule
			url, _, stderr := serveReady(t, "--log-level", "warn", "--bug", tc.bug)
			code, stdout, errOut := run(t, "", "check", "--strict", "--server", url, "--scenario", tc.scenario)
			if code != ExitFindings || !strings.Contains(stdout, "FAIL "+rule) {
				t.Errorf("check: exit %d, want %d with FAIL %s\n%s\n%s", code, ExitFindings, rule, stdout, errOut)
			}
			if !strings.Contains(stderr.String(), "planted bug") || !strings.Contains(stderr.String(), tc.bug) {
				t.Errorf("serve's log does not say it plants %s: %q", tc.bug, stderr.String())
			}
		})
	}
}

// TestBugBadInput: a --bug that names no bug, a client bug for serve, and
// a transport bug over stdio are usage errors, in one line.
func TestBugBadInput(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"unknown bug for serve", []string{"serve", "--addr", "127.0.0.1:0", "--bug", "gremlins"}, `no such planted bug "gremlins"`},
		{"client bug for serve", []string{"serve", "--addr", "127.0.0.1:0", "--bug", "client-no-resume"}, "bug of the client"},
		{"transport bug over stdio", []string{"serve", "--stdio", "--bug", "broadcast"}, "not with --stdio"},
		{"unknown bug for sim", []string{"sim", "--bug", "gremlins"}, "--bug list lists them"},
	} {
		t.Run(tc.name, func(t *testing.T) { wantBadInput(t, tc.want, tc.args...) })
	}
}

// TestBugList: --bug list lists the known bugs with their rules, the
// server's for serve and every one for sim, and both commands' help
// names the flag.
func TestBugList(t *testing.T) {
	for _, cmd := range []string{"serve", "sim"} {
		code, stdout, stderr := run(t, "", cmd, "--bug", "list")
		if code != ExitOK {
			t.Fatalf("%s --bug list: exit %d\n%s", cmd, code, stderr)
		}
		for _, b := range plant.Bugs() {
			listed := strings.Contains(stdout, b.Name+" ") && strings.Contains(stdout, b.Rule)
			if want := cmd == "sim" || !b.OnClient(); listed != want {
				t.Errorf("%s --bug list lists %s: %v, want %v\n%s", cmd, b.Name, listed, want, stdout)
			}
		}
		_, help, _ := run(t, "", cmd, "--help")
		if !strings.Contains(help, "--bug") || !strings.Contains(help, "--bug list") {
			t.Errorf("%s --help does not list --bug:\n%s", cmd, help)
		}
	}
}
