package cli

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

// run executes the CLI in-process.
func run(t *testing.T, stdin string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	st := &State{
		Stdin:   strings.NewReader(stdin),
		Stdout:  &out,
		Stderr:  &errb,
		Args:    args,
		Getenv:  func(string) string { return "" },
		Context: context.Background(),
	}
	code = Main(st)
	return code, out.String(), errb.String()
}

func TestUsageErrors(t *testing.T) {
	cases := []struct {
		name string
		args []string
		want string
	}{
		{"unknown command", []string{"frobnicate"}, "unknown command"},
		{"unknown flag", []string{"serve", "--nope"}, "unknown flag"},
		{"bad duration", []string{"serve", "--poll-interval", "soon"}, "poll-interval"},
		{"bad mode", []string{"serve", "--stdio", "--modes", "immediate,warp"}, `unknown response mode "warp"`},
		{"bad log level", []string{"serve", "--stdio", "--log-level", "loud"}, "--log-level"},
		{"non-positive limit", []string{"serve", "--stdio", "--max-tasks-per-session", "0"}, "must be positive"},
		{"non-positive budget", []string{"serve", "--stdio", "--max-task-bytes", "0"}, "must be positive"},
		{"negative cap", []string{"serve", "--stdio", "--max-sessions", "-1"}, "--max-sessions"},
		{"bad byte count", []string{"serve", "--max-server-bytes", "1GiB"}, "max-server-bytes"},
		{"extra argument", []string{"serve", "x"}, "unknown command"},
		{"ready-fd with stdio", []string{"serve", "--stdio", "--ready-fd", "3"}, "--ready-fd"},
		{"negative ready-fd", []string{"serve", "--ready-fd", "-1"}, "--ready-fd"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			code, _, stderr := run(t, "", tc.args...)
			if code != ExitUsage {
				t.Errorf("exit code %d, want %d", code, ExitUsage)
			}
			if strings.Count(stderr, "\n") != 1 || !strings.HasPrefix(stderr, "tasksim: ") || !strings.Contains(stderr, tc.want) {
				t.Errorf("stderr %q: want one line mentioning %q", stderr, tc.want)
			}
		})
	}
}

func TestServeListenFailure(t *testing.T) {
	code, _, stderr := run(t, "", "serve", "--addr", "127.0.0.1:99999")
	if code != ExitRuntime || !strings.Contains(stderr, "listen") {
		t.Errorf("exit %d, stderr %q; want %d and a listen error", code, stderr, ExitRuntime)
	}
}

func TestServeStdio(t *testing.T) {
	in := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}
{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"instant","arguments":{"text":"hi"}}}
`
	code, stdout, stderr := run(t, in, "serve", "--stdio", "--log-level", "error")
	if code != ExitOK {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
	lines := strings.Split(strings.TrimSpace(stdout), "\n")
	if len(lines) != 2 || !strings.Contains(lines[0], `"protocolVersion":"2025-11-25"`) || !strings.Contains(lines[1], `"text":"hi"`) {
		t.Errorf("stdout:\n%s", stdout)
	}
}

func TestExitCodeMapping(t *testing.T) {
	cases := []struct {
		err  error
		want int
	}{
		{nil, ExitOK},
		{&FindingsError{Summary: "2 rules violated"}, ExitFindings},
		{usagef("bad"), ExitUsage},
		{context.Canceled, ExitOK},
		{bytes.ErrTooLarge, ExitRuntime},
	}
	for _, tc := range cases {
		if got := ExitCode(tc.err); got != tc.want {
			t.Errorf("ExitCode(%v) = %d, want %d", tc.err, got, tc.want)
		}
	}
}
