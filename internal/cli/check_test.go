package cli

import (
	"strings"
	"testing"
)

func TestCheckBadInput(t *testing.T) {
	cases := []struct {
		name string
		args []string
		code int
		want string
	}{
		{"unknown scenario", []string{"check", "--server", "http://127.0.0.1:1/mcp", "--scenario", "nope"}, ExitUsage, "no such scenario"},
		{"unreachable", []string{"check", "--server", "http://127.0.0.1:1/mcp"}, ExitRuntime, "cannot reach"},
		{"not MCP", []string{"check", "--server-cmd", "true"}, ExitRuntime, "not an MCP server"},
		{"no target", []string{"check"}, ExitUsage, "--server"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			code, _, stderr := run(t, "", tc.args...)
			if code != tc.code || !strings.Contains(stderr, tc.want) || strings.Count(strings.TrimSpace(stderr), "\n") > 0 {
				t.Errorf("exit %d, stderr %q; want exit %d and one line with %q", code, stderr, tc.code, tc.want)
			}
		})
	}
}

func TestCheckList(t *testing.T) {
	code, stdout, _ := run(t, "", "check", "--list")
	if code != 0 || !strings.Contains(stdout, "http-resume") {
		t.Errorf("exit %d, stdout %q", code, stdout)
	}
}
