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

func TestCheckList(t *testing.T) {
	code, stdout, _ := run(t, "", "check", "--list")
	if code != 0 || !strings.Contains(stdout, "http-resume") {
		t.Errorf("exit %d, stdout %q", code, stdout)
	}
}

// TestCheckReferencePeers: the tasksim binary's own server over stdio and
// its own client (tasksim call) pass every scenario, and the reports parse.
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
	code, stdout, stderr = run(t, "", "check", "--client-cmd", exe+` call --tool slow_text --args '{"chunks":5,"intervalMs":40}' --mode streaming --server`)
	if code != 0 {
		t.Fatalf("--client-cmd: exit %d\n%s\n%s", code, stdout, stderr)
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
