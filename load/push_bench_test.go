package load_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/tasksim/tasksim/internal/h1"
	"github.com/tasksim/tasksim/internal/refserver"
	"github.com/tasksim/tasksim/mcp"
	"github.com/tasksim/tasksim/mcp/client"
	"github.com/tasksim/tasksim/mcp/server"
	"github.com/tasksim/tasksim/mcp/sse"
	"github.com/tasksim/tasksim/mcp/streamhttp"
)

// BenchmarkPushLatency measures, in one run on one machine, the delivery
// latency of one SEP-2679 partial notification (the tool's Emit on the
// reference server to the reference client's OnPartial, over Streamable
// HTTP) against the raw floor: a minimal SSE server and client doing the
// same hop with nothing on top. Each side sends the next message only when
// the previous one arrived, so queueing does not count. The three paths
// take turns in ten rounds of a tenth of the messages each. The partials go
// once through net/http's Transport and once through the generator's
// (internal/h1, the h1- figures):
//
//	go test -run '^$' -bench PushLatency -benchtime 5000x ./load
func BenchmarkPushLatency(b *testing.B) {
	// In rounds, each path in turn, so that the machine's drift (a busy
	// neighbour, a frequency change) falls on all three alike: one after
	// the other, the floor's p50 moved by a fifth between runs, and the
	// ratio with it.
	const rounds = 10
	var raw, partial, partialH1 []time.Duration
	rt := &h1.Transport{}
	defer rt.CloseIdleConnections()
	for r := range rounds {
		n := b.N / rounds
		if r < b.N%rounds {
			n++
		}
		if n == 0 {
			continue
		}
		raw = append(raw, rawSSELatency(b, n)...)
		partial = append(partial, partialLatency(b, n, nil)...)
		partialH1 = append(partialH1, partialLatency(b, n, &http.Client{Transport: rt})...)
	}
	b.ReportMetric(us(pct(raw, 0.50)), "raw-p50-µs")
	b.ReportMetric(us(pct(raw, 0.99)), "raw-p99-µs")
	b.ReportMetric(us(pct(partial, 0.50)), "partial-p50-µs")
	b.ReportMetric(us(pct(partial, 0.99)), "partial-p99-µs")
	b.ReportMetric(float64(pct(partial, 0.50))/float64(pct(raw, 0.50)), "p50-ratio")
	b.ReportMetric(us(pct(partialH1, 0.50)), "h1-partial-p50-µs")
	b.ReportMetric(us(pct(partialH1, 0.99)), "h1-partial-p99-µs")
	b.ReportMetric(float64(pct(partialH1, 0.50))/float64(pct(raw, 0.50)), "h1-p50-ratio")
}

// rawSSELatency: a handler writes one event with its send time and waits
// for the reader to have it.
func rawSSELatency(b *testing.B, n int) []time.Duration {
	ack := make(chan struct{})
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		rc := http.NewResponseController(w)
		sw := sse.NewWriter(w)
		for i := 0; i < n; i++ {
			if sw.WriteEvent(sse.Event{Data: strconv.FormatInt(time.Now().UnixNano(), 10)}) != nil || rc.Flush() != nil {
				return
			}
			select {
			case <-ack:
			case <-r.Context().Done():
				return
			}
		}
	}))
	defer ts.Close()
	resp, err := http.Get(ts.URL)
	if err != nil {
		b.Fatal(err)
	}
	defer resp.Body.Close()
	rd := sse.NewReader(resp.Body)
	lat := make([]time.Duration, 0, n)
	for len(lat) < n {
		ev, err := rd.Next()
		if err != nil {
			b.Fatal(err)
		}
		sent, _ := strconv.ParseInt(ev.Data, 10, 64)
		lat = append(lat, time.Duration(time.Now().UnixNano()-sent))
		ack <- struct{}{}
	}
	return lat
}

// partialLatency: a tool emits one chunk with its send time and waits for
// the client's OnPartial to have it; hc nil means http.DefaultClient.
func partialLatency(b *testing.B, n int, hc *http.Client) []time.Duration {
	ack := make(chan struct{})
	pinger := &server.Tool{
		Tool: mcp.Tool{Name: "pinger", Description: "emits its send times", InputSchema: json.RawMessage(`{"type":"object"}`),
			Execution: &mcp.ToolExecution{TaskSupport: mcp.TaskSupportOptional, StreamPartial: true}},
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
	url, _ := refserver.Start(b, &server.Options{Tools: []*server.Tool{pinger}})
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	sess, err := client.New(nil).Connect(ctx, &streamhttp.ClientTransport{URL: url, HTTPClient: hc})
	if err != nil {
		b.Fatal(err)
	}
	defer sess.Close()
	lat := make([]time.Duration, 0, n)
	res, err := sess.CallTool(ctx, client.CallOptions{Name: "pinger", Mode: client.ModePartial, OnPartial: func(p mcp.TaskPartialParams) {
		now := time.Now().UnixNano()
		for _, c := range p.Content {
			sent, _ := strconv.ParseInt(c.Text, 10, 64)
			lat = append(lat, time.Duration(now-sent))
			go func() { ack <- struct{}{} }() // OnPartial must not block
		}
	}})
	if err != nil {
		b.Fatal(err)
	}
	if !res.Complete || len(lat) != n {
		b.Fatal(fmt.Sprintf("complete=%v, %d partials timed, want %d", res.Complete, len(lat), n))
	}
	return lat
}

func pct(d []time.Duration, q float64) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	return s[min(len(s)-1, int(q*float64(len(s))))]
}

func us(d time.Duration) float64 { return float64(d.Nanoseconds()) / 1e3 }
