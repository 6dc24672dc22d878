package client_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/tasksim/tasksim/mcp"
	"github.com/tasksim/tasksim/mcp/client"
	rev "github.com/tasksim/tasksim/mcp/rev20260728"
	"github.com/tasksim/tasksim/mcp/rev20260728/tasks"
	"github.com/tasksim/tasksim/mcp/server"
	"github.com/tasksim/tasksim/mcp/streamhttp"
)

// The push path of the stateless era against the reference server, over
// Streamable HTTP and stdio, on the simulated clock.

// A task followed by subscriptions/listen ends with the notifications/tasks
// that carries its result: no tasks/get, one listen, and the result in hand
// at the very instant the server completed the task (the clock does not
// move while a message is in flight, so the push's discovery delay is 0
// where a poll's would be up to its interval).
func TestStatelessListen(t *testing.T) {
	eachStateless(t, func(t *testing.T, dial func(*testing.T, pairOptions) *pair) {
		p := dial(t, pairOptions{})
		res, err := p.run(t, client.StatelessCallOptions{Name: server.ToolSlowCompute, Args: map[string]any{"seconds": 3, "label": "pushed"}, Listen: true})
		if err != nil || !res.Complete || res.Answer != tasks.ResultTypeTask || res.Task.Status != tasks.Completed || !strings.Contains(texts(res.Content), "pushed") {
			t.Fatalf("err %v, result %+v", err, res)
		}
		if res.Polls != 0 || count(res.Timeline, client.EventRequestSent, tasks.MethodGet) != 0 {
			t.Errorf("%d tasks/get: want none, the end came by push", res.Polls)
		}
		if res.Listens != 1 || res.Notifications < 1 || res.ListenFallback != "" {
			t.Errorf("listens %d, notifications %d, fallback %q: want one listen and its notifications", res.Listens, res.Notifications, res.ListenFallback)
		}
		if res.CompletedAtSource != client.CompletedAtMeta || !res.ResultAt.Equal(res.CompletedAt) {
			t.Errorf("result in hand at %v, completed at %v (%s): want the same instant", res.ResultAt, res.CompletedAt, res.CompletedAtSource)
		}
		if got := res.ResultAt.Sub(res.Start); got != 3*time.Second {
			t.Errorf("result %v after the call began, want the tool's 3s", got)
		}
		if res.Requests != 2 {
			t.Errorf("%d requests: want 2 (tools/call, subscriptions/listen)", res.Requests)
		}
	})
}

// Polling the same task finds its end up to a poll interval late: the
// reference for the push's 0 above, and the same CompletedAt bookkeeping.
func TestStatelessPollDiscovery(t *testing.T) {
	eachStateless(t, func(t *testing.T, dial func(*testing.T, pairOptions) *pair) {
		p := dial(t, pairOptions{})
		res, err := p.run(t, client.StatelessCallOptions{Name: server.ToolSlowCompute, Args: map[string]any{"seconds": 3, "label": "polled"}, PollInterval: 700 * time.Millisecond})
		if err != nil || !res.Complete || res.CompletedAtSource != client.CompletedAtMeta {
			t.Fatalf("err %v, result %+v", err, res)
		}
		// Polls at 0.7, 1.4, 2.1, 2.8 and 3.5 s: found 0.5 s late.
		if d := res.ResultAt.Sub(res.CompletedAt); d != 500*time.Millisecond {
			t.Errorf("found %v after completion, want 500ms", d)
		}
		if res.Requests != 1+res.Polls || res.Listens != 0 {
			t.Errorf("requests %d, polls %d, listens %d", res.Requests, res.Polls, res.Listens)
		}
	})
}

// Input inside a task followed by push: the notifications/tasks with
// inputRequests is answered with tasks/update, and the end comes by push.
func TestStatelessListenInput(t *testing.T) {
	eachStateless(t, func(t *testing.T, dial func(*testing.T, pairOptions) *pair) {
		p := dial(t, pairOptions{})
		res, err := p.run(t, client.StatelessCallOptions{Name: server.ToolConfirmDelete, Args: map[string]any{"filename": "a.txt"},
			Answer: accept(`{"confirm":true}`), Listen: true})
		if err != nil || !res.Complete || texts(res.Content) != "Deleted a.txt (pretend)." || res.Updates != 1 || res.Polls != 0 {
			t.Fatalf("err %v, result %+v", err, res)
		}
	})
}

// A listen that does not cover the task (here the acknowledgement leaves
// the id out) falls back to tasks/get at once, then polling: the call
// still ends with its result and says why it polled.
func TestStatelessListenRefusedFallsBack(t *testing.T) {
	taskIDs := regexp.MustCompile(`,?"taskIds":\[[^\]]*\]`)
	eachStateless(t, func(t *testing.T, dial func(*testing.T, pairOptions) *pair) {
		p := dial(t, pairOptions{conn: readHook(func(m *mcp.Message) {
			if m.Method == rev.NotificationSubscriptionsAcknowledged {
				m.Params = json.RawMessage(taskIDs.ReplaceAllString(string(m.Params), ""))
			}
		})})
		res, err := p.run(t, client.StatelessCallOptions{Name: server.ToolSlowCompute, Args: map[string]any{"seconds": 2, "label": "x"}, Listen: true})
		if err != nil || !res.Complete || res.Polls < 1 || !strings.Contains(res.ListenFallback, "did not agree") {
			t.Fatalf("err %v, result %+v", err, res)
		}
		first := time.Time{}
		for _, e := range res.Timeline {
			if e.Kind == client.EventRequestSent && e.Method == tasks.MethodGet {
				first = e.At
				break
			}
		}
		if !first.Equal(res.Start) {
			t.Errorf("first tasks/get at %v, want at once (%v)", first, res.Start)
		}
	})
}

