package client_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/tasksim/tasksim/clock"
	"github.com/tasksim/tasksim/mcp"
	"github.com/tasksim/tasksim/mcp/client"
	rev "github.com/tasksim/tasksim/mcp/rev20260728"
	"github.com/tasksim/tasksim/mcp/rev20260728/tasks"
	"github.com/tasksim/tasksim/mcp/server"
	"github.com/tasksim/tasksim/mcp/stdio"
	"github.com/tasksim/tasksim/mcp/streamhttp"
)

// These tests drive the client's stateless era (2026-07-28) against the
// reference server, over Streamable HTTP through the in-memory transport
// and over stdio on in-process pipes, inside synctest bubbles. Time is a
// clock.Sim shared by client, server and transport: it moves only when
// every goroutine of the bubble waits (synctest.Wait), one timer at a
// time, so polls land at exact instants.

// pair is a reference server and a stateless client connected to it.
type pair struct {
	sim  *clock.Sim
	conn *client.Stateless
}

// transport options of a pair: decorate the HTTP round trips or the
// client's Conn.
type pairOptions struct {
	rt   func(http.RoundTripper) http.RoundTripper
	conn func(mcp.Conn) mcp.Conn
	copt client.Options
}

func newHTTPPair(t *testing.T, po pairOptions) *pair {
	sim := clock.NewSim(time.Date(2026, 7, 28, 0, 0, 0, 0, time.UTC))
	srv := server.New(&server.Options{Clock: sim, PollInterval: 500 * time.Millisecond})
	h := streamhttp.NewHandler(srv, &streamhttp.Options{Clock: sim, Logger: slog.New(slog.DiscardHandler)})
	tr := streamhttp.Pipe(h)
	tr.Revision, tr.Clock = mcp.Revision20260728, sim
	if po.rt != nil {
		tr.HTTPClient.Transport = po.rt(tr.HTTPClient.Transport)
	}
	return connectPair(t, sim, tr, po, func() { h.Close(); srv.Close() })
}

func newStdioPair(t *testing.T, po pairOptions) *pair {
	sim := clock.NewSim(time.Date(2026, 7, 28, 0, 0, 0, 0, time.UTC))
	srv := server.New(&server.Options{Clock: sim, PollInterval: 500 * time.Millisecond})
	fromServer, serverOut := io.Pipe()
	serverIn, toServer := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() {
		served <- stdio.Serve(ctx, srv, serverIn, serverOut, nil)
		serverOut.Close()
	}()
	return connectPair(t, sim, &stdio.IOTransport{Reader: fromServer, Writer: toServer}, po, func() {
		cancel()
		toServer.Close()
		<-served
		srv.Close()
	})
}

func connectPair(t *testing.T, sim *clock.Sim, tr mcp.Transport, po pairOptions, stop func()) *pair {
	if po.conn != nil {
		tr = mcp.DecorateTransport(tr, po.conn)
	}
	o := po.copt
	o.Clock = sim
	conn, err := client.New(&o).ConnectStateless(context.Background(), tr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		conn.Close()
		stop()
	})
	return &pair{sim: sim, conn: conn}
}

// run calls the tool and moves simulated time until the call ends, at
// most 1000 timers.
func (p *pair) run(t *testing.T, o client.StatelessCallOptions) (*client.StatelessResult, error) {
	t.Helper()
	return p.runCtx(t, context.Background(), o)
}

func (p *pair) runCtx(t *testing.T, ctx context.Context, o client.StatelessCallOptions) (*client.StatelessResult, error) {
	t.Helper()
	type outcome struct {
		res *client.StatelessResult
		err error
	}
	done := make(chan outcome, 1)
	go func() {
		res, err := p.conn.CallTool(ctx, o)
		done <- outcome{res, err}
	}()
	for range 1000 {
		synctest.Wait()
		select {
		case out := <-done:
			return out.res, out.err
		default:
		}
		if !p.sim.StepOne() {
			t.Fatalf("the call waits and no timer is pending (at %v)", p.sim.Now())
		}
	}
	t.Fatal("the call did not end within 1000 timers")
	return nil, nil
}

type transportCase struct {
	name string
	dial func(*testing.T, pairOptions) *pair
}

