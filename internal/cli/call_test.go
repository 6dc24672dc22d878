package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tasksim/tasksim/clock"
	"github.com/tasksim/tasksim/internal/refserver"
	"github.com/tasksim/tasksim/mcp"
	"github.com/tasksim/tasksim/mcp/server"
)

func referenceServer(t *testing.T) string {
	t.Helper()
	url, _ := refserver.Start(t, nil)
	return url
}

func TestCallModes(t *testing.T) {
	url := referenceServer(t)
	for _, mode := range []string{"plain", "immediate", "streaming", "task", "poll", "partial"} {
		t.Run(mode, func(t *testing.T) {
			code, stdout, stderr := run(t, "", "call", "--server", url, "--tool", "slow_text",
				"--args", `{"chunks":3,"chunkSize":10,"intervalMs":5}`, "--mode", mode, "--poll-interval", "10ms")
			if code != ExitOK {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			want := server.ChunkText(1, 10) + server.ChunkText(2, 10) + server.ChunkText(3, 10)
			if strings.TrimSpace(stdout) != want {
				t.Errorf("stdout %q, want %q", stdout, want)
			}
			ok := strings.Contains(stderr, " completed · mode "+mode)
			if mode == "immediate" {
				// Whether slow_text ends within the server's immediate
				// window depends on the machine's speed: the answer is the
				// whole result with no task (SEP-1905 Case 1) or a task
				// that completed (Case 2); both are right.
				ok = ok || strings.Contains(stderr, "no task · mode immediate, answered immediate")
			}
			if mode != "plain" && !ok {
				t.Errorf("summary line %q", stderr)
			}
		})
	}
}

func TestCallJSON(t *testing.T) {
	url := referenceServer(t)
	code, stdout, stderr := run(t, "", "call", "--server", url, "--tool", "slow_text",
		"--args", `{"chunks":2,"intervalMs":5}`, "--mode", "streaming", "--json")
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var got struct {
		Result struct {
			Complete bool `json:"complete"`
			Content  []struct {
				Text string `json:"text"`
			} `json:"content"`
		} `json:"result"`
		Answer   string `json:"answer"`
		Segments int    `json:"segments"`
		Timeline []struct {
			Kind  string `json:"kind"`
			SeqNr int64  `json:"seqNr"`
		} `json:"timeline"`
	}
	if err := json.Unmarshal([]byte(stdout), &got); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, stdout)
	}
	if !got.Result.Complete || len(got.Result.Content) != 2 || got.Answer != "streaming" || got.Segments != 2 {
		t.Errorf("result %+v answer %s segments %d", got.Result, got.Answer, got.Segments)
	}
	var segs []int64
	for _, e := range got.Timeline {
		if e.Kind == "segment" {
			segs = append(segs, e.SeqNr)
		}
	}
	if len(segs) != 2 || segs[0] != 1 || segs[1] != 2 {
		t.Errorf("timeline segments %v", segs)
	}
}

func TestCallCancelAfter(t *testing.T) {
	url := referenceServer(t)
	code, _, stderr := run(t, "", "call", "--server", url, "--tool", "sleep", "--args", `{"durationMs":60000}`, "--mode", "task", "--cancel-after", "50ms")
	if code != ExitOK || !strings.Contains(stderr, "cancelled") {
		t.Errorf("exit %d, stderr %q: want 0 and a cancelled task", code, stderr)
	}
}

// A plain call has no task: --cancel-after cancels it with
// notifications/cancelled before its answer, and that is a call cancelled
// as asked (exit 0, docs/cli.md). It used to exit 3.
func TestCallCancelAfterPlain(t *testing.T) {
	url := referenceServer(t)
	code, _, stderr := run(t, "", "call", "--server", url, "--tool", "sleep", "--args", `{"durationMs":600000}`, "--mode", "plain", "--cancel-after", "10ms")
	if code != ExitOK || !strings.Contains(stderr, "cancelled by the client after 10ms") {
		t.Errorf("exit %d, stderr %q: want 0 and the call cancelled", code, stderr)
	}
}

