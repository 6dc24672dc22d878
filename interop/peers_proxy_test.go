package interop

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tasksim/tasksim/check"
	"github.com/tasksim/tasksim/traces"
)

// cutFault cuts the POST stream of the client's request id 3 (call A of
// ts-resume-client.mjs) just before its response, after its four progress
// notifications, while call B still streams on its own POST.
const cutFault = "disconnect:stream=post,id=3,at=before"

// loopbackLine is what listen-loopback.cjs prints once the server listens.
var loopbackLine = regexp.MustCompile(`listen-loopback: listening on (127\.0\.0\.1:\d+)`)

// startServerEverything runs server-everything's Streamable HTTP server on
// a free loopback port (PORT=0, listen-loopback.cjs preloaded) and returns
// its URL; it is stopped (SIGINT, then killed) when the test ends.
func startServerEverything(t *testing.T, nm string) string {
	t.Helper()
	preload, err := filepath.Abs("listen-loopback.cjs")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, filepath.Join(nm, ".bin", "node"), "-r", preload,
		filepath.Join(nm, "@modelcontextprotocol", "server-everything", "dist", "index.js"), "streamableHttp")
	cmd.Env = append(os.Environ(), "PORT=0")
	cmd.Cancel = func() error { return cmd.Process.Signal(os.Interrupt) }
	cmd.WaitDelay = 5 * time.Second
	if testing.Verbose() {
		cmd.Stdout = prefixWriter{"server-everything: "}
	}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cancel(); _ = cmd.Wait() })
	addr, _ := awaitURL(t, stderr, loopbackLine, "server-everything")
	return "http://" + addr + "/mcp"
}

// resumeCall is one call in the report of ts-resume-client.mjs.
type resumeCall struct {
	Text     *string   `json:"text"`
	Progress []float64 `json:"progress"`
	TaskID   string    `json:"taskId"`
	Statuses []string  `json:"statuses"`
	Error    *string   `json:"error"`
}

type resumeReport struct {
	Calls           map[string]resumeCall `json:"calls"`
	Resumes         []string              `json:"resumes"`
	TransportErrors []string              `json:"transportErrors"`
	Error           *string               `json:"error"`
}

// runResumeClient runs ts-resume-client.mjs against url and returns its report.
func runResumeClient(t *testing.T, nm, url, profile string) resumeReport {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join(nm, ".bin", "node"), "ts-resume-client.mjs", url, profile)
	out, err := cmd.Output()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		t.Fatalf("run ts-resume-client: %v", err)
	}
	var r resumeReport
	if jerr := json.Unmarshal(lastLine(out), &r); jerr != nil || err != nil {
		t.Fatalf("ts-resume-client: %v / %v\n%s\nstderr: %s", err, jerr, out, stderrOf(err))
	}
	return r
}