var statelessTransports = []transportCase{{"http", newHTTPPair}, {"stdio", newStdioPair}}

func eachStateless(t *testing.T, f func(t *testing.T, dial func(*testing.T, pairOptions) *pair)) {
	for _, tc := range statelessTransports {
		t.Run(tc.name, func(t *testing.T) { synctest.Test(t, func(t *testing.T) { f(t, tc.dial) }) })
	}
}

func accept(content string) client.Answerer {
	return func(string, rev.InputRequest) (json.RawMessage, error) {
		return json.RawMessage(`{"action":"accept","content":` + content + `}`), nil
	}
}

func decline(string, rev.InputRequest) (json.RawMessage, error) {
	return json.RawMessage(`{"action":"decline"}`), nil
}

// A tool answered at once: the complete result, no task.
func TestStatelessComplete(t *testing.T) {
	eachStateless(t, func(t *testing.T, dial func(*testing.T, pairOptions) *pair) {
		p := dial(t, pairOptions{})
		res, err := p.run(t, client.StatelessCallOptions{Name: server.ToolGreet, Args: map[string]any{"name": "Bob"}})
		if err != nil || !res.Complete || res.Answer != rev.ResultComplete || texts(res.Content) != "Hello, Bob!" || res.Task != nil {
			t.Fatalf("err %v, result %+v", err, res)
		}
	})
}

// Discover names the revision and the tasks extension.
func TestStatelessDiscover(t *testing.T) {
	eachStateless(t, func(t *testing.T, dial func(*testing.T, pairOptions) *pair) {
		p := dial(t, pairOptions{})
		d, err := p.conn.Discover(context.Background())
		if err != nil || !client.SupportsRevision(d) || !d.Capabilities.HasExtension(tasks.ExtensionID) {
			t.Fatalf("discover: %+v, %v", d, err)
		}
	})
}

// A task is polled with tasks/get to its inlined result, at the
// pollIntervalMs the server gives, read again from every answer: the
// decorated Conn changes it on every task answer, and every poll comes
// exactly that long after the answer before it (Tasks, "Task Polling").
func TestStatelessTaskHonoursPollInterval(t *testing.T) {
	eachStateless(t, func(t *testing.T, dial func(*testing.T, pairOptions) *pair) {
		steps := []int64{300, 1100, 200, 700}
		var mu sync.Mutex
		var announced []int64
		rewrite := func(m *mcp.Message) {
			var fields map[string]json.RawMessage
			if m.Kind() != mcp.KindResponse || json.Unmarshal(m.Result, &fields) != nil || fields["taskId"] == nil {
				return
			}
			mu.Lock()
			v := steps[len(announced)%len(steps)]
			announced = append(announced, v)
			mu.Unlock()
			fields["pollIntervalMs"], _ = json.Marshal(v)
			m.Result, _ = json.Marshal(fields)
		}
		var polls []time.Time
		p := dial(t, pairOptions{conn: readHook(rewrite)})
		res, err := p.run(t, client.StatelessCallOptions{Name: server.ToolSlowCompute, Args: map[string]any{"seconds": 4, "label": "x"},
			OnEvent: func(e client.Event) {
				if e.Kind == client.EventRequestSent && e.Method == tasks.MethodGet {
					polls = append(polls, e.At)
				}
			}})
		if err != nil || !res.Complete || res.Answer != tasks.ResultTypeTask || res.Task.Status != tasks.Completed {
			t.Fatalf("err %v, result %+v", err, res)
		}
		if res.Polls != len(polls) || len(polls) < 3 {
			t.Fatalf("%d polls (%d counted): want several", len(polls), res.Polls)
		}
		prev := res.Start
		for i, at := range polls {
			if want := time.Duration(announced[i]) * time.Millisecond; at.Sub(prev) != want {
				t.Errorf("poll %d came %v after the answer before it; that answer said pollIntervalMs %v", i+1, at.Sub(prev), want)
			}
			prev = at
		}
	})
}

// readHook decorates a Conn so that f sees (and may change) every
// message read.
func readHook(f func(*mcp.Message)) func(mcp.Conn) mcp.Conn {
	return func(c mcp.Conn) mcp.Conn {
		return mcp.Decorate(c, mcp.ConnFuncs{Read: func(ctx context.Context, in mcp.Conn) (*mcp.Message, error) {
			m, err := in.Read(ctx)
			if err == nil {
				f(m)
			}
			return m, err
		}})
	}
}