// The races that made --cancel-after exit 1 or 3 now and then, driven in
// a fixed order on a simulated clock. First the cancel is due while the
// server holds the CreateTaskResult: the client must wait for the task's
// id and cancel the task with tasks/cancel (it used to end the call,
// exit 3). Then a tasks/get goes out before tasks/cancel is answered and
// is answered working only after the client took the cancel's cancelled
// answer (its tasks/result, sent once it saw a terminal status, says so).
// A terminal status is final (2025-11-25 Tasks, "Task Status Lifecycle"):
// the call ends cancelled, and exits 0 as docs/cli.md promises.
func TestCallCancelAfterLateWorking(t *testing.T) {
	srv := newCancelRace()
	hs := httptest.NewServer(srv)
	t.Cleanup(hs.Close)
	t.Cleanup(srv.stop)                                                   // first: release whatever the script holds
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute) // a hang fails, it does not stall
	defer cancel()
	clk := &watchedClock{Sim: clock.NewSim(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)), made: make(chan time.Duration, 16)}
	var stdout, stderr bytes.Buffer
	st := &State{Stdin: strings.NewReader(""), Stdout: &stdout, Stderr: &stderr, Getenv: func(string) string { return "" }, Context: ctx, Clock: clk,
		Args: []string{"call", "--server", hs.URL + "/mcp", "--tool", "sleep", "--mode", "task",
			"--poll-interval", "1ms", "--cancel-after", "1ms", "--json"}}
	exited := make(chan int, 1)
	go func() { exited <- Main(st) }()
	wait := func(what string, ch <-chan struct{}) {
		t.Helper()
		select {
		case <-ch:
		case code := <-exited:
			t.Fatalf("the call ended (exit %d) before %s; stderr %q", code, what, stderr.String())
		case <-ctx.Done():
			t.Fatalf("no %s: %v", what, ctx.Err())
		}
	}
	timer := func(what string) {
		t.Helper()
		select {
		case d := <-clk.made:
			if d != time.Millisecond {
				code := -1
				select {
				case code = <-exited:
				case <-ctx.Done():
				}
				t.Fatalf("a %v timer where %s was due, want 1ms (exit %d, stderr %q)", d, what, code, stderr.String())
			}
		case code := <-exited:
			t.Fatalf("the call ended (exit %d) before %s; stderr %q", code, what, stderr.String())
		case <-ctx.Done():
			t.Fatalf("no %s: %v", what, ctx.Err())
		}
	}
	timer("the cancel timer") // made before tools/call is sent
	wait("tools/call", srv.callHeld)
	if n := clk.Advance(time.Millisecond); n != 1 {
		t.Fatalf("%d timers fired at the cancel's time, want the cancel alone", n)
	}
	close(srv.callRelease) // the task's id reaches the client after its cancel was due
	timer("the poll timer")
	clk.Advance(time.Millisecond)
	var code int
	select {
	case code = <-exited:
	case <-ctx.Done():
		t.Fatalf("the call did not end: %v", ctx.Err())
	}
	if code != ExitOK {
		t.Fatalf("exit %d, want 0; stderr %q", code, stderr.String())
	}
	var got struct {
		Task struct {
			Status string `json:"status"`
		} `json:"task"`
	}
	if err := json.Unmarshal(stdout.Bytes(), &got); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, stdout.String())
	}
	if got.Task.Status != "cancelled" {
		t.Errorf("task status %q, want cancelled", got.Task.Status)
	}
	if n := srv.gets(); n != 1 {
		t.Errorf("%d tasks/get, want 1", n)
	}
	if n := srv.cancels(); n != 1 {
		t.Errorf("%d tasks/cancel, want 1", n)
	}
}

// watchedClock is a simulated clock that says when a timer is made, and
// for how long.
type watchedClock struct {
	*clock.Sim
	made chan time.Duration
}

