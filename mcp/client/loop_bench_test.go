//go:build unix

package client_test

import (
	"context"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/tasksim/tasksim/mcp"
	"github.com/tasksim/tasksim/mcp/client"
	"github.com/tasksim/tasksim/mcp/server"
	"github.com/tasksim/tasksim/mcp/streamhttp"
)

// benchCalls is how many calls the call-loop benchmarks run at once: each
// stream is idle between its chunks, as the 10,000-stream run's are.
const benchCalls = 32

// BenchmarkCallLoopSegments measures the reference client's call loop
// taking SEP-1905 segments: benchCalls streaming calls at once, b.N
// segments in all, a chunk every millisecond per call, against the
// reference server over the in-memory Streamable HTTP transport. cpu-µs/op
// is the process's CPU (client and server) per segment, which hardly
// depends on what else the machine runs:
//
//	go test -run '^$' -bench CallLoop -benchtime 20000x ./mcp/client
func BenchmarkCallLoopSegments(b *testing.B) {
	benchCallLoop(b, client.ModeStreaming, func(r *client.CallResult) int { return r.Segments })
}

// BenchmarkCallLoopPartials is BenchmarkCallLoopSegments with SEP-2679
// partial notifications (task mode).
func BenchmarkCallLoopPartials(b *testing.B) {
	benchCallLoop(b, client.ModePartial, func(r *client.CallResult) int { return r.Partials })
}

func benchCallLoop(b *testing.B, mode client.Mode, got func(*client.CallResult) int) {
	srv := server.New(&server.Options{MaxTaskOpsPerSecond: -1})
	// The session's replay buffer holds every event: 32 streams at full
	// speed may run ahead of the reader, and past the default bound the
	// stream would drop events and the run would measure resumption.
	h := streamhttp.NewHandler(srv, &streamhttp.Options{EventStoreEvents: 2*b.N + 1024, MaxStreamBytes: 1 << 30, MaxSessionReplayBytes: 1 << 30})
	defer srv.Close()
	defer h.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	sess, err := client.New(nil).Connect(ctx, streamhttp.Pipe(h))
	if err != nil {
		b.Fatal(err)
	}
	defer sess.Close()
	per := max(1, b.N/benchCalls)
	b.ReportAllocs()
	cpu0 := rusageCPU(b)
	b.ResetTimer()
	var wg sync.WaitGroup
	var mu sync.Mutex
	total := 0
	for range benchCalls {
		wg.Go(func() {
			res, err := sess.CallTool(ctx, client.CallOptions{
				Name: server.ToolSlowText, Mode: mode, Args: map[string]any{"chunks": per, "chunkSize": 32, "intervalMs": 1},
				PollInterval: time.Hour, QuietPoll: time.Hour, NoTimeline: true, NoContent: true,
				OnPartial: func(mcp.TaskPartialParams) {}, OnSegment: func(mcp.Segment) {},
			})
			if err != nil {
				b.Error(err)
				return
			}
			mu.Lock()
			total += got(res)
			mu.Unlock()
		})
	}
	wg.Wait()
	b.StopTimer()
	if total != per*benchCalls {
		b.Fatalf("got %d, want %d", total, per*benchCalls)
	}
	b.ReportMetric(float64((rusageCPU(b)-cpu0).Microseconds())/float64(total), "cpu-µs/op")
}

// rusageCPU returns the CPU time (user and system) this process has used.
func rusageCPU(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
