package server_test

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/tasksim/tasksim/clock"
	"github.com/tasksim/tasksim/internal/refserver"
	"github.com/tasksim/tasksim/mcp"
	"github.com/tasksim/tasksim/mcp/server"
	"github.com/tasksim/tasksim/mcp/streamhttp"
)

// refusal is what a request past a cap got.
type refusal struct {
	status int
	retry  string     // Retry-After
	err    *mcp.Error // the JSON-RPC error of the body
}

func refusalOf(a *answer) refusal {
	r := refusal{status: a.status, retry: a.header.Get("Retry-After")}
	var m struct{ Error *mcp.Error }
	if json.Unmarshal(a.body, &m) == nil {
		r.err = m.Error
	}
	return r
}

// check fails unless r is a 503 with Retry-After and an error naming a
// limit.
func (r refusal) check(t *testing.T, what string) {
	t.Helper()
	if r.status != http.StatusServiceUnavailable || r.retry == "" || r.err == nil || !strings.Contains(r.err.Message, "limit") {
		t.Errorf("%s: status %d, Retry-After %q, error %+v; want 503, Retry-After and an error naming the limit", what, r.status, r.retry, r.err)
	}
}

// tryConnect initializes a session; on failure it returns the refusal.
func tryConnect(t *testing.T, hc *http.Client, url string) (*client, refusal) {
	t.Helper()
	c := &client{t: t, hc: hc, url: url}
	a := c.post(mcp.MethodInitialize, mcp.InitializeParams{ProtocolVersion: mcp.LatestProtocolVersion, ClientInfo: mcp.Implementation{Name: "test", Version: "1"}})
	if a.status != http.StatusOK {
		return nil, refusalOf(a)
	}
	c.sid = a.header.Get("Mcp-Session-Id")
	n, _ := mcp.NewNotification(mcp.NotificationInitialized, nil)
	c.send(n)
	return c, refusal{status: a.status}
}

// A client that opens a session per task and never deletes them is
// refused past MaxSessions, with 503, Retry-After and a JSON-RPC error
// that says why, and the server holds no more than that many sessions;
// ending one makes room (Hardening item 3: such a client held 0.94 GB of
// sessions, about 4.4 kB each, and was obeyed).
func TestSessionPerTaskClientRefused(t *testing.T) {
	const max = 20
	s := refserver.StartHTTP(t, &refserver.Options{HTTP: &streamhttp.Options{MaxSessions: max}})
	var kept []*client
	for i := range 3 * max {
		c, r := tryConnect(t, nil, s.URL)
		if i < max {
			if c == nil {
				t.Fatalf("session %d refused below the cap: %+v", i, r)
			}
			result[mcp.CreateTaskResult](c, mcp.MethodToolsCall, callParams(server.ToolInstant, nil, &mcp.TaskParams{}))
			kept = append(kept, c)
			continue
		}
		if c != nil {
			t.Fatalf("session %d accepted past MaxSessions %d", i, max)
		}
		r.check(t, "initialize past MaxSessions")
	}
	if got := s.Transport().Stats().Sessions; got != max {
		t.Errorf("%d sessions held, want the cap %d", got, max)
	}
	if got := s.Server.Stats().Sessions; got != max {
		t.Errorf("the server holds %d sessions, want %d: refused ones must not linger", got, max)
	}
	if st := kept[0].do(kept[0].httpReq(http.MethodDelete, nil)).status; st != http.StatusOK {
		t.Fatalf("DELETE: %d", st)
	}
	if c, r := tryConnect(t, nil, s.URL); c == nil {
		t.Errorf("no room after a DELETE: %+v", r)
	}
}

// Tasks are capped across sessions too (MaxTasks): -32603 past it.
func TestServerTaskCap(t *testing.T) {
	url, srv := serve(t, &server.Options{MaxTasks: 3})
	a := connect(t, url, mcp.ClientCapabilities{})
	b := connect(t, url, mcp.ClientCapabilities{})
	long := map[string]any{"durationMs": 3_600_000}
	for _, c := range []*client{a, a, b} {
		result[mcp.CreateTaskResult](c, mcp.MethodToolsCall, callParams(server.ToolSleep, long, &mcp.TaskParams{}))
	}
	c := connect(t, url, mcp.ClientCapabilities{})
	if e := rpcError(c, mcp.MethodToolsCall, callParams(server.ToolSleep, long, &mcp.TaskParams{})); e.Code != mcp.CodeInternalError || !strings.Contains(e.Message, "limit") {
		t.Errorf("a task past MaxTasks: %d %q, want -32603 naming the limit", e.Code, e.Message)
	}
	if got := srv.Stats().Tasks; got != 3 {
		t.Errorf("%d tasks stored, want 3", got)
	}
}