// CancelAfter cancels the task with tasks/cancel; polling shows it
// cancelled and the call ends there, with no error.
func TestStatelessCancelTask(t *testing.T) {
	eachStateless(t, func(t *testing.T, dial func(*testing.T, pairOptions) *pair) {
		p := dial(t, pairOptions{})
		res, err := p.run(t, client.StatelessCallOptions{Name: server.ToolSlowCompute, Args: map[string]any{"seconds": 600},
			CancelAfter: 2 * time.Second})
		if err != nil || !res.Cancelled || res.Task == nil || res.Task.Status != tasks.Cancelled || res.Complete {
			t.Fatalf("err %v, result %+v", err, res)
		}
		if n := count(res.Timeline, client.EventRequestSent, tasks.MethodCancel); n != 1 {
			t.Errorf("%d tasks/cancel sent, want 1", n)
		}
	})
}

// Ending the caller's ctx (SIGINT) cancels the task too, and one last
// bounded tasks/get reports the status the cancel settled on.
func TestStatelessCancelTaskByContext(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := newHTTPPair(t, pairOptions{})
		ctx, cancel := context.WithCancel(context.Background())
		stop := p.sim.AfterFunc(3*time.Second, cancel)
		defer stop.Stop()
		res, err := p.runCtx(t, ctx, client.StatelessCallOptions{Name: server.ToolSlowCompute, Args: map[string]any{"seconds": 600}})
		if err != nil || !res.Cancelled || res.Task == nil || res.Task.Status != tasks.Cancelled {
			t.Fatalf("err %v, result %+v", err, res)
		}
	})
}

// Input inside a task: tasks/get shows inputRequests, answered with
// tasks/update; accept and decline reach the tool.
func TestStatelessTaskInput(t *testing.T) {
	eachStateless(t, func(t *testing.T, dial func(*testing.T, pairOptions) *pair) {
		for _, tc := range []struct {
			answer client.Answerer
			want   string
		}{
			{accept(`{"confirm":true}`), "Deleted a.txt (pretend)."},
			{decline, "Kept a.txt: the deletion was not confirmed."},
		} {
			p := dial(t, pairOptions{})
			res, err := p.run(t, client.StatelessCallOptions{Name: server.ToolConfirmDelete, Args: map[string]any{"filename": "a.txt"}, Answer: tc.answer})
			if err != nil || !res.Complete || texts(res.Content) != tc.want || res.Updates != 1 || res.InputRounds != 0 {
				t.Fatalf("err %v, result %+v", err, res)
			}
		}
		// Two questions at once, one answer each.
		p := dial(t, pairOptions{})
		res, err := p.run(t, client.StatelessCallOptions{Name: server.ToolMultiInput, Answer: accept(`{"name":"Ann"}`)})
		if err != nil || texts(res.Content) != "Received: Ann, Ann" {
			t.Fatalf("err %v, result %+v", err, res)
		}
	})
}

// Input before a task: InputRequiredResult, retried with a new id, the
// answers and the requestState; then the task.
func TestStatelessInputRoundTrip(t *testing.T) {
	eachStateless(t, func(t *testing.T, dial func(*testing.T, pairOptions) *pair) {
		p := dial(t, pairOptions{})
		res, err := p.run(t, client.StatelessCallOptions{Name: server.ToolWithTask, Answer: accept(`{"name":"Alice"}`)})
		if err != nil || !res.Complete || res.InputRounds != 1 || res.Answer != tasks.ResultTypeTask ||
			!strings.HasPrefix(texts(res.Content), "Hello, Alice!") {
			t.Fatalf("err %v, result %+v", err, res)
		}
		var ids []mcp.ID
		for _, e := range res.Timeline {
			if e.Kind == client.EventRequestSent && e.Method == mcp.MethodToolsCall {
				ids = append(ids, e.RequestID)
			}
		}
		if len(ids) != 2 || ids[0] == ids[1] {
			t.Errorf("tools/call ids %v: want two, the retry with a new id", ids)
		}
		// No answer to give: the call says so.
		_, err = p.run(t, client.StatelessCallOptions{Name: server.ToolWithTask})
		if !errors.Is(err, client.ErrNoAnswer) {
			t.Errorf("without answers: %v, want ErrNoAnswer", err)
		}
	})
}