// judgeTrace runs the rule checker on a trace file.
func judgeTrace(t *testing.T, path string) *check.Verdict {
	t.Helper()
	r, err := traces.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	v, err := check.Check(r.Records(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	_ = v.WriteText(&b)
	t.Logf("tasksim trace check:\n%s", b.String())
	return v
}

// wantRules asserts the verdict's status for each rule named, and that no
// rule failed but those wanted to.
func wantRules(t *testing.T, v *check.Verdict, want map[string]check.Status) {
	t.Helper()
	for id, st := range want {
		r, ok := v.Result(id)
		if !ok {
			t.Errorf("rule %s not in the verdict", id)
			continue
		}
		if r.Status != st {
			t.Errorf("rule %s: %s (%d of %d checked, %v), want %s", id, r.Status, r.Failures, r.Checked, r.Findings, st)
		}
	}
	for _, r := range v.Rules {
		if r.Status == check.Fail && want[r.Rule.ID] != check.Fail {
			t.Errorf("rule %s failed unexpectedly: %v", r.Rule.ID, r.Findings)
		}
	}
}

// wantCallText asserts that call key of the report ended with text want.
func wantCallText(t *testing.T, r resumeReport, key, want string) {
	t.Helper()
	c, ok := r.Calls[key]
	switch {
	case !ok:
		t.Errorf("call %s did not run: %+v", key, r)
	case c.Error != nil:
		t.Errorf("call %s failed: %s", key, *c.Error)
	case c.Text == nil || !strings.Contains(*c.Text, want):
		t.Errorf("call %s: text %v, want it to contain %q", key, c.Text, want)
	}
}

// proxiedResumeRun puts tasksim proxy with cutFault in front of upstream,
// runs ts-resume-client.mjs through it with profile, stops the proxy and
// returns the client's report and the verdict on the recorded trace.
func proxiedResumeRun(t *testing.T, nm, upstream, profile string) (resumeReport, *check.Verdict) {
	t.Helper()
	trace := filepath.Join(t.TempDir(), profile+".trace")
	proxy, stop := startTasksimHTTP(t, "proxy", "proxy", "--upstream", upstream, "--listen", "127.0.0.1:0",
		"--fault", cutFault, "--seed", "1", "--record", trace)
	rep := runResumeClient(t, nm, proxy, profile)
	if err := stop(); err != nil {
		t.Fatalf("tasksim proxy on SIGINT: %v", err)
	}
	t.Logf("client report: %+v", rep)
	v := judgeTrace(t, trace)
	if v.Faults != 1 {
		t.Fatalf("%d fault records, want the one cut (%s)", v.Faults, cutFault)
	}
	if len(rep.Resumes) != 1 {
		t.Errorf("the client resumed %d times (%v), want once after the cut", len(rep.Resumes), rep.Resumes)
	}
	return rep, v
}

// TestPeersProxyServerEverything: server-everything behind tasksim proxy,
// driven by the TypeScript SDK client (ts-resume-client.mjs). The proxy
// cuts call A's POST stream before its response while call B streams; the
// client resumes with GET and Last-Event-ID and every call ends right. The
// checker finds what server-everything's example event store does
// (modelcontextprotocol/servers#4087): it replays the events of every
// stream stored after Last-Event-ID, so the replay carries call C's answer
// (sent after A's last event, so stored after it, whatever the timing),
// which the client reports as a response to an unknown id. Should the
// store be fixed, HTTP-RESUME-SAME-STREAM passes and this test fails, to
// be updated with docs/interop.md.
func TestPeersProxyServerEverything(t *testing.T) {
	nm := nodeModules(t)
	rep, v := proxiedResumeRun(t, nm, startServerEverything(t, nm), "everything")

	wantCallText(t, rep, "A", "Duration: 1 seconds, Steps: 4.")
	wantCallText(t, rep, "B", "Duration: 3 seconds, Steps: 6.")
	wantCallText(t, rep, "C", "# Research Report: resumability")
	if a := rep.Calls["A"]; !slices.Equal(a.Progress, []float64{1, 2, 3, 4}) {
		t.Errorf("call A progress %v, want 1..4 before the cut", a.Progress)
	}
	if c := rep.Calls["C"]; c.TaskID == "" || c.Statuses[len(c.Statuses)-1] != "completed" {
		t.Errorf("call C: task %q statuses %v, want completed", c.TaskID, c.Statuses)
	}
	foreign := false
	for _, e := range rep.TransportErrors {
		if strings.Contains(e, "unknown message ID") && strings.Contains(e, `"id":4`) {
			foreign = true
		}
	}
	if !foreign {
		t.Errorf("the client did not report C's answer (id 4) replayed on A's stream: %q", rep.TransportErrors)
	}

	wantRules(t, v, map[string]check.Status{
		"HTTP-RESUME-SAME-STREAM": check.Fail, // servers#4087
		"HTTP-RESUME-COMPLETE":    check.Pass,
		"CLIENT-RESUME":           check.Pass,
		"HTTP-EVENT-ID-UNIQUE":    check.Pass,
		"HTTP-NO-BROADCAST":       check.Pass,
		"HTTP-SESSION":            check.Pass,
		"TASK-STATUS-TRANSITION":  check.Pass,
		"TASK-FIELDS":             check.Pass,
		"TASK-RESULT":             check.Pass,
	})
	// C's POST stream (its priming event and its CreateTaskResult) was
	// stored after A's last event: at least those two are replayed.
	if r, _ := v.Result("HTTP-RESUME-SAME-STREAM"); r.Failures < 2 {
		t.Errorf("HTTP-RESUME-SAME-STREAM: %d foreign events in the replay, want C's two at least", r.Failures)
	} else {
		for _, f := range r.Findings {
			if !strings.Contains(f.Message, "of another stream") {
				t.Errorf("HTTP-RESUME-SAME-STREAM finding %q is not a foreign event", f.Message)
			}
		}
	}
}

// TestPeersProxyTSClientRefServer: the same run against tasksim serve: the
// TypeScript SDK client's own resumption (CLIENT-RESUME) judged against a
// server whose replay holds to the spec. No rule fails.
func TestPeersProxyTSClientRefServer(t *testing.T) {
	nm := nodeModules(t)
	rep, v := proxiedResumeRun(t, nm, startServe(t, "--poll-interval", "100ms"), "tasksim")

	wantCallText(t, rep, "A", "chunk 1;chunk 2;chunk 3;chunk 4;")
	wantCallText(t, rep, "B", "chunk 8;")
	wantCallText(t, rep, "C", "task C")
	if a := rep.Calls["A"]; !slices.Equal(a.Progress, []float64{1, 2, 3, 4}) {
		t.Errorf("call A progress %v, want 1..4", a.Progress)
	}
	for _, e := range rep.TransportErrors {
		if !strings.HasPrefix(e, "SSE stream disconnected") {
			t.Errorf("client error beyond the cut: %s", e)
		}
	}

	wantRules(t, v, map[string]check.Status{
		"HTTP-RESUME-SAME-STREAM": check.Pass,
		"HTTP-RESUME-COMPLETE":    check.Pass,
		"CLIENT-RESUME":           check.Pass,
		"HTTP-EVENT-ID-UNIQUE":    check.Pass,
		"HTTP-NO-BROADCAST":       check.Pass,
		"HTTP-SESSION":            check.Pass,
		"TASK-STATUS-TRANSITION":  check.Pass,
		"TASK-FIELDS":             check.Pass,
		"TASK-RESULT":             check.Pass,
	})
}
