package interop

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// startTSServer runs ts-task-server.mjs (the TypeScript SDK's McpServer
// with registerToolTask) over Streamable HTTP on a free loopback port and
// returns its URL.
func startTSServer(t *testing.T, nm string, env ...string) string {
	t.Helper()
	return startPeer(t, tsServerURL, env, filepath.Join(nm, ".bin", "node"), "ts-task-server.mjs", "--http", "0")
}

// tsServerURL is the line ts-task-server.mjs prints when it listens.
var tsServerURL = regexp.MustCompile(`^\s*(http://\S+)\s*$`)

// callJSON is the part of `tasksim call --json` the tests read.
type callJSON struct {
	Result struct {
		Content []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		} `json:"content"`
		IsError  bool `json:"isError"`
		Complete bool `json:"complete"`
	} `json:"result"`
	Mode     string `json:"mode"`
	Answer   string `json:"answer"`
	Fallback bool   `json:"fallback"`
	TaskID   string `json:"taskId"`
	Task     *struct {
		TaskID string `json:"taskId"`
		Status string `json:"status"`
	} `json:"task"`
	Segments int    `json:"segments"`
	Partials int    `json:"partials"`
	Error    string `json:"error"`
	Timeline []struct {
		Kind   string `json:"kind"`
		Method string `json:"method"`
		TaskID string `json:"taskId"`
		Status string `json:"status"`
		Source string `json:"source"`
	} `json:"timeline"`
}

func (c *callJSON) text() string {
	var b strings.Builder
	for _, blk := range c.Result.Content {
		b.WriteString(blk.Text)
	}
	return b.String()
}

// statuses returns the task statuses the timeline saw from source ("" for
// any source), in order.
func (c *callJSON) statuses(source string) []string {
	var out []string
	for _, e := range c.Timeline {
		if e.Kind == "status" && (source == "" || e.Source == source) {
			out = append(out, e.Status)
		}
	}
	return out
}

// requests counts the requests of method on the timeline.
func (c *callJSON) requests(method string) int {
	n := 0
	for _, e := range c.Timeline {
		if e.Kind == "request-sent" && e.Method == method {
			n++
		}
	}
	return n
}

// runCall runs `tasksim call --json` with args and returns its output and
// exit code.
func runCall(t *testing.T, args ...string) (*callJSON, int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, tasksimBinary(t), append([]string{"call", "--json", "--timeout", "90s"}, args...)...)
	out, err := cmd.Output()
	code := 0
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		code = ee.ExitCode()
	case err != nil:
		t.Fatalf("run tasksim call: %v", err)
	}
	var got callJSON
	if jerr := json.Unmarshal(out, &got); jerr != nil {
		t.Fatalf("tasksim call %q (exit %d): output is not JSON: %v\n%s\nstderr: %s", args, code, jerr, out, stderrOf(err))
	}
	return &got, code
}

