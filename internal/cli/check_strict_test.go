package cli

import (
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tasksim/tasksim/internal/plant"
	"github.com/tasksim/tasksim/mcp/server"
	"github.com/tasksim/tasksim/mcp/streamhttp"
)

// TestCheckStrictSessionless: a server answering a request without a
// session id 200 with a JSON-RPC error (the Go SDK everything-server with
// -stateless=false) breaks a SHOULD: tasksim check says WARN and exits 0,
// its JUnit has no failure; with --strict it is FAIL, exit 1. tasksim
// trace check of the scenario's trace says the same.
func TestCheckStrictSessionless(t *testing.T) {
	hs := httptest.NewServer(plant.SessionlessOK(streamhttp.NewHandler(server.New(nil), nil)))
	t.Cleanup(hs.Close)
	dir := t.TempDir()
	junit, traces := filepath.Join(dir, "r.xml"), filepath.Join(dir, "traces")
	code, stdout, stderr := run(t, "", "check", "--server", hs.URL+"/mcp", "--scenario", "http-session", "--junit", junit, "--traces", traces)
	if code != ExitOK {
		t.Fatalf("exit %d, want %d\n%s\n%s", code, ExitOK, stdout, stderr)
	}
	for _, want := range []string{"WARN  http-session", "WARN HTTP-SESSION-MISSING", "want 400", "1 scenarios: 0 passed, 1 warned, 0 failed, 0 skipped", "HTTP-SESSION-MISSING      SHOULD      0     1     0     0"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("stdout lacks %q:\n%s", want, stdout)
		}
	}
	b, err := os.ReadFile(junit)
	if err != nil {
		t.Fatal(err)
	}
	if x := string(b); !strings.Contains(x, `failures="0"`) || !strings.Contains(x, "<system-out>WARN: SHOULD broken") {
		t.Errorf("junit:\n%s", x)
	}
	code, stdout, stderr = run(t, "", "check", "--strict", "--server", hs.URL+"/mcp", "--scenario", "http-session")
	if code != ExitFindings || !strings.Contains(stdout, "FAIL HTTP-SESSION-MISSING") || !strings.Contains(stderr, "HTTP-SESSION-MISSING") {
		t.Errorf("--strict: exit %d, want %d\n%s\n%s", code, ExitFindings, stdout, stderr)
	}

	trace := filepath.Join(traces, "http-session.trace")
	code, stdout, stderr = run(t, "", "trace", "check", trace)
	if code != ExitOK || !strings.Contains(stdout, "WARN  HTTP-SESSION-MISSING") {
		t.Errorf("trace check: exit %d, want %d\n%s\n%s", code, ExitOK, stdout, stderr)
	}
	code, stdout, stderr = run(t, "", "trace", "check", "--strict", trace)
	if code != ExitFindings || !strings.Contains(stdout, "FAIL  HTTP-SESSION-MISSING") {
		t.Errorf("trace check --strict: exit %d, want %d\n%s\n%s", code, ExitFindings, stdout, stderr)
	}
}
