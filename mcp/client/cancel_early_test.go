package client_test

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/tasksim/tasksim/mcp"
	"github.com/tasksim/tasksim/mcp/client"
	"github.com/tasksim/tasksim/mcp/server"
	"github.com/tasksim/tasksim/mcp/stdio"
	"github.com/tasksim/tasksim/mcp/streamhttp"
)

// holdAnswer is an endpoint that holds the first answer to a request of
// one method until release is closed, and closes held when that answer is
// ready: the server has done its part (made the task), the client does
// not know it yet.
type holdAnswer struct {
	mcp.Endpoint
	method        string
	held, release chan struct{}
	once          sync.Once

	mu       sync.Mutex
	received map[string]int // messages the server received, by method
	callID   mcp.ID         // of the last tools/call
	// callCancels counts notifications/cancelled for callID. (A call
	// that ends cancels its own requests still in flight, a tasks/get
	// say: those do not count.)
	callCancels int
}

// count returns how many messages of method the server received.
func (h *holdAnswer) count(method string) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.received[method]
}

// cancelsOfCall returns how many notifications/cancelled named the
// tools/call request.
func (h *holdAnswer) cancelsOfCall() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.callCancels
}

func newHoldAnswer(ep mcp.Endpoint, method string) *holdAnswer {
	return &holdAnswer{Endpoint: ep, method: method, held: make(chan struct{}), release: make(chan struct{}), received: map[string]int{}}
}

func (h *holdAnswer) NewSession(out mcp.Outbox) mcp.Session {
	return &holdSession{Session: h.Endpoint.NewSession(out), h: h}
}

type holdSession struct {
	mcp.Session
	h *holdAnswer
}

func (s *holdSession) Handle(ctx context.Context, msg *mcp.Message, r mcp.Replier) {
	s.h.mu.Lock()
	s.h.received[msg.Method]++
	switch msg.Method {
	case mcp.MethodToolsCall:
		s.h.callID = msg.ID
	case mcp.NotificationCancelled:
		var p mcp.CancelledParams
		if json.Unmarshal(msg.Params, &p) == nil && p.RequestID.String() == s.h.callID.String() {
			s.h.callCancels++
		}
	}
	s.h.mu.Unlock()
	if r != nil && msg.Method == s.h.method {
		r = &holdReplier{Replier: r, h: s.h}
	}
	s.Session.Handle(ctx, msg, r)
}

type holdReplier struct {
	mcp.Replier
	h *holdAnswer
}

func (r *holdReplier) Reply(ctx context.Context, msg *mcp.Message, final bool) error {
	first := false
	r.h.once.Do(func() { first = true })
	if first {
		close(r.h.held)
		select {
		case <-r.h.release:
		case <-ctx.Done():
		}
	}
	return r.Replier.Reply(ctx, msg, final)
}

// earlyTransports are in-memory transports that run the reference server
// (behind ep) inside a synctest bubble. Over Streamable HTTP a POST whose
// answer is held does not return; over stdio it returns at once.
var earlyTransports = map[string]func(ep mcp.Endpoint) (mcp.Transport, func()){
	"stdio": func(ep mcp.Endpoint) (mcp.Transport, func()) { return stdio.Pipe(ep, nil), func() {} },
	"http": func(ep mcp.Endpoint) (mcp.Transport, func()) {
		h := streamhttp.NewHandler(ep, &streamhttp.Options{Logger: slog.New(slog.DiscardHandler)})
		tr := streamhttp.Pipe(h)
		tr.NoStandaloneStream = true
		return tr, func() { h.Close() }
	},
}

// inEachEarlyTransport runs f once per transport of earlyTransports, each
// inside a synctest bubble of its own.
func inEachEarlyTransport(t *testing.T, f func(t *testing.T, transport string)) {
	for _, transport := range []string{"stdio", "http"} {
		t.Run(transport, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) { f(t, transport) })
		})
	}
}