// TestCallTSTaskServer: tasksim call, the reference client, completes
// task-augmented calls against the TypeScript SDK's task server, over
// Streamable HTTP and stdio. The server implements neither SEP-1905 nor
// SEP-2679: asked for streaming or partial mode it answers with a
// CreateTaskResult, and the client follows it as a task.
func TestCallTSTaskServer(t *testing.T) {
	nm := nodeModules(t)
	script, err := filepath.Abs("ts-task-server.mjs")
	if err != nil {
		t.Fatal(err)
	}
	transports := []struct {
		name   string
		server func(t *testing.T) []string
	}{
		{"http", func(t *testing.T) []string { return []string{"--server", startTSServer(t, nm)} }},
		{"stdio", func(t *testing.T) []string {
			return []string{"--server-cmd", fmt.Sprintf("%q %q --stdio", filepath.Join(nm, ".bin", "node"), script)}
		}},
	}
	for _, tr := range transports {
		t.Run(tr.name, func(t *testing.T) {
			server := tr.server(t)
			for _, mode := range []string{"task", "poll", "streaming", "partial"} {
				t.Run(mode, func(t *testing.T) {
					want := "ts says " + mode + " over " + tr.name
					// The task works 500 ms; the server suggests polling every 100 ms.
					args := fmt.Sprintf(`{"delayMs":500,"text":%q}`, want)
					got, code := runCall(t, append(server, "--tool", "ts_slow", "--args", args, "--mode", mode)...)
					if code != 0 {
						t.Fatalf("exit %d, error %q", code, got.Error)
					}
					if got.Mode != mode || got.Answer != "task" || got.Fallback {
						t.Errorf("mode %q answered %q (fallback %v), want mode %q answered task without fallback", got.Mode, got.Answer, got.Fallback, mode)
					}
					if got.TaskID == "" || got.Task == nil || got.Task.TaskID != got.TaskID || got.Task.Status != "completed" {
						t.Fatalf("task %q %+v, want a completed task", got.TaskID, got.Task)
					}
					created := 0
					for _, e := range got.Timeline {
						if e.Kind == "task-created" && e.TaskID == got.TaskID && e.Status == "working" && e.Source == "response" {
							created++
						}
					}
					if created != 1 {
						t.Errorf("%d task-created events from the tools/call response, want 1", created)
					}
					polled := got.statuses("tasks/get")
					if len(polled) == 0 {
						t.Fatalf("no status from tasks/get: the task was not polled (timeline %+v)", got.Timeline)
					}
					all := got.statuses("")
					if all[len(all)-1] != "completed" {
						t.Errorf("statuses %q do not end completed", all)
					}
					if mode == "poll" && polled[len(polled)-1] != "completed" {
						t.Errorf("poll mode: tasks/get statuses %q, want polled to completed", polled)
					}
					if got.requests("tasks/result") != 1 {
						t.Errorf("%d tasks/result requests, want 1", got.requests("tasks/result"))
					}
					if !got.Result.Complete || got.Result.IsError || got.text() != want {
						t.Errorf("result complete=%v isError=%v text %q, want complete %q", got.Result.Complete, got.Result.IsError, got.text(), want)
					}
					if got.Segments != 0 || got.Partials != 0 {
						t.Errorf("%d segments, %d partials from a server without the SEPs", got.Segments, got.Partials)
					}
				})
			}
		})
	}
}

// TestCallTSTaskServerOutcomes: the other ways the TypeScript SDK server
// ends a call, as tasksim call reports them.
func TestCallTSTaskServerOutcomes(t *testing.T) {
	nm := nodeModules(t)
	url := startTSServer(t, nm)

	t.Run("failed task", func(t *testing.T) {
		// The task ends "failed"; tasks/result gives its isError result.
		got, code := runCall(t, "--server", url, "--tool", "ts_fail", "--args", `{"delayMs":100}`, "--mode", "task")
		if code != 1 {
			t.Errorf("exit %d, want 1 (the tool reported an error)", code)
		}
		if got.Task == nil || got.Task.Status != "failed" || !got.Result.Complete || !got.Result.IsError || got.text() != "ts task failed on purpose" {
			t.Errorf("task %+v, result complete=%v isError=%v text %q", got.Task, got.Result.Complete, got.Result.IsError, got.text())
		}
	})

	t.Run("optional tool without a task", func(t *testing.T) {
		// taskSupport "optional" called without a task: the server runs
		// the task itself and answers with the plain result.
		got, code := runCall(t, "--server", url, "--tool", "ts_optional", "--args", `{"delayMs":100,"text":"plain from ts"}`, "--mode", "plain")
		if code != 0 || got.Answer != "plain" || got.TaskID != "" || !got.Result.Complete || got.text() != "plain from ts" {
			t.Errorf("exit %d, answer %q, task %q, complete %v, text %q", code, got.Answer, got.TaskID, got.Result.Complete, got.text())
		}
	})

	t.Run("optional tool with a task", func(t *testing.T) {
		got, code := runCall(t, "--server", url, "--tool", "ts_optional", "--args", `{"delayMs":100,"text":"task from ts"}`, "--mode", "task", "--ttl", "60s")
		if code != 0 || got.Answer != "task" || got.Task == nil || got.Task.Status != "completed" || got.text() != "task from ts" {
			t.Errorf("exit %d, answer %q, task %+v, text %q", code, got.Answer, got.Task, got.text())
		}
	})
}