// A listen whose stream breaks falls back to tasks/get: the result still
// comes, and the fallback names the lost stream.
func TestStatelessListenCutFallsBack(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := newHTTPPair(t, pairOptions{rt: cutFirst(rev.MethodSubscriptionsListen)})
		res, err := p.run(t, client.StatelessCallOptions{Name: server.ToolSlowCompute, Args: map[string]any{"seconds": 2, "label": "x"}, Listen: true})
		if err != nil || !res.Complete || res.Polls < 1 || res.ListenFallback == "" || res.Listens != 1 {
			t.Fatalf("err %v, result %+v", err, res)
		}
	})
}

// Cancelling a call that listens cancels its task with tasks/cancel, and
// polling shows it cancelled.
func TestStatelessListenCancel(t *testing.T) {
	eachStateless(t, func(t *testing.T, dial func(*testing.T, pairOptions) *pair) {
		p := dial(t, pairOptions{})
		res, err := p.run(t, client.StatelessCallOptions{Name: server.ToolSlowCompute, Args: map[string]any{"seconds": 600},
			CancelAfter: 2 * time.Second, Listen: true})
		if err != nil || !res.Cancelled || res.Task == nil || res.Task.Status != tasks.Cancelled || res.Complete {
			t.Fatalf("err %v, result %+v", err, res)
		}
		if n := count(res.Timeline, client.EventRequestSent, tasks.MethodCancel); n != 1 {
			t.Errorf("%d tasks/cancel sent, want 1", n)
		}
	})
}

// A listen the server ends gracefully before the task's end (here
// Server.EndListens, as at its shutdown) is no failure: the call polls
// tasks/get on to the result, says why it polled, and records no error.
// Over a real HTTP server; the order of events is fixed by the test (the
// listen is open before it ends, and ends before the tool may finish), so
// no verdict depends on timing.
func TestStatelessListenEndedGracefully(t *testing.T) {
	gate := make(chan struct{})
	tool := &server.Tool{
		Tool: mcp.Tool{Name: "job", InputSchema: json.RawMessage(`{"type":"object"}`),
			Execution: &mcp.ToolExecution{TaskSupport: mcp.TaskSupportOptional}},
		Prepare: func(json.RawMessage) (server.RunFunc, error) {
			return func(ctx context.Context, _ *server.Call) (*mcp.CallToolResult, error) {
				select {
				case <-gate:
					return &mcp.CallToolResult{Content: []mcp.ContentBlock{mcp.TextBlock("done")}}, nil
				case <-ctx.Done():
					return nil, ctx.Err()
				}
			}, nil
		},
	}
	srv := server.New(&server.Options{Tools: []*server.Tool{tool}, PollInterval: 5 * time.Millisecond})
	h := streamhttp.NewHandler(srv, &streamhttp.Options{Logger: slog.New(slog.DiscardHandler)})
	hs := httptest.NewServer(h)
	defer func() {
		h.Close()
		hs.Close()
		srv.Close()
	}()
	pushed := make(chan struct{}, 1)
	tr := mcp.DecorateTransport(&streamhttp.ClientTransport{URL: hs.URL + streamhttp.DefaultPath, Revision: mcp.Revision20260728},
		readHook(func(m *mcp.Message) {
			if m.Method == tasks.NotificationStatus {
				select {
				case pushed <- struct{}{}:
				default:
				}
			}
		}))
	ctx := testContext(t)
	conn, err := client.New(nil).ConnectStateless(ctx, tr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	type outcome struct {
		res *client.StatelessResult
		err error
	}
	done := make(chan outcome, 1)
	go func() {
		res, err := conn.CallTool(ctx, client.StatelessCallOptions{Name: "job", Listen: true})
		done <- outcome{res, err}
	}()
	select {
	case <-pushed: // the listen is open and has told the task's first state
	case out := <-done:
		t.Fatalf("the call ended before its listen was open: %+v, %v", out.res, out.err)
	}
	if err := srv.EndListens(ctx); err != nil {
		t.Fatal(err)
	}
	close(gate)
	out := <-done
	res, err := out.res, out.err
	if err != nil || !res.Complete || texts(res.Content) != "done" || res.Polls < 1 || res.Listens != 1 ||
		!strings.Contains(res.ListenFallback, "ended the listen") {
		t.Fatalf("err %v, result %+v: want the result by polling after the listen's end", err, res)
	}
	for _, e := range res.Timeline {
		if e.Kind == client.EventError {
			t.Errorf("timeline has an error %+v: a listen ended gracefully is none", e)
		}
	}
}
