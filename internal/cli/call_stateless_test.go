package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// tasksim call speaks 2026-07-28 when the server lists it in
// server/discover (auto), 2025-11-25 when asked or when a 2025-11-25 flag
// is given; input answers come from --answer and --answers.
func TestCallRevision2026(t *testing.T) {
	url := referenceServer(t)
	for _, tc := range []struct {
		name     string
		args     []string
		code     int
		out, err string
	}{
		{"auto", []string{"--tool", "greet", "--args", `{"name":"Bob"}`}, ExitOK, "Hello, Bob!", "2026-07-28 · no task · answered complete"},
		{"task", []string{"--revision", "2026-07-28", "--tool", "slow_compute", "--args", `{"seconds":0.01}`}, ExitOK, "Computed", " completed · "},
		{"legacy asked", []string{"--revision", "2025-11-25", "--tool", "sleep", "--args", `{"durationMs":1}`}, ExitOK, "", "mode task, answered task"},
		{"legacy flag", []string{"--tool", "sleep", "--args", `{"durationMs":1}`, "--mode", "plain"}, ExitOK, "", "no task · mode plain"},
		{"input before the task", []string{"--tool", "test_tool_with_task", "--answer", `user_name=accept:{"name":"Al"}`}, ExitOK, "Hello, Al!", "1 input rounds"},
		{"input in the task", []string{"--tool", "confirm_delete", "--args", `{"filename":"a"}`, "--answer", "*=decline"}, ExitOK, "Kept a", "1 tasks/update"},
		{"no answer", []string{"--tool", "test_tool_with_task"}, ExitUsage, "", "give it with --answer"},
		{"bad answer", []string{"--tool", "greet", "--answer", "k=maybe"}, ExitUsage, "", "want accept, decline or cancel"},
		{"bad revision", []string{"--tool", "greet", "--revision", "2024-01-01"}, ExitUsage, "", "unknown protocol revision"},
		{"cancel", []string{"--tool", "slow_compute", "--args", `{"seconds":600}`, "--cancel-after", "10ms"}, ExitOK, "", "cancelled by the client"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, stdout, stderr := run(t, "", append([]string{"call", "--server", url}, tc.args...)...)
			if code != tc.code || !strings.Contains(stdout, tc.out) || !strings.Contains(stderr, tc.err) {
				t.Errorf("exit %d, stdout %q, stderr %q; want %d, %q, %q", code, stdout, stderr, tc.code, tc.out, tc.err)
			}
		})
	}
}

// Over stdio, against tasksim serve --stdio as a child process, with the
// answers in a file.
func TestCallRevision2026Stdio(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv(asTasksimEnv, "1")
	answers := filepath.Join(t.TempDir(), "answers.json")
	if err := os.WriteFile(answers, []byte(`{"*":{"action":"accept","content":{"name":"Ann"}}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := run(t, "", "call", "--server-cmd", exe+" serve --stdio", "--tool", "multi_input", "--answers", answers)
	if code != ExitOK || strings.TrimSpace(stdout) != "Received: Ann, Ann" || !strings.Contains(stderr, "2026-07-28 · task ") {
		t.Errorf("exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
}

// call --listen follows the task by push over HTTP and stdio, and
// says so; 2025-11-25 has no subscriptions/listen (exit 2).
func TestCallListen2026(t *testing.T) {
	url := referenceServer(t)
	for _, tc := range []struct {
		name     string
		args     []string
		code     int
		out, err string
	}{
		{"http", []string{"--server", url, "--listen", "--tool", "slow_compute", "--args", `{"seconds":0.05,"label":"pushed"}`}, ExitOK, "pushed", " completed · 0 polls · 1 listen, "},
		{"input", []string{"--server", url, "--listen", "--tool", "confirm_delete", "--args", `{"filename":"a"}`, "--answer", "*=decline"}, ExitOK, "Kept a", "1 listen"},
		{"legacy", []string{"--server", url, "--listen", "--revision", "2025-11-25", "--tool", "sleep"}, ExitUsage, "", "only 2026-07-28 has"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, stdout, stderr := run(t, "", append([]string{"call"}, tc.args...)...)
			if code != tc.code || !strings.Contains(stdout, tc.out) || !strings.Contains(stderr, tc.err) {
				t.Errorf("exit %d, stdout %q, stderr %q; want %d, %q, %q", code, stdout, stderr, tc.code, tc.out, tc.err)
			}
		})
	}
	t.Run("stdio", func(t *testing.T) {
		exe, err := os.Executable()
		if err != nil {
			t.Fatal(err)
		}
		t.Setenv(asTasksimEnv, "1")
		code, stdout, stderr := run(t, "", "call", "--server-cmd", exe+" serve --stdio", "--listen", "--tool", "slow_compute", "--args", `{"seconds":0.05,"label":"pushed"}`, "--json")
		if code != ExitOK || !strings.Contains(stdout, `"listens": 1`) || !strings.Contains(stdout, `"polls": 0`) || !strings.Contains(stdout, "pushed") {
			t.Errorf("exit %d, stdout %q, stderr %q", code, stdout, stderr)
		}
	})
}