// callEarlyCancel calls tool in mode with CancelAfter 1ms while the server
// holds its answer to tools/call: the cancel is due before the client
// knows of any task. The answer is released once the cancel timer fired
// and the client did what it does then (synctest.Wait). It returns how the
// call ended and, in hold, what the server received until the session
// closed. It runs inside a synctest bubble.
func callEarlyCancel(t *testing.T, transport string, o client.CallOptions) (*client.CallResult, error, *holdAnswer) {
	t.Helper()
	srv := server.New(&server.Options{PollInterval: time.Hour})
	defer srv.Close()
	hold := newHoldAnswer(srv, mcp.MethodToolsCall)
	tr, closeTr := earlyTransports[transport](hold)
	defer closeTr()
	ctx := context.Background()
	sess, err := client.New(&client.Options{NoPartial: true}).Connect(ctx, tr)
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close()
	o.CancelAfter = time.Millisecond
	type outcome struct {
		res *client.CallResult
		err error
	}
	done := make(chan outcome, 1)
	start := time.Now()
	go func() {
		res, err := sess.CallTool(ctx, o)
		done <- outcome{res, err}
	}()
	select {
	case <-hold.held:
	case out := <-done:
		t.Fatalf("the call ended before the server answered: %v", out.err)
	}
	time.Sleep(time.Until(start.Add(o.CancelAfter))) // bubble time: the cancel is due
	synctest.Wait()
	if time.Since(start) < o.CancelAfter {
		t.Fatalf("released after %v, before the cancel was due", time.Since(start))
	}
	close(hold.release)
	out := <-done
	sess.Close()
	synctest.Wait() // whatever the client still sent has arrived
	return out.res, out.err, hold
}

// TestCancelDueBeforeTaskExists: CancelAfter runs out while the server has
// made the task but its CreateTaskResult has not reached the client. The
// client waits for the task's id and cancels the task with tasks/cancel
// (2025-11-25 Tasks, "Cancelling Tasks"); it never ends the call with
// notifications/cancelled, which would leave the task running. Over
// Streamable HTTP, where the POST returns only with its answer, the call
// used to end at once "cancelled by the client", without a task.
func TestCancelDueBeforeTaskExists(t *testing.T) {
	for _, mode := range []client.Mode{client.ModeTask, client.ModePoll, client.ModePartial, client.ModeStreaming, client.ModeImmediate} {
		t.Run(string(mode), func(t *testing.T) {
			inEachEarlyTransport(t, func(t *testing.T, transport string) {
				res, err, hold := callEarlyCancel(t, transport, client.CallOptions{Name: server.ToolSleep, Mode: mode,
					Args: map[string]any{"durationMs": 3_600_000}})
				if err != nil {
					t.Fatalf("the call ended with %v, want the task cancelled", err)
				}
				if res.Task == nil || res.Task.Status != mcp.StatusCancelled {
					t.Fatalf("task %+v, want cancelled", res.Task)
				}
				if n := hold.count(mcp.MethodTasksCancel); n != 1 {
					t.Errorf("the server received %d tasks/cancel, want 1", n)
				}
				if n := hold.cancelsOfCall(); n != 0 {
					t.Errorf("the server received notifications/cancelled for a task-augmented tools/call")
				}
				created, cancel := -1, -1
				for i, e := range res.Timeline {
					switch {
					case e.Kind == client.EventTaskCreated && created < 0:
						created = i
					case e.Kind == client.EventRequestSent && e.Method == mcp.MethodTasksCancel:
						cancel = i
					}
				}
				if created < 0 || cancel < created {
					t.Errorf("tasks/cancel at event %d, the task's id at %d: want the cancel after the id", cancel, created)
				}
			})
		})
	}
}

