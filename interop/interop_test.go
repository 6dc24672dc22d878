package interop

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tasksim/tasksim/internal/refserver"
)

// nodeModules returns the interop/node_modules directory or skips the test.
func nodeModules(t *testing.T) string {
	t.Helper()
	dir, err := filepath.Abs("node_modules")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "@modelcontextprotocol", "sdk")); err != nil {
		if os.Getenv("TASKSIM_INTEROP") == "require" {
			t.Fatalf("interop packages missing (%v): run (cd interop && npm ci)", err)
		}
		t.Skip("interop packages not installed: run (cd interop && npm ci) to enable")
	}
	return dir
}

var (
	buildOnce sync.Once
	binPath   string
	buildErr  error
)

// tasksimBinary builds cmd/tasksim once per test run.
func tasksimBinary(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "tasksim-interop-bin")
		if err != nil {
			buildErr = err
			return
		}
		binPath = filepath.Join(dir, "tasksim")
		out, err := exec.Command("go", "build", "-o", binPath, "../cmd/tasksim").CombinedOutput()
		if err != nil {
			buildErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return binPath
}

// urlLine finds the URL in the log line of tasksim record.
var urlLine = regexp.MustCompile(`url=(http://\S+/mcp)`)

// startServe runs `tasksim serve` on a free loopback port through the
// refserver harness (its --ready-fd pipe says when it listens) and returns
// its URL; it is stopped when the test ends.
func startServe(t *testing.T, args ...string) string {
	t.Helper()
	o := &refserver.ChildOptions{Args: args}
	if testing.Verbose() {
		o.Stderr = prefixWriter{"serve: "}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := refserver.StartChild(ctx, tasksimBinary(t), o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Stop)
	return c.URL
}

// prefixWriter echoes each line written to it on stderr after a prefix.
type prefixWriter struct{ prefix string }

func (w prefixWriter) Write(p []byte) (int, error) {
	if _, err := os.Stderr.Write(append([]byte(w.prefix), p...)); err != nil {
		return 0, err
	}
	return len(p), nil
}

// awaitURL reads a process's output pipe line by line until pat matches,
// and returns the match's first group (or the whole match). It fails the
// test after 30s. The pipe is read to its end in the background, each line
// echoed under -v with the name; drained closes then, and only after it
// may the process be waited for (os/exec: Wait closes the pipe).
func awaitURL(t *testing.T, pipe io.Reader, pat *regexp.Regexp, name string) (url string, drained <-chan struct{}) {
	t.Helper()
	found := make(chan string, 1)
	done := make(chan struct{})
	go func() {
		defer close(done)
		sc := bufio.NewScanner(pipe)
		for sc.Scan() {
			if m := pat.FindStringSubmatch(sc.Text()); m != nil {
				select {
				case found <- m[len(m)-1]:
				default:
				}
			}
			if testing.Verbose() {
				fmt.Fprintln(os.Stderr, name+":", sc.Text())
			}
		}
		_, _ = io.Copy(io.Discard, pipe)
	}()
	select {
	case u := <-found:
		return u, done
	case <-time.After(30 * time.Second):
		t.Fatalf("%s did not report its URL within 30s", name)
	}
	return "", done
}

// TestTSClientTaskCall: the official TypeScript SDK client completes a
// task-augmented call (callToolStream with a task) against tasksim serve.
func TestTSClientTaskCall(t *testing.T) {
	nm := nodeModules(t)
	url := startServe(t, "--poll-interval", "100ms")
	cases := []struct {
		name, tool, args, wantText string
	}{
		{"slow_text", "slow_text", `{"chunks":3,"chunkSize":16,"intervalMs":20}`, "chunk 3;"},
		{"sleep", "sleep", `{"durationMs":50,"text":"slept"}`, "slept"},
		{"task_only", "task_only", `{"durationMs":10,"text":"required task"}`, "required task"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
			defer cancel()
			cmd := exec.CommandContext(ctx, filepath.Join(nm, ".bin", "node"), "ts-task-client.mjs", url, c.tool, c.args)
			out, err := cmd.Output()
			var ee *exec.ExitError
			if err != nil && !errors.As(err, &ee) {
				t.Fatalf("run ts-task-client: %v", err)
			}
			var got struct {
				TaskID   string   `json:"taskId"`
				Statuses []string `json:"statuses"`
				Result   *struct {
					Content []struct {
						Type string `json:"type"`
						Text string `json:"text"`
					} `json:"content"`
				} `json:"result"`
				Error any `json:"error"`
			}
			if jerr := json.Unmarshal(lastLine(out), &got); jerr != nil {
				t.Fatalf("ts-task-client output is not JSON: %v\n%s\nstderr: %s", jerr, out, stderrOf(err))
			}
			if err != nil {
				t.Fatalf("ts-task-client failed: %s\nstderr: %s", out, stderrOf(err))
			}
			if got.TaskID == "" || len(got.Statuses) == 0 || got.Statuses[len(got.Statuses)-1] != "completed" {
				t.Fatalf("task flow incomplete: %s", out)
			}
			var text strings.Builder
			for _, b := range got.Result.Content {
				text.WriteString(b.Text)
			}
			if !strings.Contains(text.String(), c.wantText) {
				t.Errorf("result text %q does not contain %q", text.String(), c.wantText)
			}
		})
	}
}

// TestConformanceServerScenarios runs the official conformance suite's
// server scenarios against tasksim serve, one subtest per scenario.
func TestConformanceServerScenarios(t *testing.T) {
	nodeModules(t)
	url := startServe(t)
	for _, s := range []string{
		"server-initialize", "ping", "tools-list", "tools-call-simple-text", "tools-call-error",
		"tools-call-with-progress", "server-sse-polling", "server-sse-multiple-streams", "dns-rebinding-protection",
	} {
		t.Run(s, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
			defer cancel()
			cmd := exec.CommandContext(ctx, "bash", "run-conformance.sh", url, s)
			cmd.Env = append(os.Environ(), "CONFORMANCE_OUT="+t.TempDir())
			out, err := cmd.CombinedOutput()
			if err != nil || !strings.Contains(string(out), "PASS "+s) {
				t.Fatalf("conformance scenario %s failed: %v\n%s", s, err, out)
			}
		})
	}
}

func lastLine(b []byte) []byte {
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	return []byte(lines[len(lines)-1])
}

func stderrOf(err error) string {
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return string(ee.Stderr)
	}
	return ""
}
