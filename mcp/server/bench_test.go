package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptrace"
	"slices"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tasksim/tasksim/internal/refserver"
	"github.com/tasksim/tasksim/mcp"
	"github.com/tasksim/tasksim/mcp/server"
	"github.com/tasksim/tasksim/mcp/streamhttp"
)

// BenchmarkTasksGetHTTP measures tasks/get round trips over Streamable
// HTTP on loopback, many clients at once on keep-alive connections:
//
//	go test -run '^$' -bench TasksGetHTTP -benchtime 5s ./mcp/server
func BenchmarkTasksGetHTTP(b *testing.B) {
	url, _ := serve(b, nil)
	c := connect(b, url, mcp.ClientCapabilities{})
	created := result[mcp.CreateTaskResult](c, mcp.MethodToolsCall, callParams(server.ToolSleep, map[string]any{"durationMs": 3_600_000}, &mcp.TaskParams{}))
	req, _ := mcp.NewRequest(mcp.IntID(1), mcp.MethodTasksGet, mcp.GetTaskParams{TaskID: created.Task.TaskID})
	body, _ := req.MarshalJSON()
	hc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 256}}
	var fresh atomic.Int64
	b.SetParallelism(8)
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			r := c.httpReq(http.MethodPost, body)
			r = r.WithContext(httptrace.WithClientTrace(r.Context(), &httptrace.ClientTrace{GotConn: func(i httptrace.GotConnInfo) {
				if !i.Reused {
					fresh.Add(1)
				}
			}}))
			resp, err := hc.Do(r)
			if err != nil {
				b.Error(err)
				return
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				b.Errorf("status %d", resp.StatusCode)
				return
			}
		}
	})
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "req/s")
	b.ReportMetric(float64(fresh.Load()), "newconns")
}

// BenchmarkSSESegmentLatency measures one segment's trip from the tool's
// Emit to the client's reading it off the SSE stream, one at a time (the
// tool emits the next segment only when the client has the previous one):
//
//	go test -run '^$' -bench SSESegmentLatency -benchtime 20000x ./mcp/server
func BenchmarkSSESegmentLatency(b *testing.B) {
	ack := make(chan struct{})
	n := b.N
	pinger := &server.Tool{
		Tool:        mcp.Tool{Name: "pinger", Description: "emits timestamps", InputSchema: json.RawMessage(`{"type":"object"}`), Execution: &mcp.ToolExecution{TaskSupport: mcp.TaskSupportOptional}},
		Incremental: true,
		Prepare: func(json.RawMessage) (server.RunFunc, error) {
			return func(ctx context.Context, c *server.Call) (*mcp.CallToolResult, error) {
				for i := 0; i < n; i++ {
					if err := c.Emit(ctx, mcp.TextBlock(strconv.FormatInt(time.Now().UnixNano(), 10))); err != nil {
						return nil, err
					}
					select {
					case <-ack:
					case <-ctx.Done():
						return nil, ctx.Err()
					}
				}
				return &mcp.CallToolResult{}, nil
			}, nil
		},
	}
	url, _ := serve(b, &server.Options{Tools: []*server.Tool{pinger}})
	c := connect(b, url, mcp.ClientCapabilities{})
	s := c.open(mcp.MethodToolsCall, callParams("pinger", nil, modes(mcp.ModeStreaming)))
	lat := make([]time.Duration, 0, n)
	b.ResetTimer()
	for len(lat) < n {
		m := s.next()
		var r mcp.ToolCallResponse
		if err := json.Unmarshal(m.Result, &r); err != nil {
			b.Fatal(err)
		}
		now := time.Now().UnixNano()
		for _, seg := range r.PartialContent {
			sent, _ := strconv.ParseInt(seg.Text, 10, 64)
			lat = append(lat, time.Duration(now-sent))
			ack <- struct{}{}
		}
	}
	b.StopTimer()
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Nanoseconds())/1e3, "p50-µs")
	b.ReportMetric(float64(lat[len(lat)*99/100].Nanoseconds())/1e3, "p99-µs")
}

// BenchmarkSSESegmentThroughput measures segments delivered per second by
// one streaming call that produces them as fast as it can:
//
//	go test -run '^$' -bench SSESegmentThroughput -benchtime 100000x ./mcp/server
func BenchmarkSSESegmentThroughput(b *testing.B) {
	// The stream's replay buffer holds every segment: a tool that emits
	// without pause runs ahead of its reader, and past the default 4,096
	// undelivered events the stream would drop them (as it must, to bound
	// memory) and the run would measure that bound, not the throughput.
	url := refserver.StartHTTP(b, &refserver.Options{HTTP: &streamhttp.Options{
		EventStoreEvents: b.N + 16, MaxStreamBytes: 1 << 30, MaxSessionReplayBytes: 1 << 30}}).URL
	c := connect(b, url, mcp.ClientCapabilities{})
	params := callParams(server.ToolSlowText, map[string]any{"chunks": b.N, "chunkSize": 64, "intervalMs": 0, "progress": false}, modes(mcp.ModeStreaming))
	b.ResetTimer()
	// A stream, or for a tiny b.N one JSON answer with every segment.
	a := c.post(mcp.MethodToolsCall, params)
	got := 0
	for _, m := range a.msgs {
		got += bytes.Count(m.Result, []byte(`"seqNr"`))
	}
	b.StopTimer()
	if got != b.N {
		b.Fatalf("got %d segments, want %d", got, b.N)
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "segments/s")
}
