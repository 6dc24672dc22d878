package cli

import (
	"strings"
	"testing"
)

// TestProxyStdioRevision: behind tasksim proxy over stdio, the two
// directions follow one connection's revisions, so revision= confines a
// fault to one era of the dual-era reference server: the answer to the
// stateless server/discover is dropped, those of the session pass.
func TestProxyStdioRevision(t *testing.T) {
	in := `{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}
{"jsonrpc":"2.0","id":2,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}
{"jsonrpc":"2.0","id":3,"method":"tools/list"}
`
	args := append([]string{"proxy", "--seed", "1", "--fault", "drop-response:revision=2026-07-28", "--"}, helperCommand(t, "serve", "--stdio", "--log-level", "error")...)
	code, stdout, stderr := run(t, in, args...)
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	lines := strings.Split(strings.TrimSpace(stdout), "\n")
	if len(lines) != 2 || !strings.Contains(lines[0], `"id":2`) || !strings.Contains(lines[1], `"id":3`) {
		t.Errorf("stdout:\n%s", stdout)
	}
	if !strings.Contains(stderr, "fired 1 times") {
		t.Errorf("stderr %q", stderr)
	}
}
