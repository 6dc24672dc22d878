package client_test

import (
	"context"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/tasksim/tasksim/clock"
	"github.com/tasksim/tasksim/mcp"
	"github.com/tasksim/tasksim/mcp/client"
	"github.com/tasksim/tasksim/mcp/server"
	"github.com/tasksim/tasksim/mcp/streamhttp"
)

// simTTLRun runs, on a simulated clock, the reference client and server
// over the in-memory Streamable HTTP transport: a SEP-1905 streaming call
// of slow_text producing a chunk a second for 100 s, with a task ttl of
// 60 s, so the task expires in the middle of its stream (SEP-1905 test
// scenario 9). Ids come from seeded sources. It returns what the call
// ended with and every message through the client's connection, in
// order, as JSON.
func simTTLRun(tb testing.TB, seed byte) (*client.CallResult, error, []string) {
	tb.Helper()
	return simStreamRun(tb, seed, client.CallOptions{
		Name: server.ToolSlowText, Mode: client.ModeStreaming, TTL: 60 * time.Second,
		Args: map[string]any{"chunks": 100, "chunkSize": 8, "intervalMs": 1000},
	})
}

// simStreamRun runs one call of o on a simulated clock, the reference
// client and server over the in-memory Streamable HTTP transport, ids
// from seeded sources, and returns what the call ended with and every
// message through the client's connection, in order, as JSON.
func simStreamRun(tb testing.TB, seed byte, o client.CallOptions) (*client.CallResult, error, []string) {
	tb.Helper()
	// The run's goroutines: RunUntil moves the clock when they all wait.
	scope, release := clock.Confine(context.Background())
	defer release()
	sim := clock.NewSim(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	srv := server.New(&server.Options{Clock: sim, Rand: rand.NewChaCha8([32]byte{seed})})
	h := streamhttp.NewHandler(srv, &streamhttp.Options{Clock: sim, Rand: rand.NewChaCha8([32]byte{seed, 1})})
	defer srv.Close()
	defer h.Close()
	tr := streamhttp.Pipe(h)
	tr.Clock = sim
	// One stream carries everything: no standalone GET stream, and no
	// partial notifications (the client does not declare them), so the
	// order of messages is the server's.
	tr.NoStandaloneStream = true

	var mu sync.Mutex
	var wire []string
	note := func(dir string, m *mcp.Message) {
		b, _ := m.MarshalJSON()
		mu.Lock()
		wire = append(wire, dir+" "+string(b))
		mu.Unlock()
	}
	capture := mcp.DecorateTransport(tr, func(c mcp.Conn) mcp.Conn {
		return mcp.Decorate(c, mcp.ConnFuncs{
			Read: func(ctx context.Context, in mcp.Conn) (*mcp.Message, error) {
				m, err := in.Read(ctx)
				if err == nil {
					note("s>c", m)
				}
				return m, err
			},
			Write: func(ctx context.Context, in mcp.Conn, m *mcp.Message) error {
				note("c>s", m)
				return in.Write(ctx, m)
			},
		})
	})

	ctx, cancel := context.WithTimeout(scope, time.Minute)
	defer cancel()
	type outcome struct {
		res *client.CallResult
		err error
	}
	done := make(chan outcome, 1)
	go func() {
		sess, err := client.New(&client.Options{Clock: sim, NoPartial: true}).Connect(ctx, capture)
		if err != nil {
			done <- outcome{nil, err}
			return
		}
		defer sess.Close()
		res, err := sess.CallTool(ctx, o)
		done <- outcome{res, err}
	}()
	var out outcome
	finished := func() bool {
		select {
		case out = <-done:
			return true
		default:
			return false
		}
	}
	if err := sim.RunUntil(ctx, finished); err != nil {
		tb.Fatalf("simulation: %v (at %v)", err, sim.Now())
	}
	mu.Lock()
	defer mu.Unlock()
	return out.res, out.err, slices.Clone(wire)
}

// TestSimTTLExpiryMidStream: the task expires at 60 s of simulated time,
// after 59 of its 100 chunks: the stream ends with a last segment saying
// so, isError and isComplete, and the task failed (SEP-1905 scenario 9).
// The same seed gives the same messages, ids included, in the same order.
func TestSimTTLExpiryMidStream(t *testing.T) {
	res, err, first := simTTLRun(t, 7)
	if err != nil {
		t.Fatalf("the call ended with %v", err)
	}
	if res.Task == nil || res.Task.Status != mcp.StatusFailed || res.Task.StatusMessage != "Task has expired" || !res.IsError {
		t.Fatalf("the call ended with task %+v, isError %v; want failed, \"Task has expired\"", res.Task, res.IsError)
	}
	segments := 0
	for _, m := range first {
		if n := countSeqNrs(m); n > 0 {
			segments += n
		}
	}
	if segments != 60 {
		t.Errorf("%d segments; want 59 chunks and the expiry's segment", segments)
	}
	_, _, second := simTTLRun(t, 7)
	if !slices.Equal(first, second) {
		for i := range min(len(first), len(second)) {
			if first[i] != second[i] {
				t.Fatalf("message %d differs between two runs of seed 7:\n%s\n%s", i, first[i], second[i])
			}
		}
		t.Fatalf("two runs of seed 7 carried %d and %d messages", len(first), len(second))
	}
	_, _, other := simTTLRun(t, 8)
	if slices.Equal(first, other) {
		t.Error("seeds 7 and 8 gave the same messages: the ids are not drawn from the seed")
	}
}

func countSeqNrs(wire string) int {
	n := 0
	for i := 0; i+7 <= len(wire); i++ {
		if wire[i:i+7] == `"seqNr"` {
			n++
		}
	}
	return n
}

// BenchmarkSimTTLExpiryMidStream measures the wall time of the run above:
// 60 s of simulated time, 60 segments, the expiry.
func BenchmarkSimTTLExpiryMidStream(b *testing.B) {
	for range b.N {
		if res, err, _ := simTTLRun(b, 7); err != nil || res.Task == nil || res.Task.Status != mcp.StatusFailed {
			b.Fatalf("ended with %v", err)
		}
	}
}
