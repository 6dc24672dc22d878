package interop

import (
	"encoding/json"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/tasksim/tasksim/sim/suite"
	"github.com/tasksim/tasksim/traces"
)

// ts2URL is the line ts2-server.mjs prints when it listens.
var ts2URL = regexp.MustCompile(`^(http://127\.0\.0\.1:\d+/mcp)$`)

// noTaskCapability is what the SKIP of a task scenario must say against a
// server that declares no tasks capability for tools/call (2025-11-25,
// Tasks › Capabilities › Capability Negotiation › Tool-Level Negotiation).
const noTaskCapability = "tasks.requests.tools.call"

// TestCheckTSv2Server: tasksim check against the TypeScript SDK v2 server
// (@modelcontextprotocol/server 2.4.0, ts2-server.mjs), which declares
// tools and no tasks, with a streaming tool slow_text. Whether the suite
// picks the tool or is given it with --tool: no scenario sends it a
// task-augmented call ("clients MUST NOT attempt to use task augmentation
// on that server's tools"), every task scenario is SKIP saying why, and
// no task rule is judged, since no task ever existed.
func TestCheckTSv2Server(t *testing.T) {
	nm := nodeModules(t)
	url := startPeer(t, ts2URL, nil, filepath.Join(nm, ".bin", "node"), "ts2-server.mjs", "--http", "0")
	for _, c := range []struct {
		name string
		args []string
	}{
		{"no-tool", nil},
		{"tool", []string{"--tool", "slow_text", "--args", `{"chunks":5}`}},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			got, code := runCheck(t, ".", append([]string{"--server", url, "--traces", dir}, c.args...)...)
			assertNoTaskServer(t, got, code)
			assertNoTaskAugmentation(t, dir)
			assertCoverage(t, got, suite.CoverageOptions{HTTP: true}) // it declares no tasks
		})
	}
}

// assertNoTaskServer checks a run against a server without tasks: the
// HTTP scenarios judge what they can (it does not check Origin: FAIL), the
// others SKIP, and no task, SEP-1905 or SEP-2679 rule is judged anywhere.
func assertNoTaskServer(t *testing.T, got *checkJSON, code int) {
	t.Helper()
	for _, sc := range got.Scenarios {
		switch {
		case sc.Name == "http-origin":
			if sc.Status != fail {
				t.Errorf("%s: %s (%s), want FAIL", sc.Name, sc.Status, sc.Why)
			}
		case sc.Name == "http-session":
			if sc.Status != pass {
				t.Errorf("%s: %s (%s), want PASS", sc.Name, sc.Status, sc.Why)
			}
		case sc.Name == "http-resume":
			// It gives out no SSE event ids: nothing to resume.
			if sc.Status != skip {
				t.Errorf("%s: %s (%s), want SKIP", sc.Name, sc.Status, sc.Why)
			}
		case strings.HasPrefix(sc.Name, "sep"), sc.Name == "invalid-params":
			// Either reason holds: no tasks, or no SEP declared.
			if sc.Status != skip || !strings.Contains(sc.Why, noTaskCapability) && !strings.Contains(sc.Why, "does not declare") {
				t.Errorf("%s: %s (%s), want SKIP because the server declares no tasks or no SEP", sc.Name, sc.Status, sc.Why)
			}
		default:
			if sc.Status != skip || !strings.Contains(sc.Why, noTaskCapability) {
				t.Errorf("%s: %s (%s), want SKIP because %q is not declared", sc.Name, sc.Status, sc.Why, noTaskCapability)
			}
		}
		for _, r := range sc.Rules {
			task := strings.HasPrefix(r.ID, "TASK-") || strings.HasPrefix(r.ID, "S1905-") || strings.HasPrefix(r.ID, "S2679-")
			if task && r.Status != skip {
				t.Errorf("%s: rule %s %s with no task on the server %+v", sc.Name, r.ID, r.Status, r.Findings)
			}
			if r.Status == pass && r.Checked == 0 {
				t.Errorf("%s: rule %s PASS with nothing checked", sc.Name, r.ID)
			}
		}
	}
	if code != 1 {
		t.Errorf("exit %d, want 1 (http-origin fails)", code)
	}
}

// assertNoTaskAugmentation reads every trace of a run and fails on a
// tools/call that carries params.task.
func assertNoTaskAugmentation(t *testing.T, dir string) {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.trace"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no trace in %s: %v", dir, err)
	}
	calls := 0
	for _, f := range files {
		tr, err := traces.Open(f)
		if err != nil {
			t.Fatal(err)
		}
		for rec, err := range tr.Records() {
			if err != nil {
				t.Errorf("%s: %v", f, err)
				break
			}
			if rec.RPC == nil || rec.RPC.Type != "request" || rec.RPC.Method != "tools/call" {
				continue
			}
			calls++
			var m struct {
				Params struct {
					Task json.RawMessage `json:"task"`
				} `json:"params"`
			}
			if json.Unmarshal(rec.Raw, &m) == nil && m.Params.Task != nil {
				t.Errorf("%s record %d: tools/call with task augmentation %s to a server without tasks", filepath.Base(f), rec.Index, m.Params.Task)
			}
		}
		tr.Close()
	}
	t.Logf("%d traces, %d tools/call", len(files), calls)
}
