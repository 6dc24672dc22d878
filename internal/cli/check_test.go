package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"encoding/xml"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/tasksim/tasksim/check"
	"github.com/tasksim/tasksim/internal/child/childtest"
	"github.com/tasksim/tasksim/internal/plant"
	"github.com/tasksim/tasksim/internal/refserver"
	"github.com/tasksim/tasksim/mcp/server"
	"github.com/tasksim/tasksim/mcp/streamhttp"
	"github.com/tasksim/tasksim/sim/suite"
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
		{"args without tool", []string{"check", "--server", "http://127.0.0.1:1/mcp", "--args", `{}`}, ExitUsage, "--args needs --tool"},
		{"args template not an object", []string{"check", "--server", "http://127.0.0.1:1/mcp", "--tool", "t", "--args", `{"ms":{{nope}}}`}, ExitUsage, "--args: with its placeholders filled, not a JSON object"},
		{"slow args without slow tool", []string{"check", "--server", "http://127.0.0.1:1/mcp", "--slow-args", `{"ms":{{durationMs}}}`}, ExitUsage, "--slow-args needs --slow-tool"},
		{"fail args not an object", []string{"check", "--server", "http://127.0.0.1:1/mcp", "--fail-tool", "f", "--fail-args", `[1]`}, ExitUsage, "--fail-args: with its placeholders filled, not a JSON object"},
		{"stream args without stream tool", []string{"check", "--server", "http://127.0.0.1:1/mcp", "--stream-args", `{}`}, ExitUsage, "--stream-args needs --stream-tool"},
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
		var res suite.SuiteResult
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
	res := &suite.SuiteResult{Target: "http://x/mcp", Seed: 7, Scenarios: []*suite.ScenarioResult{{
		Name: "http-origin", Status: check.Fail, Trace: "/tmp/t/http-origin.trace",
		Rules: []suite.RuleOutcome{{ID: "HTTP-ORIGIN", Status: check.Fail, Findings: []check.Finding{{Records: []uint64{3}, Message: "initialize with Origin http://evil.example answered HTTP 200"}}}},
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

// runCtx executes the CLI in-process with ctx as its signal context.
func runCtx(ctx context.Context, args ...string) (code int, stdout, stderr string) {
	var out, errb bytes.Buffer
	st := &State{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb, Args: args, Getenv: func(string) string { return "" }, Context: ctx}
	code = Main(st)
	return code, out.String(), errb.String()
}

// interruptWhen runs the CLI and interrupts it (ends its context, as
// SIGINT does) once file exists: the event that the run got that far.
func interruptWhen(t *testing.T, file string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	type result struct {
		code           int
		stdout, stderr string
	}
	got := make(chan result, 1)
	go func() {
		code, stdout, stderr := runCtx(ctx, args...)
		got <- result{code, stdout, stderr}
	}()
	childtest.WaitFile(t, file)
	cancel()
	r := <-got
	return r.code, r.stdout, r.stderr
}

// TestCheckClientInterrupted: a client check interrupted after its first
// scenario reports what finished, names what did not run, writes --json
// and --junit, and exits 130 when nothing failed, 1 when something did.
func TestCheckClientInterrupted(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv(asTasksimEnv, "1") // inherited by the children
	dir := t.TempDir()
	mark := filepath.Join(dir, "mark")
	t.Setenv("MARK", mark)
	for _, tc := range []struct {
		name, first string
		code        int
		status      check.Status
	}{
		{"passed so far", shellQuote(exe) + ` call --tool slow_text --args '{"chunks":3}' --mode streaming --server "$1"`, ExitInterrupted, check.Pass},
		{"failed so far", "exit 0", ExitFindings, check.Fail},
	} {
		t.Run(tc.name, func(t *testing.T) {
			os.Remove(mark)
			js, junit := filepath.Join(dir, "r.json"), filepath.Join(dir, "r.xml")
			script := `case "$TASKSIM_SCENARIO" in client-duplicates) ` + tc.first + `; exit;; esac; touch "$MARK"; exec sleep 1000`
			code, stdout, stderr := interruptWhen(t, mark, "check", "--client-cmd", "sh -c "+shellQuote(script)+" client", "--json", js, "--junit", junit)
			if code != tc.code || !strings.Contains(stderr, "interrupted") || strings.Count(strings.TrimSpace(stderr), "\n") > 0 {
				t.Errorf("exit %d, stderr %q: want exit %d and one line saying interrupted", code, stderr, tc.code)
			}
			if !strings.Contains(stdout, "1 scenarios: ") || !strings.Contains(stdout, "interrupted: 3 not run (not judged): client-gap, client-cut-stream, client-poll-interval") {
				t.Errorf("the summary does not report what ran and what did not:\n%s", stdout)
			}
			var res suite.SuiteResult
			if b, err := os.ReadFile(js); err != nil || json.Unmarshal(b, &res) != nil {
				t.Fatalf("--json: %v %s", err, b)
			}
			if !res.Interrupted || len(res.Scenarios) != 1 || res.Scenarios[0].Status != tc.status || len(res.NotRun) != 3 {
				t.Errorf("--json: interrupted %v, %d scenarios, %d not run; want interrupted, client-duplicates %s, 3 not run", res.Interrupted, len(res.Scenarios), len(res.NotRun), tc.status)
			}
			if b, err := os.ReadFile(junit); err != nil || !strings.Contains(string(b), "not run: the check was interrupted") {
				t.Errorf("--junit: %v\n%s", err, b)
			}
		})
	}
}

// TestCheckInterruptedWhileServerHangs: interrupted while a --server-cmd
// server has not answered initialize, check says it was interrupted (not
// that the server did not answer within --timeout) and exits 130.
func TestCheckInterruptedWhileServerHangs(t *testing.T) {
	mark := filepath.Join(t.TempDir(), "mark")
	t.Setenv("MARK", mark)
	code, _, stderr := interruptWhen(t, mark, "check", "--server-cmd", `sh -c 'touch "$MARK"; exec sleep 1000'`, "--timeout", "1m")
	if code != ExitInterrupted || !strings.Contains(stderr, "interrupted while waiting for the answer to initialize") || strings.Contains(stderr, "within") {
		t.Errorf("exit %d, stderr %q: want exit 130 saying check was interrupted while waiting for initialize", code, stderr)
	}
}

// TestCheckServerCmdEndsWhatItStarted: the processes a --server-cmd
// server starts and leaves running end with it.
func TestCheckServerCmdEndsWhatItStarted(t *testing.T) {
	childtest.NeedProc(t)
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv(asTasksimEnv, "1")
	pids := filepath.Join(t.TempDir(), "pids")
	t.Setenv("PIDS", pids)
	server := "sh -c " + shellQuote(childtest.Fork+"exec "+shellQuote(exe)+" serve --stdio")
	if code, stdout, stderr := run(t, "", "check", "--server-cmd", server, "--scenario", "sep1905-old-client"); code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	if len(childtest.Pids(t, pids)) == 0 {
		t.Fatal("the server started nothing")
	}
	childtest.WaitGone(t, pids)
}

// TestCheckRedirectNotFollowed: a server that redirects is judged by that
// answer: check follows no redirect (the server it points to, another
// loopback port here, receives nothing) and names it.
func TestCheckRedirectNotFollowed(t *testing.T) {
	var reached atomic.Int64
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		reached.Add(1)
		http.Error(w, "not here", http.StatusTeapot)
	}))
	defer other.Close()
	for _, status := range []int{http.StatusFound, http.StatusTemporaryRedirect, http.StatusPermanentRedirect} {
		redirecting := httptest.NewServer(http.RedirectHandler(other.URL+"/mcp", status))
		code, _, stderr := run(t, "", "check", "--server", redirecting.URL+"/mcp")
		redirecting.Close()
		if code != ExitRuntime || !strings.Contains(stderr, "redirect to \""+other.URL+"/mcp\", not followed") {
			t.Errorf("%d: exit %d, stderr %q: want exit 3 naming the redirect", status, code, stderr)
		}
	}
	if n := reached.Load(); n != 0 {
		t.Errorf("the server redirected to received %d requests, want none", n)
	}
}

