package server_test

import (
	"context"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/tasksim/tasksim/clock"
	"github.com/tasksim/tasksim/mcp"
	"github.com/tasksim/tasksim/mcp/server"
)

// The tests in this file drive a server session in process, without a
// transport: Handle returns once a request is taken, which gives them
// points where the server's state is known.

// replies is a Replier that keeps what it is given.
type replies chan *mcp.Message

func (r replies) Reply(_ context.Context, msg *mcp.Message, _ bool) error {
	if msg != nil {
		r <- msg
	}
	return nil
}

// gate is an Outbox whose Send blocks, holding the sender, until release
// is closed, as a transport that nobody reads would.
type gate struct {
	entered chan struct{}
	release chan struct{}
}

func newGate() *gate { return &gate{entered: make(chan struct{}, 100), release: make(chan struct{})} }

func (g *gate) Send(ctx context.Context, _ *mcp.Message) error {
	g.entered <- struct{}{}
	select {
	case <-g.release:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// handle sends one request to ss and returns where its answer goes.
func handle(t *testing.T, ss mcp.Session, id int64, method string, params any) replies {
	t.Helper()
	msg, err := mcp.NewRequest(mcp.IntID(id), method, params)
	if err != nil {
		t.Fatal(err)
	}
	r := make(replies, 16)
	ss.Handle(context.Background(), msg, r)
	return r
}

// next returns the next message of an answer; the wall-clock limit only
// turns a hang into a failure.
func (r replies) next(t *testing.T) *mcp.Message {
	t.Helper()
	select {
	case m := <-r:
		return m
	case <-time.After(10 * time.Second):
		t.Fatal("no answer")
		return nil
	}
}

func taskIDs(t *testing.T, seed byte, n int) []string {
	t.Helper()
	srv := server.New(&server.Options{Rand: rand.NewChaCha8([32]byte{seed})})
	defer srv.Close()
	ss := srv.NewSession(newGate())
	defer ss.Close()
	var ids []string
	for i := range n {
		m := handle(t, ss, int64(i+1), mcp.MethodToolsCall, callParams(server.ToolSleep, map[string]any{"durationMs": 60000}, &mcp.TaskParams{})).next(t)
		if m.Error != nil {
			t.Fatalf("tools/call: %v", m.Error)
		}
		id := decode[mcp.CreateTaskResult](t, m.Result).Task.TaskID
		if !uuidV4.MatchString(id) {
			t.Fatalf("task id %q is not a version 4 UUID", id)
		}
		ids = append(ids, id)
	}
	return ids
}

// A seeded id source gives the same task ids in the same order, and a
// different seed different ones (STYLE 10: test that the seed is used).
func TestSeededTaskIDsRepeat(t *testing.T) {
	a, b, other := taskIDs(t, 1, 5), taskIDs(t, 1, 5), taskIDs(t, 2, 5)
	if !slices.Equal(a, b) {
		t.Errorf("same seed, different ids:\n%v\n%v", a, b)
	}
	for _, id := range other {
		if slices.Contains(a, id) {
			t.Errorf("seeds 1 and 2 both gave id %s", id)
		}
	}
}

// Expiry fires in the goroutine that advances a clock.Sim. It must not
// wait there for the task's lock, which a tool holds while its partial
// notification waits for a transport nobody reads; and the moment the
// clock passes the ttl, the task is gone.
func TestExpiryDoesNotBlockAdvance(t *testing.T) {
	sim := clock.NewSim(time.Unix(1_700_000_000, 0))
	srv := server.New(&server.Options{Clock: sim})
	defer srv.Close()
	out := newGate()
	ss := srv.NewSession(out)
	defer ss.Close()
	handle(t, ss, 1, mcp.MethodInitialize, mcp.InitializeParams{ProtocolVersion: mcp.LatestProtocolVersion, Capabilities: wantPartials}).next(t)
	created := handle(t, ss, 2, mcp.MethodToolsCall, callParams(server.ToolSlowText, map[string]any{"chunks": 2, "intervalMs": 0}, &mcp.TaskParams{TTL: ptr[int64](1000)})).next(t)
	id := decode[mcp.CreateTaskResult](t, created.Result).Task.TaskID
	<-out.entered // the tool's first partial is stuck in Send, under the task's lock

	advanced := make(chan struct{})
	go func() { sim.Advance(time.Second); close(advanced) }()
	select {
	case <-advanced:
	case <-time.After(10 * time.Second):
		t.Fatal("Advance past the ttl blocks on the expiring task")
	}
	if e := handle(t, ss, 3, mcp.MethodTasksGet, map[string]any{"taskId": id}).next(t).Error; e == nil || e.Message != "Failed to retrieve task: Task has expired" {
		t.Errorf("tasks/get right after the ttl: %v", e)
	}
	close(out.release)
}

// A tasks/result waiting for a task that expires is answered with the
// "expired" error. Handle returns once the request holds the task, so the
// wait has begun when the clock moves.
func TestExpiryAnswersWaiter(t *testing.T) {
	sim := clock.NewSim(time.Unix(1_700_000_000, 0))
	srv := server.New(&server.Options{Clock: sim})
	defer srv.Close()
	ss := srv.NewSession(newGate())
	defer ss.Close()
	created := handle(t, ss, 1, mcp.MethodToolsCall, callParams(server.ToolSleep, map[string]any{"durationMs": 60000}, &mcp.TaskParams{TTL: ptr[int64](1000)})).next(t)
	id := decode[mcp.CreateTaskResult](t, created.Result).Task.TaskID
	waiting := handle(t, ss, 2, mcp.MethodTasksResult, map[string]any{"taskId": id})
	sim.Advance(time.Second)
	m := waiting.next(t)
	if m.Error == nil || m.Error.Code != mcp.CodeInvalidParams || m.Error.Message != "Failed to retrieve task: Task has expired" {
		t.Errorf("waiting tasks/result answered %s %v", m.Result, m.Error)
	}
}