// TestCancelDueBeforeImmediateResult: the cancel is due before a SEP-1905
// Case 1 answer, which carries the result and names the task made for it.
// The result is in hand: nothing is left to cancel, and no tasks/cancel is
// sent for the task.
func TestCancelDueBeforeImmediateResult(t *testing.T) {
	inEachEarlyTransport(t, func(t *testing.T, transport string) {
		res, err, hold := callEarlyCancel(t, transport, client.CallOptions{Name: server.ToolInstant, Mode: client.ModeImmediate,
			Args: map[string]string{"text": "now"}})
		if err != nil {
			t.Fatalf("the call ended with %v, want its result", err)
		}
		if res.Answer != client.AnswerImmediate || !res.Complete || res.TaskID == "" {
			t.Fatalf("answer %q complete %v task %q, want a complete Case 1 answer", res.Answer, res.Complete, res.TaskID)
		}
		wantContent(t, res.Content, []mcp.ContentBlock{mcp.TextBlock("now")})
		if n := count(res.Timeline, client.EventCancel, mcp.MethodTasksCancel); n != 0 {
			t.Errorf("the call cancelled a task whose result it holds (%d tasks/cancel), want none", n)
		}
		if n := hold.count(mcp.MethodTasksCancel); n != 0 {
			t.Errorf("the server received %d tasks/cancel for a task whose result the call holds, want 0", n)
		}
	})
}

// TestCancelDueBeforePlainAnswer: a plain call has no task; its cancel is
// notifications/cancelled, sent as soon as it is due (here before the
// held answer), and the call ends with ErrCancelled.
func TestCancelDueBeforePlainAnswer(t *testing.T) {
	inEachEarlyTransport(t, func(t *testing.T, transport string) {
		res, err, hold := callEarlyCancel(t, transport, client.CallOptions{Name: server.ToolEcho, Mode: client.ModePlain,
			Args: map[string]string{"x": "y"}})
		if !errors.Is(err, client.ErrCancelled) {
			t.Fatalf("the call ended with %v, want ErrCancelled", err)
		}
		if res == nil || res.Complete || res.TaskID != "" {
			t.Fatalf("result %+v, want an incomplete one without a task", res)
		}
		if n := hold.cancelsOfCall(); n != 1 {
			t.Errorf("the server received %d notifications/cancelled for the tools/call, want 1", n)
		}
	})
}

// TestCloseSendsPendingCancel: Close right after a plain call was
// cancelled still sends its notifications/cancelled, which was on its way.
// Close used to close the connection under it: the server never heard of
// the cancel and ran the tool on (an hour here). The notice's write is
// held until Close has started.
func TestCloseSendsPendingCancel(t *testing.T) {
	inEachEarlyTransport(t, func(t *testing.T, transport string) {
		srv := server.New(nil)
		defer srv.Close()
		seen := newHoldAnswer(srv, "") // holds nothing, counts
		tr, closeTr := earlyTransports[transport](seen)
		defer closeTr()
		gate := make(chan struct{})
		gated := mcp.DecorateTransport(tr, func(c mcp.Conn) mcp.Conn {
			return mcp.Decorate(c, mcp.ConnFuncs{Write: func(ctx context.Context, in mcp.Conn, m *mcp.Message) error {
				if m.Method == mcp.NotificationCancelled {
					<-gate
				}
				return in.Write(ctx, m)
			}})
		})
		ctx := context.Background()
		sess, err := client.New(nil).Connect(ctx, gated)
		if err != nil {
			t.Fatal(err)
		}
		_, err = sess.CallTool(ctx, client.CallOptions{Name: server.ToolSleep, Mode: client.ModePlain,
			Args: map[string]any{"durationMs": 3_600_000}, CancelAfter: time.Millisecond})
		if !errors.Is(err, client.ErrCancelled) {
			t.Fatalf("the call ended with %v, want ErrCancelled", err)
		}
		closed := make(chan struct{})
		go func() {
			sess.Close()
			close(closed)
		}()
		synctest.Wait() // Close has started, or is done
		close(gate)
		<-closed
		synctest.Wait()
		if n := seen.cancelsOfCall(); n != 1 {
			t.Errorf("the server received %d notifications/cancelled for the tools/call, want 1", n)
		}
	})
}