func (c *watchedClock) AfterFunc(d time.Duration, f func()) clock.Timer {
	t := c.Sim.AfterFunc(d, f)
	select {
	case c.made <- d:
	default: // more timers than a test waits for: it fails on the count
	}
	return t
}

// cancelRace is a scripted Streamable HTTP server, JSON answers only, that
// orders the races of a cancelled task call: tools/call is answered once
// callRelease is closed; tasks/cancel once a tasks/get is held; that
// tasks/get (working) once tasks/result arrived; tasks/result once the
// tasks/get was answered.
type cancelRace struct {
	callHeld, callRelease                      chan struct{}
	getHeld, resultAsked, getAnswered, stopped chan struct{}
	once                                       [5]sync.Once
	mu                                         sync.Mutex
	n, cancelled                               int
}

func newCancelRace() *cancelRace {
	return &cancelRace{callHeld: make(chan struct{}), callRelease: make(chan struct{}),
		getHeld: make(chan struct{}), resultAsked: make(chan struct{}), getAnswered: make(chan struct{}), stopped: make(chan struct{})}
}

func (s *cancelRace) stop() { s.once[3].Do(func() { close(s.stopped) }) }

func (s *cancelRace) gets() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.n
}

func (s *cancelRace) cancels() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cancelled
}

// hold waits for ch; false when the test is over.
func (s *cancelRace) hold(r *http.Request, ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	case <-s.stopped:
	case <-r.Context().Done():
	}
	return false
}

func (s *cancelRace) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch r.Method {
	case http.MethodPost:
	case http.MethodDelete:
		return
	default:
		w.WriteHeader(http.StatusMethodNotAllowed)
		return
	}
	body, _ := io.ReadAll(r.Body)
	msg, err := mcp.DecodeMessage(body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	if msg.Kind() != mcp.KindRequest {
		w.WriteHeader(http.StatusAccepted)
		return
	}
	poll := int64(1)
	task := func(st mcp.TaskStatus) mcp.Task {
		return mcp.Task{TaskID: "t1", Status: st, CreatedAt: "2025-11-25T10:30:00.000Z", LastUpdatedAt: "2025-11-25T10:30:00.000Z", PollInterval: &poll}
	}
	var res any
	switch msg.Method {
	case mcp.MethodInitialize:
		w.Header().Set("Mcp-Session-Id", "race-1")
		res = mcp.InitializeResult{ProtocolVersion: mcp.LatestProtocolVersion, ServerInfo: mcp.Implementation{Name: "race", Version: "1"},
			Capabilities: mcp.ServerCapabilities{Tasks: &mcp.TasksCapability{Responses: &mcp.ResponsesCapability{Modes: mcp.AllModes()}}}}
	case mcp.MethodToolsCall:
		s.once[4].Do(func() { close(s.callHeld) })
		if !s.hold(r, s.callRelease) {
			return
		}
		res = mcp.CreateTaskResult{Task: task(mcp.StatusWorking)}
	case mcp.MethodTasksGet:
		s.mu.Lock()
		s.n++
		s.mu.Unlock()
		s.once[0].Do(func() { close(s.getHeld) })
		if !s.hold(r, s.resultAsked) {
			return
		}
		defer s.once[2].Do(func() { close(s.getAnswered) })
		res = task(mcp.StatusWorking)
	case mcp.MethodTasksCancel:
		s.mu.Lock()
		s.cancelled++
		s.mu.Unlock()
		if !s.hold(r, s.getHeld) {
			return
		}
		res = task(mcp.StatusCancelled)
	case mcp.MethodTasksResult:
		s.once[1].Do(func() { close(s.resultAsked) })
		if !s.hold(r, s.getAnswered) {
			return
		}
		res = mcp.CallToolResult{Content: []mcp.ContentBlock{mcp.TextBlock("cancelled")}, IsError: true}
	default:
		http.Error(w, "unexpected "+msg.Method, http.StatusBadRequest)
		return
	}
	out, err := mcp.NewResult(msg.ID, res)
	if err != nil {
		panic(err)
	}
	b, _ := out.MarshalJSON()
	w.Header().Set("Content-Type", "application/json")
	w.Write(b)
}

