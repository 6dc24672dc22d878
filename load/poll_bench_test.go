package load_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/tasksim/tasksim/internal/refserver"
	"github.com/tasksim/tasksim/load"
	"github.com/tasksim/tasksim/mcp/client"
	"github.com/tasksim/tasksim/mcp/server"
	"github.com/tasksim/tasksim/mcp/streamhttp"
)

// BenchmarkGetTaskHTTP measures one tasks/get poll through the reference
// client (Session.GetTask: encode, POST, the JSON answer back to the
// caller, decode) against the reference server on loopback, both in this
// process: the per-request cost the polling load generator pays. The
// allocation figures are the client's and the server's together:
//
//	go test -run '^$' -bench GetTaskHTTP -benchmem ./load
func BenchmarkGetTaskHTTP(b *testing.B) {
	url, _ := refserver.Start(b, &server.Options{MaxTaskOpsPerSecond: -1})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	sess, err := client.New(nil).Connect(ctx, &streamhttp.ClientTransport{URL: url})
	if err != nil {
		b.Fatal(err)
	}
	defer sess.Close()
	// A task that outlives the benchmark, polled by id.
	created := make(chan string, 1)
	done := make(chan struct{})
	go func() {
		defer close(done)
		_, _ = sess.CallTool(ctx, client.CallOptions{
			Name: server.ToolSlowText, Args: json.RawMessage(`{"chunks":1,"durationMs":600000}`), Mode: client.ModePoll, PollInterval: 1 << 62,
			OnEvent: func(e client.Event) {
				if e.Kind == client.EventTaskCreated {
					created <- e.TaskID
				}
			},
		})
	}()
	id := <-created
	b.ReportAllocs()
	cpu0 := pollBenchCPU(b)
	for b.Loop() {
		if _, err := sess.GetTask(ctx, id); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	// CPU time, unlike wall time, hardly depends on what else the machine
	// runs.
	b.ReportMetric(float64((pollBenchCPU(b)-cpu0).Microseconds())/float64(b.N), "cpu-µs/op")
	cancel()
	<-done
}

// pollBenchCPU returns the CPU time this process has used (10 ms
// resolution: a run of the benchmark lasts about a second).
func pollBenchCPU(b *testing.B) time.Duration {
	d, err := load.ProcessCPU(0)
	if err != nil {
		b.Fatal(err)
	}
	return d
}