// An unknown resultType is invalid: the call ends with ErrInvalidResult
// (2026-07-28 Overview, "ResultType").
func TestStatelessUnknownResultType(t *testing.T) {
	eachStateless(t, func(t *testing.T, dial func(*testing.T, pairOptions) *pair) {
		p := dial(t, pairOptions{conn: readHook(func(m *mcp.Message) {
			if m.Kind() == mcp.KindResponse && m.Result != nil {
				m.Result = json.RawMessage(strings.Replace(string(m.Result), `"resultType":"complete"`, `"resultType":"stream"`, 1))
			}
		})})
		res, err := p.run(t, client.StatelessCallOptions{Name: server.ToolGreet, Args: map[string]any{"name": "Bob"}})
		if !errors.Is(err, client.ErrInvalidResult) || res.Complete {
			t.Fatalf("err %v, result %+v: want ErrInvalidResult", err, res)
		}
	})
}

// cutFirst cuts the answer of the first POST carrying method: its body
// fails on the first read, as a broken connection does.
func cutFirst(method string) func(http.RoundTripper) http.RoundTripper {
	var once sync.Once
	return func(next http.RoundTripper) http.RoundTripper {
		return roundTripFunc(func(req *http.Request) (*http.Response, error) {
			resp, err := next.RoundTrip(req)
			if err != nil || req.Header.Get(rev.HeaderMethod) != method {
				return resp, err
			}
			once.Do(func() {
				resp.Body.Close()
				resp.Body = io.NopCloser(errReader{})
			})
			return resp, nil
		})
	}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

type errReader struct{}

func (errReader) Read([]byte) (int, error) { return 0, io.ErrUnexpectedEOF }

// A request whose stream broke before its answer is re-issued with a new
// id, and the result says so: a tools/call among the re-issues may have
// run twice (changelog item 9). Also for a tasks/get.
func TestStatelessReissueAfterCutStream(t *testing.T) {
	for _, method := range []string{mcp.MethodToolsCall, tasks.MethodGet} {
		t.Run(method, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				p := newHTTPPair(t, pairOptions{rt: cutFirst(method)})
				res, err := p.run(t, client.StatelessCallOptions{Name: server.ToolSlowCompute, Args: map[string]any{"seconds": 1, "label": "done"}})
				if err != nil || !res.Complete {
					t.Fatalf("err %v, result %+v", err, res)
				}
				if len(res.Reissues) != 1 || res.Reissues[0].Method != method || res.Reissues[0].Old == res.Reissues[0].New {
					t.Fatalf("re-issues %+v: want one %s with a new id", res.Reissues, method)
				}
				if count(res.Timeline, client.EventReissued, method) != 1 || count(res.Timeline, client.EventStreamLost, method) != 1 {
					t.Errorf("timeline lacks the lost stream or the re-issue: %+v", res.Timeline)
				}
			})
		})
	}
}

// The task's ttl is the backstop: a task still working past it (here a
// ttl the decorated Conn shortens to 3 s, which the server does not
// enforce) does not hold the call (kicad-mcp-pro#75).
func TestStatelessTTLBackstop(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := newHTTPPair(t, pairOptions{conn: readHook(func(m *mcp.Message) {
			if m.Kind() == mcp.KindResponse && m.Result != nil {
				m.Result = json.RawMessage(strings.Replace(string(m.Result), `"ttlMs":300000`, `"ttlMs":3000`, 1))
			}
		})})
		res, err := p.run(t, client.StatelessCallOptions{Name: server.ToolSlowCompute, Args: map[string]any{"seconds": 600}})
		if !errors.Is(err, client.ErrTaskExpired) || res.Complete {
			t.Fatalf("err %v, result %+v: want ErrTaskExpired", err, res)
		}
		if got := res.End.Sub(res.Start); got != 3*time.Second {
			t.Errorf("the call ended %v after it began, want the ttl, 3s", got)
		}
	})
}