// One session may not hold more than MaxSessionRequests requests open at
// once (SSE answers included): one more gets 503.
func TestSessionRequestCap(t *testing.T) {
	s := refserver.StartHTTP(t, &refserver.Options{HTTP: &streamhttp.Options{MaxSessionRequests: 2}})
	c := connect(t, s.URL, mcp.ClientCapabilities{})
	long := map[string]any{"chunks": 2, "chunkSize": 8, "intervalMs": 3_600_000}
	for range 2 {
		st := c.open(mcp.MethodToolsCall, callParams(server.ToolSlowText, long, modes(mcp.ModeStreaming)))
		st.next() // the initial response: the stream is open
	}
	refusalOf(c.post(mcp.MethodPing, nil)).check(t, "a third request")
	refusalOf(c.do(c.httpReq(http.MethodGet, nil))).check(t, "a GET past the cap")
	other := connect(t, s.URL, mcp.ClientCapabilities{})
	if a := other.post(mcp.MethodPing, nil); a.status != http.StatusOK {
		t.Errorf("another session's ping: %d; the cap is per session", a.status)
	}
}

// Resumed GETs are rate-limited per session (MaxResumesPerMinute, a
// bucket on the handler's clock, frozen here): past the bucket, 503.
func TestResumeRateCap(t *testing.T) {
	clk := clock.NewSim(time.Unix(1_700_000_000, 0))
	s := refserver.StartHTTP(t, &refserver.Options{HTTP: &streamhttp.Options{MaxResumesPerMinute: 3, Clock: clk}})
	c := connect(t, s.URL, mcp.ClientCapabilities{})
	g := c.listen()
	ev, err := g.r.Next() // the priming event: its id can be resumed
	if err != nil || !ev.HasID {
		t.Fatalf("priming event: %+v %v", ev, err)
	}
	g.cut()
	resume := func() *http.Request {
		req := c.httpReq(http.MethodGet, nil)
		req.Header.Set("Last-Event-ID", ev.ID)
		return req
	}
	for range 3 {
		c.openReq(resume()).cut()
	}
	refusalOf(c.do(resume())).check(t, "a fourth resume within a minute")
	clk.Advance(20 * time.Second) // a third of a minute: one more
	c.openReq(resume()).cut()
}

// syncBuffer is a log sink safe for concurrent writes.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// Ending idle sessions logs one line per sweep with their count, not one
// line per session (Hardening item 3).
func TestIdleExpiryLogsOneLine(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var logs syncBuffer
		clk := clock.NewSim(time.Unix(1_700_000_000, 0))
		srv := server.New(&server.Options{Clock: clk})
		h := streamhttp.NewHandler(srv, &streamhttp.Options{Clock: clk, SessionIdleTimeout: time.Minute,
			Logger: slog.New(slog.NewTextHandler(&logs, nil))})
		defer func() { h.Close(); srv.Close() }()
		p := streamhttp.Pipe(h)
		for range 50 {
			connectVia(t, p.HTTPClient, p.URL, mcp.ClientCapabilities{})
		}
		for range 5 { // past the timeout, sweeping every 15 s
			advance(clk, 15*time.Second)
		}
		synctest.Wait()
		if n := h.Stats().Sessions; n != 0 {
			t.Fatalf("%d sessions left after the idle timeout", n)
		}
		lines := strings.Split(strings.TrimSpace(logs.String()), "\n")
		if len(lines) != 1 || !strings.Contains(lines[0], "count=50") {
			t.Errorf("idle expiry logged %d lines, want one with count=50:\n%s", len(lines), logs.String())
		}
	})
}

// Task operations are rate-limited per session (MaxTaskOpsPerSecond, a
// bucket on the server's clock, frozen here), as the spec's Tasks
// security section says receivers SHOULD: past the bucket, -32603; other
// requests and other sessions are not affected; it refills with time.
func TestTaskOpsRateLimited(t *testing.T) {
	clk := clock.NewSim(time.Unix(1_700_000_000, 0))
	url, _ := serve(t, &server.Options{Clock: clk, MaxTaskOpsPerSecond: 5})
	c := connect(t, url, mcp.ClientCapabilities{})
	get := map[string]any{"taskId": "no-such-task"}
	for i := range 5 {
		if e := rpcError(c, mcp.MethodTasksGet, get); e.Code != mcp.CodeInvalidParams {
			t.Fatalf("tasks/get %d: %d %q, want not found", i, e.Code, e.Message)
		}
	}
	for _, method := range []string{mcp.MethodTasksGet, mcp.MethodTasksList, mcp.MethodToolsCall} {
		if e := rpcError(c, method, get); e.Code != mcp.CodeInternalError || !strings.Contains(e.Message, "rate limited") {
			t.Errorf("%s past the rate: %d %q, want -32603 rate limited", method, e.Code, e.Message)
		}
	}
	if a := c.post(mcp.MethodPing, nil); a.last().Error != nil {
		t.Errorf("ping is not a task operation: %v", a.last().Error)
	}
	other := connect(t, url, mcp.ClientCapabilities{})
	if e := rpcError(other, mcp.MethodTasksGet, get); e.Code != mcp.CodeInvalidParams {
		t.Errorf("another session: %d %q; the limit is per session", e.Code, e.Message)
	}
	clk.Advance(time.Second / 5)
	if e := rpcError(c, mcp.MethodTasksGet, get); e.Code != mcp.CodeInvalidParams {
		t.Errorf("after a fifth of a second: %d %q, want one more operation", e.Code, e.Message)
	}
}
