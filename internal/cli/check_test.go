package cli

import (
	"encoding/json"
	"encoding/xml"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tasksim/tasksim/internal/refserver"
	"github.com/tasksim/tasksim/sim"
	"github.com/tasksim/tasksim/sim/check"
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
		{"server command not found", []string{"check", "--server-cmd", "/nonexistent/tasksim-no-such-server --stdio"}, ExitRuntime, "cannot start it"},
		{"server command not on PATH", []string{"check", "--server-cmd", "tasksim-no-such-server --stdio"}, ExitRuntime, "cannot start it"},
		{"no target", []string{"check"}, ExitUsage, "--server"},
		{"unknown client scenario", []string{"check", "--client-cmd", "true", "--scenario", "nope"}, ExitUsage, "no such scenario"},
		{"bad client transport", []string{"check", "--client-cmd", "true", "--client-transport", "pigeon"}, ExitUsage, "want http or stdio"},
		{"client transport without client", []string{"check", "--server", "http://127.0.0.1:1/mcp", "--client-transport", "stdio"}, ExitUsage, "--client-cmd"},
		{"bad relay spec", []string{"check", "--stdio-relay", "nowhere"}, ExitUsage, "HOST:PORT/TOKEN"},
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

// TestCheckNotMCP: an HTTP server that is not MCP is exit 3, and says so.
func TestCheckNotMCP(t *testing.T) {
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		io.WriteString(w, "<html>hello</html>")
	}))
	defer hs.Close()
	code, _, stderr := run(t, "", "check", "--server", hs.URL+"/mcp")
	if code != ExitRuntime || !strings.Contains(stderr, "not an MCP server") || strings.Count(strings.TrimSpace(stderr), "\n") > 0 {
		t.Errorf("exit %d, stderr %q; want exit 3 and one line saying not an MCP server", code, stderr)
	}
}

// TestCheckClientNotFound: a client command that cannot start fails every
// scenario (exit 1) with that reason, over HTTP and over stdio.
func TestCheckClientNotFound(t *testing.T) {
	for _, transport := range []string{"http", "stdio"} {
		code, stdout, _ := run(t, "", "check", "--client-transport", transport, "--client-cmd", "/nonexistent/tasksim-no-such-client --server")
		if code != ExitFindings || !strings.Contains(stdout, "never connected") || !strings.Contains(stdout, "no such file") || strings.Contains(stdout, "\nPASS ") {
			t.Errorf("%s: exit %d, want 1, every scenario failed as never connected:\n%s", transport, code, stdout)
		}
	}
}

func TestCheckList(t *testing.T) {
	code, stdout, _ := run(t, "", "check", "--list")
	if code != 0 || !strings.Contains(stdout, "http-resume") {
		t.Errorf("exit %d, stdout %q", code, stdout)
	}
}

// TestCheckReferencePeers: the reference server (over Streamable HTTP, and
// the tasksim binary's own over stdio) and the reference client (tasksim
// call, over HTTP and over stdio) pass every scenario, and the reports
// parse.
func TestCheckReferencePeers(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv(asTasksimEnv, "1") // inherited by the children
	dir := t.TempDir()
	junit, js := filepath.Join(dir, "r.xml"), filepath.Join(dir, "r.json")
	code, stdout, stderr := run(t, "", "check", "--server-cmd", exe+" serve --stdio", "--junit", junit, "--json", js)
	if code != 0 {
		t.Fatalf("--server-cmd: exit %d\n%s\n%s", code, stdout, stderr)
	}
	b, err := os.ReadFile(junit)
	if err != nil || xml.Unmarshal(b, new(struct{})) != nil {
		t.Errorf("junit: %v\n%s", err, b)
	}
	var doc struct {
		Schema    string `json:"schema"`
		Scenarios []struct {
			Name, Status string
		} `json:"scenarios"`
	}
	if b, err = os.ReadFile(js); err != nil || json.Unmarshal(b, &doc) != nil || doc.Schema != "tasksim.check/v1" || len(doc.Scenarios) == 0 {
		t.Errorf("json: %v %+v", err, doc)
	}
	url, _ := refserver.Start(t, nil)
	if code, stdout, stderr = run(t, "", "check", "--server", url); code != 0 || strings.Contains(stdout, "\nSKIP ") {
		t.Errorf("--server: exit %d (want 0, no scenario skipped)\n%s\n%s", code, stdout, stderr)
	}
	// 5 chunks 80ms apart outlast two pollIntervals (200ms) of
	// client-poll-interval: the client polls, and is judged on it.
	call := exe + ` call --tool slow_text --args '{"chunks":5,"intervalMs":80}' --mode streaming`
	for _, tc := range []struct {
		transport, flag string
		skips           int
	}{{"http", "--server", 0}, {"stdio", "--server-cmd", 1}} {
		code, stdout, stderr = run(t, "", "check", "--client-transport", tc.transport, "--client-cmd", call+" "+tc.flag, "--json", js)
		if code != 0 {
			t.Errorf("--client-cmd over %s: exit %d\n%s\n%s", tc.transport, code, stdout, stderr)
			continue
		}
		var res sim.SuiteResult
		if b, err = os.ReadFile(js); err != nil || json.Unmarshal(b, &res) != nil {
			t.Fatalf("json: %v\n%s", err, b)
		}
		skips := 0
		for _, r := range res.Scenarios {
			if r.Status == check.Skip {
				skips++
				continue
			}
			for _, o := range r.Rules {
				if o.Status != check.Pass {
					t.Errorf("--client-cmd over %s: %s: rule %s %s (%s)", tc.transport, r.Name, o.ID, o.Status, o.Why)
				}
			}
		}
		if skips != tc.skips {
			t.Errorf("--client-cmd over %s: %d scenarios skipped, want %d\n%s", tc.transport, skips, tc.skips, stdout)
		}
	}
}

// TestCheckJUnitFailure: a failed rule is a testcase with its evidence,
// the trace and the command that reproduces it.
func TestCheckJUnitFailure(t *testing.T) {
	res := &sim.SuiteResult{Target: "http://x/mcp", Seed: 7, Scenarios: []*sim.ScenarioResult{{
		Name: "http-origin", Status: check.Fail, Trace: "/tmp/t/http-origin.trace",
		Rules: []sim.RuleOutcome{{ID: "HTTP-ORIGIN", Status: check.Fail, Findings: []check.Finding{{Records: []uint64{3}, Message: "initialize with Origin http://evil.example answered HTTP 200"}}}},
	}}}
	var b strings.Builder
	o := &CheckOptions{Server: "http://x/mcp", Seed: 7}
	if err := writeCheckJUnit(&b, res, reproCommand(o)); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{`failures="1"`, `name="http-origin HTTP-ORIGIN"`, "records 3: initialize with Origin", "trace: /tmp/t/http-origin.trace", "reproduce: tasksim check --server http://x/mcp --scenario http-origin --seed 7"} {
		if !strings.Contains(out, want) {
			t.Errorf("JUnit lacks %q:\n%s", want, out)
		}
	}
}
