package cli

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tasksim/tasksim/load"
	"github.com/tasksim/tasksim/mcp"
)

// withoutCompletedAt serves the reference server with the completion time
// taken out of every POST's answer, as a server other than tasksim's would
// answer: discovery delay must then come from lastUpdatedAt. Poll mode
// opens no standalone stream, so every answer ends and can be read whole.
func withoutCompletedAt(t *testing.T) string {
	t.Helper()
	u, err := url.Parse(referenceServer(t))
	if err != nil {
		t.Fatal(err)
	}
	rp := httputil.NewSingleHostReverseProxy(&url.URL{Scheme: u.Scheme, Host: u.Host})
	rp.ModifyResponse = func(r *http.Response) error {
		if r.Request.Method != http.MethodPost {
			return nil
		}
		b, err := io.ReadAll(r.Body)
		if err != nil {
			return err
		}
		r.Body.Close()
		// Same length, so Content-Length still holds.
		b = bytes.ReplaceAll(b, []byte(mcp.MetaCompletedAt), []byte(strings.Repeat("x", len(mcp.MetaCompletedAt))))
		r.Body = io.NopCloser(bytes.NewReader(b))
		return nil
	}
	s := httptest.NewServer(rp)
	t.Cleanup(s.Close)
	return s.URL + u.Path
}

// TestLoadOwnTool: --tool and --args load any tool; the arguments'
// placeholders take each task's drawn shape; a server without the
// completion time in its results gets its discovery delay from the task's
// lastUpdatedAt, and the table marks it.
func TestLoadOwnTool(t *testing.T) {
	srv := withoutCompletedAt(t)
	res := filepath.Join(t.TempDir(), "run.json")
	code, stdout, stderr := run(t, "", "load", "--server", srv, "--mode", "poll:20ms", "--rate", "40", "--tasks", "6", "--max-lag", "1h",
		"--tool", "sleep", "--args", `{"durationMs":{{durationMs}}}`, "--task-duration", "30ms..60ms", "--json", res)
	if code != ExitOK {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	r := readLoadJSON(t, res)
	m := r.Mode("poll:20ms")
	if r.Config.Tool != "sleep" || m.Completed != 6 {
		t.Fatalf("tool %q, %d completed, want sleep and 6 (%v)", r.Config.Tool, m.Completed, m.Errors)
	}
	if m.DiscoveryFromLastUpdated != 6 || m.Discovery.Count != 6 {
		t.Errorf("discovery from lastUpdatedAt for %d of %d tasks, want 6 of 6", m.DiscoveryFromLastUpdated, m.Discovery.Count)
	}
	if !strings.Contains(stdout, load.DiscoveryMark) || !strings.Contains(stdout, "discovery from the task's lastUpdatedAt for 6 of 6") {
		t.Errorf("the table does not mark the discovery source:\n%s", stdout)
	}
	// A sleep of 30-60 ms, polled every 20 ms: a result takes 30 ms at least.
	if m.TTR.P50 < 30 {
		t.Errorf("time to result p50 %vms: the arguments did not reach the tool", m.TTR.P50)
	}
}

// TestLoadOwnToolRefserverSource: against the reference server the
// completion time comes from the result's meta: no mark.
func TestLoadOwnToolRefserverSource(t *testing.T) {
	code, stdout, stderr := run(t, "", "load", "--in-process", "--mode", "poll:20ms", "--rate", "40", "--tasks", "4", "--max-lag", "1h",
		"--tool", "sleep", "--args", `{"durationMs":{{durationMs}}}`, "--task-duration", "20ms")
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if strings.Contains(stdout, load.DiscoveryMark) {
		t.Errorf("discovery marked as from lastUpdatedAt:\n%s", stdout)
	}
}

func TestLoadOwnToolBadInput(t *testing.T) {
	sets := filepath.Join(t.TempDir(), "args.jsonl")
	if err := os.WriteFile(sets, []byte("{\"durationMs\":1}\n[1]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	url := referenceServer(t)
	for _, tc := range []struct {
		name string
		args []string
		code int
		want string
	}{
		{"args without tool", []string{"--args", `{}`}, ExitUsage, "--args needs --tool"},
		{"not an object", []string{"--tool", "sleep", "--args", `[1]`}, ExitUsage, "not a JSON object"},
		{"template not JSON", []string{"--tool", "sleep", "--args", `{"a":{{nope}}}`}, ExitUsage, "not a JSON object"},
		{"bad line in file", []string{"--tool", "sleep", "--args", "@" + sets}, ExitUsage, "line 2: not a JSON object"},
		{"missing file", []string{"--tool", "sleep", "--args", "@" + sets + ".none"}, ExitUsage, ""},
		{"unknown tool", []string{"--server", url, "--tool", "nosuch"}, ExitRuntime, "no tool nosuch"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := append([]string{"load", "--mode", "sse", "--tasks", "1"}, tc.args...)
			if !strings.Contains(strings.Join(args, " "), "--server") {
				args = append(args, "--in-process")
			}
			code, _, stderr := run(t, "", args...)
			if code != tc.code || !strings.Contains(stderr, tc.want) || strings.Count(strings.TrimSpace(stderr), "\n") > 0 {
				t.Errorf("exit %d, stderr %q; want %d and one line with %q", code, stderr, tc.code, tc.want)
			}
		})
	}
}

// TestLoadArgSets: @FILE gives task k of each mode line k mod n.
func TestLoadArgSets(t *testing.T) {
	sets := filepath.Join(t.TempDir(), "args.jsonl")
	if err := os.WriteFile(sets, []byte("{\"durationMs\":5}\n\n{\"durationMs\":10}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	res := filepath.Join(t.TempDir(), "run.json")
	code, _, stderr := run(t, "", "load", "--in-process", "--mode", "sse", "--rate", "40", "--tasks", "4", "--max-lag", "1h",
		"--tool", "sleep", "--args", "@"+sets, "--json", res)
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	b, _ := os.ReadFile(res)
	var r load.Result
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatal(err)
	}
	if len(r.Config.ArgSets) != 2 || r.Mode("sse").Completed != 4 {
		t.Errorf("%d argument sets, %d completed; want 2 and 4", len(r.Config.ArgSets), r.Mode("sse").Completed)
	}
}

// TestDemoServerTool: tasksim demo --server URL takes --tool and --args
// as tasksim load does; without --server they are refused.
func TestDemoServerTool(t *testing.T) {
	url := referenceServer(t)
	code, stdout, stderr := run(t, "", "demo", "--server", url, "--tool", "sleep", "--args", `{"durationMs":{{durationMs}}}`,
		"--duration", "1s", "--rate", "4", "--html", "")
	if code != ExitOK {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	// The fault half does not run against a server given: stderr says so.
	if !strings.Contains(stderr, "(tool sleep), "+url) || !strings.Contains(stdout, "poll:100ms") ||
		!strings.Contains(stderr, "demo: the fault half (--sim-seeds 200) is skipped with --server") {
		t.Errorf("stderr:\n%s\nstdout:\n%s", stderr, stdout)
	}
	if code, _, stderr := run(t, "", "demo", "--tool", "sleep"); code != ExitUsage || !strings.Contains(stderr, "need --server") {
		t.Errorf("demo --tool without --server: exit %d, %q", code, stderr)
	}
}