func TestCallBadInput(t *testing.T) {
	url := referenceServer(t)
	notMCP := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		w.Write([]byte("<html>hello</html>"))
	}))
	defer notMCP.Close()
	silent := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// Read the request as a server does (only then does net/http
		// notice the client hanging up), then never answer.
		_, _ = io.Copy(io.Discard, r.Body)
		<-r.Context().Done()
	}))
	defer silent.Close()
	cases := []struct {
		name string
		args []string
		code int
		want string
	}{
		{"no tool", []string{"call", "--server", url}, ExitUsage, "--tool is required"},
		{"no server", []string{"call", "--tool", "x"}, ExitUsage, "--server"},
		{"both servers", []string{"call", "--server", url, "--server-cmd", "x", "--tool", "x"}, ExitUsage, "not both"},
		{"bad url", []string{"call", "--server", "127.0.0.1:1", "--tool", "x"}, ExitUsage, "http://"},
		{"args not JSON", []string{"call", "--server", url, "--tool", "echo", "--args", "{nope"}, ExitUsage, "not a JSON object"},
		{"args not an object", []string{"call", "--server", url, "--tool", "echo", "--args", "[1]"}, ExitUsage, "not a JSON object"},
		{"bad mode", []string{"call", "--server", url, "--tool", "echo", "--mode", "warp"}, ExitUsage, "unknown call mode"},
		{"bad quoting", []string{"call", "--server-cmd", "sh -c 'x", "--tool", "echo"}, ExitUsage, "quote"},
		{"unknown tool", []string{"call", "--server", url, "--tool", "nope", "--mode", "plain"}, ExitUsage, "Unknown tool"},
		{"task for a forbidden tool", []string{"call", "--server", url, "--tool", "echo", "--mode", "task"}, ExitUsage, "does not support"},
		{"unreachable", []string{"call", "--server", "http://127.0.0.1:1/mcp", "--tool", "x"}, ExitRuntime, "connect"},
		{"not MCP", []string{"call", "--server", notMCP.URL, "--tool", "x"}, ExitRuntime, "connect"},
		{"never answers", []string{"call", "--server", silent.URL, "--tool", "x", "--timeout", "300ms"}, ExitRuntime, "within 300ms"},
		{"missing command", []string{"call", "--server-cmd", "/nonexistent/server", "--tool", "x"}, ExitRuntime, "connect"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			code, _, stderr := run(t, "", tc.args...)
			if code != tc.code {
				t.Errorf("exit %d, want %d; stderr %q", code, tc.code, stderr)
			}
			if strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, tc.want) {
				t.Errorf("stderr %q: want one line mentioning %q", stderr, tc.want)
			}
		})
	}
}

// TestCallLiveOnce: on a terminal, a call that receives both SEP-1905
// segments and SEP-2679 partials (streaming with partials declared)
// prints every chunk once, not once per channel.
func TestCallLiveOnce(t *testing.T) {
	url := referenceServer(t)
	for _, mode := range []string{"streaming", "partial", "task"} {
		t.Run(mode, func(t *testing.T) {
			var out, errb strings.Builder
			st := &State{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb, StdoutTTY: true,
				Getenv: func(string) string { return "" }, Context: t.Context(),
				Args: []string{"call", "--server", url, "--tool", "slow_text",
					"--args", `{"chunks":4,"chunkSize":10,"intervalMs":5}`, "--mode", mode, "--poll-interval", "10ms"}}
			if code := Main(st); code != ExitOK {
				t.Fatalf("exit %d: %s", code, errb.String())
			}
			want := server.ChunkText(1, 10) + server.ChunkText(2, 10) + server.ChunkText(3, 10) + server.ChunkText(4, 10)
			if got := strings.TrimSpace(out.String()); got != want {
				t.Errorf("stdout %q, want %q", got, want)
			}
		})
	}
}
