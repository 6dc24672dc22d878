package cli

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/tasksim/tasksim/mcp"
	rev "github.com/tasksim/tasksim/mcp/rev20260728"
	"github.com/tasksim/tasksim/mcp/rev20260728/tasks"
	"github.com/tasksim/tasksim/mcp/sse"
)

// postStateless posts one 2026-07-28 request whose params are fields plus
// a _meta declaring the tasks extension, with the routing headers, and
// returns the response (closed when the test ends).
func postStateless(t *testing.T, url, method, name, fields string) *http.Response {
	t.Helper()
	meta := `"_meta":{"io.modelcontextprotocol/protocolVersion":"` + rev.ProtocolVersion + `",` +
		`"io.modelcontextprotocol/clientCapabilities":{"extensions":{"` + tasks.ExtensionID + `":{}}}}`
	body := `{"jsonrpc":"2.0","id":7,"method":"` + method + `","params":{` + fields + `,` + meta + `}}`
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set(rev.HeaderProtocolVersion, rev.ProtocolVersion)
	req.Header.Set(rev.HeaderMethod, method)
	if name != "" {
		req.Header.Set(rev.HeaderName, rev.EncodeHeaderValue(name))
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

// jsonAnswer reads a response that must be one JSON message.
func jsonAnswer(t *testing.T, resp *http.Response) *mcp.Message {
	t.Helper()
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		t.Fatalf("answer %d %s, want one JSON message", resp.StatusCode, ct)
	}
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	m, err := mcp.DecodeMessage(body)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// TestServeListenLimits: --max-listen-tasks and --max-listens reach the
// server (a listen naming more task ids gets -32602, one more listen than
// allowed -32603), and a bad value is a one-line usage error.
func TestServeListenLimits(t *testing.T) {
	for _, args := range [][]string{
		{"--max-listens", "0"}, {"--max-listen-tasks", "-1"}, {"--max-listens", "many"},
	} {
		code, _, stderr := run(t, "", append([]string{"serve", "--stdio"}, args...)...)
		if code != ExitUsage || strings.Count(strings.TrimSpace(stderr), "\n") != 0 || !strings.Contains(stderr, args[0]) {
			t.Errorf("serve %v: exit %d, stderr %q: want %d and one line naming the flag", args, code, stderr, ExitUsage)
		}
	}

	url, _, _ := serveReady(t, "--log-level", "error", "--max-listens", "1", "--max-listen-tasks", "2")
	m := jsonAnswer(t, postStateless(t, url, rev.MethodSubscriptionsListen, "", `"notifications":{"taskIds":["a","b","c"]}`))
	if m.Error == nil || m.Error.Code != mcp.CodeInvalidParams || !strings.Contains(m.Error.Message, "more than the 2") {
		t.Fatalf("listen naming 3 tasks past --max-listen-tasks 2: %+v, want -32602 naming the limit", m)
	}

	// One listen kept open by a task that runs for an hour; the next is
	// refused.
	created := jsonAnswer(t, postStateless(t, url, mcp.MethodToolsCall, "sleep", `"name":"sleep","arguments":{"durationMs":3600000}`))
	var task tasks.CreateTaskResult
	if created.Error != nil || json.Unmarshal(created.Result, &task) != nil || task.TaskID == "" {
		t.Fatalf("tools/call sleep: %s, want a task", created.Result)
	}
	filter := `"notifications":{"taskIds":["` + task.TaskID + `"]}`
	open := postStateless(t, url, rev.MethodSubscriptionsListen, "", filter)
	if ct := open.Header.Get("Content-Type"); open.StatusCode != http.StatusOK || !strings.HasPrefix(ct, "text/event-stream") {
		t.Fatalf("first listen: %d %s, want an open stream", open.StatusCode, ct)
	}
	m = jsonAnswer(t, postStateless(t, url, rev.MethodSubscriptionsListen, "", filter))
	if m.Error == nil || m.Error.Code != mcp.CodeInternalError || !strings.Contains(m.Error.Message, "1 subscriptions") {
		t.Fatalf("second listen past --max-listens 1: %+v, want -32603 server busy", m)
	}
}

// TestServeShutdownEndsListen: when tasksim serve stops, an open
// subscriptions/listen over HTTP gets its result before its stream closes
// (2026-07-28 Subscriptions, "Graceful Closure"), not a cut stream.
func TestServeShutdownEndsListen(t *testing.T) {
	url, stop, stderr := serveReady(t, "--log-level", "error")
	created := jsonAnswer(t, postStateless(t, url, mcp.MethodToolsCall, "sleep", `"name":"sleep","arguments":{"durationMs":3600000}`))
	var task tasks.CreateTaskResult
	if created.Error != nil || json.Unmarshal(created.Result, &task) != nil || task.TaskID == "" {
		t.Fatalf("tools/call sleep: %s, want a task", created.Result)
	}
	resp := postStateless(t, url, rev.MethodSubscriptionsListen, "", `"notifications":{"taskIds":["`+task.TaskID+`"]}`)
	r := sse.NewReader(resp.Body)
	next := func() (*mcp.Message, error) {
		for {
			ev, err := r.Next()
			if err != nil {
				return nil, err
			}
			if ev.Data != "" { // else a keep-alive comment
				return mcp.DecodeMessage([]byte(ev.Data))
			}
		}
	}
	for _, want := range []string{rev.NotificationSubscriptionsAcknowledged, tasks.NotificationStatus} {
		if m, err := next(); err != nil || m.Method != want {
			t.Fatalf("listen stream: %+v, %v; want %s", m, err, want)
		}
	}
	stopped := make(chan int, 1)
	go func() { stopped <- stop() }()
	m, err := next()
	if err != nil {
		t.Fatalf("listen stream at shutdown: %v, want the listen's result; stderr %q", err, stderr.String())
	}
	var res rev.ListenResult
	if m.ID.String() != "7" || m.Error != nil || json.Unmarshal(m.Result, &res) != nil ||
		res.ResultType != rev.ResultComplete || res.Meta.SubscriptionID.String() != "7" {
		t.Fatalf("listen stream at shutdown: %+v, want the result {resultType: complete, subscriptionId: 7}", m)
	}
	if ev, err := r.Next(); !errors.Is(err, io.EOF) {
		t.Errorf("after the result: %+v, %v; want the stream's end", ev, err)
	}
	if code := <-stopped; code != ExitOK {
		t.Errorf("serve exited %d, want %d", code, ExitOK)
	}
}