// TestCheckRoleFlags: --slow-tool and --fail-tool with their templates
// reach the suite, so the cancel and failure scenarios run on a server's
// own tools (not slow_text), and the reproduce command carries them.
func TestCheckRoleFlags(t *testing.T) {
	hs := httptest.NewServer(streamhttp.NewHandler(server.New(&server.Options{Tools: plant.ForeignTools()}), nil))
	defer hs.Close()
	slowArgs := `{"steps":{{chunks}},"totalMs":{{durationMs}}}`
	code, stdout, stderr := run(t, "", "check", "--server", hs.URL+"/mcp", "--scenario", "sep1905-cancel-streaming", "--scenario", "sep1905-failure-streaming", "--scenario", "task-lifecycle",
		"--slow-tool", plant.ToolLongJob, "--slow-args", slowArgs, "--fail-tool", plant.ToolBrokenJob, "--fail-args", `{"afterMs":40}`, "--json", "-")
	if code != ExitOK {
		t.Fatalf("exit %d, stderr %s\n%s", code, stderr, stdout)
	}
	var doc struct {
		Scenarios []struct {
			Name, Status, Why string
			LeftOut           []string
		}
	}
	if err := json.Unmarshal([]byte(stdout[strings.Index(stdout, "\n{")+1:]), &doc); err != nil || len(doc.Scenarios) != 3 {
		t.Fatalf("--json -: %v, %d scenarios\n%s", err, len(doc.Scenarios), stdout)
	}
	for _, r := range doc.Scenarios {
		if r.Status != "PASS" || len(r.LeftOut) > 0 {
			t.Errorf("%s: %s (%s), left out %q; want PASS with every step run", r.Name, r.Status, r.Why, r.LeftOut)
		}
	}
	repro := reproCommand(&CheckOptions{Server: "http://h/mcp", SlowTool: plant.ToolLongJob, SlowArgs: slowArgs, FailTool: plant.ToolBrokenJob, Seed: 1})("x")
	if !strings.Contains(repro, "--slow-tool long_job --slow-args '"+slowArgs+"' --fail-tool broken_job") {
		t.Errorf("reproduce command %q lacks the role flags", repro)
	}
}
