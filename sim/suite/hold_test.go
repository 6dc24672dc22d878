package suite

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/tasksim/tasksim/check"
	"github.com/tasksim/tasksim/mcp"
	"github.com/tasksim/tasksim/mcp/client"
	"github.com/tasksim/tasksim/mcp/stdio"
	"github.com/tasksim/tasksim/mcp/streamhttp"
)

// lateFirstPollClient is a client that comes late to its task, as a slow
// one does: it calls slow_text (one chunk, no pause, over at once) as a
// task, then lists the session's tasks (tasks/list, which no poll rule
// judges) until the task is terminal or it listed maxLists times; only
// then does it poll tasks/get, pollInterval apart, until the task is
// terminal, and print its result.
func lateFirstPollClient(overStdio bool) ClientTarget {
	const maxLists = 100
	return ClientTarget{Stdio: overStdio, Run: func(ctx context.Context, server, _ string) (string, error) {
		var tr mcp.Transport = &streamhttp.ClientTransport{URL: server}
		if overStdio {
			c, err := DialRelay(ctx, server)
			if err != nil {
				return "", err
			}
			tr = &stdio.IOTransport{Reader: c, Writer: c}
		}
		s, err := client.New(nil).Connect(ctx, tr)
		if err != nil {
			return "", err
		}
		defer s.Close()
		m, err := s.Request(ctx, mcp.MethodToolsCall, mcp.CallToolParams{
			Name: mcp.ToolSlowText, Arguments: json.RawMessage(`{"chunks":1,"intervalMs":0}`), Task: &mcp.TaskParams{}})
		if err != nil {
			return "", err
		}
		var created mcp.CreateTaskResult
		if m.Error != nil || json.Unmarshal(m.Result, &created) != nil || created.Task.TaskID == "" {
			return "", fmt.Errorf("tools/call: no task in %s", m.Result)
		}
		id := created.Task.TaskID
		for range maxLists {
			tasks, err := s.ListTasks(ctx)
			if err != nil {
				return "", err
			}
			if taskTerminal(tasks, id) {
				break
			}
		}
		for range 100 {
			task, err := s.GetTask(ctx, id)
			if err != nil {
				return "", err
			}
			if task.Status.IsTerminal() {
				res, err := s.TaskResult(ctx, id, 0)
				if err != nil {
					return "", err
				}
				return blocksText(res.Content), nil
			}
			interval := time.Second
			if task.PollInterval != nil {
				interval = time.Duration(*task.PollInterval) * time.Millisecond
			}
			wait := time.NewTimer(interval)
			select {
			case <-wait.C:
			case <-ctx.Done():
				wait.Stop()
				return "", ctx.Err()
			}
		}
		return "", errors.New("the task never ended")
	}}
}

func taskTerminal(tasks []mcp.Task, id string) bool {
	for _, t := range tasks {
		if t.TaskID == id {
			return t.Status.IsTerminal()
		}
	}
	return false
}

// TestClientPollIntervalLateClient: a client whose first tasks/get comes
// only once its task would be over is judged on its polling all the same:
// the scripted server keeps the task working until it was polled twice,
// so CLIENT-TASKS-GET-INTERVAL has two polls of a working task to judge,
// however late (slow) the client is, over HTTP and over stdio.
func TestClientPollIntervalLateClient(t *testing.T) {
	for _, tr := range []string{"http", "stdio"} {
		t.Run(tr, func(t *testing.T) {
			wantScenarioPasses(t, lateFirstPollClient(tr == "stdio"), "client-poll-interval")
		})
	}
}

// oneChunkClient is the reference client calling slow_text for one chunk
// with no pause, in streaming mode: a stream of few events (the first
// response carries the chunk, the next one ends the call).
func oneChunkClient() ClientTarget {
	return ClientTarget{Run: func(ctx context.Context, server, _ string) (string, error) {
		s, err := client.New(nil).Connect(ctx, &streamhttp.ClientTransport{URL: server})
		if err != nil {
			return "", err
		}
		defer s.Close()
		res, err := s.CallTool(ctx, client.CallOptions{Name: mcp.ToolSlowText, Args: map[string]any{"chunks": 1, "intervalMs": 0}, Mode: client.ModeStreaming})
		if res == nil {
			return "", err
		}
		if err == nil && !res.Complete {
			err = errors.New("incomplete result")
		}
		return blocksText(res.Content), err
	}}
}

// TestClientCutStreamFewEvents: a call whose stream has fewer events than
// client-cut-stream cuts after still has its stream cut before its
// response, so that the client resumes and every rule is judged, however
// the tool's events fall around the first response.
func TestClientCutStreamFewEvents(t *testing.T) {
	wantScenarioPasses(t, oneChunkClient(), "client-cut-stream")
}

// wantScenarioPasses runs client scenario name against target: it passes,
// and so does each of its rules.
func wantScenarioPasses(t *testing.T, target ClientTarget, name string) {
	t.Helper()
	res, err := RunClientSuite(context.Background(), target, &SuiteOptions{Scenarios: []string{name}, TraceDir: traceDir(t)})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Scenarios) != 1 {
		t.Fatalf("%d scenarios, want 1", len(res.Scenarios))
	}
	r := res.Scenarios[0]
	if r.Status != check.Pass {
		t.Errorf("%s: %s %s, want PASS", r.Name, r.Status, r.Why)
	}
	for _, o := range r.Rules {
		if o.Status != check.Pass {
			t.Errorf("%s: rule %s %s (%s), want PASS", r.Name, o.ID, o.Status, o.Why)
		}
	}
	if t.Failed() {
		t.Log("\n" + describe(res))
	}
}
