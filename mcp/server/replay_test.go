package server_test

import (
	"context"
	"net/http"
	"testing"
	"testing/synctest"
	"time"

	"github.com/tasksim/tasksim/clock"
	"github.com/tasksim/tasksim/internal/refserver"
	"github.com/tasksim/tasksim/mcp"
	"github.com/tasksim/tasksim/mcp/server"
	"github.com/tasksim/tasksim/mcp/streamhttp"
)

// A client that never reads its SSE answer makes the server hold no more
// than a stream's byte budget of it (Hardening item 2): the replay buffer
// was bounded in events only, 4,096 of up to 1 MiB each, and a
// never-reading client pushed the heap to 1.85 GB.
func TestNeverReadingClientBoundedReplay(t *testing.T) {
	s := refserver.StartHTTP(t, &refserver.Options{})
	c := connect(t, s.URL, mcp.ClientCapabilities{})
	const chunkSize = 64 << 10
	body, _ := c.request(mcp.MethodToolsCall, callParams(server.ToolSlowText,
		map[string]any{"chunks": 200, "chunkSize": chunkSize, "intervalMs": 1}, modes(mcp.ModeStreaming))).MarshalJSON()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	resp, err := http.DefaultClient.Do(c.httpReq(http.MethodPost, body).WithContext(ctx))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close() // never read
	list := result[mcp.ListTasksResult](c, mcp.MethodTasksList, nil)
	if len(list.Tasks) != 1 {
		t.Fatalf("%d tasks", len(list.Tasks))
	}
	res := result[mcp.CallToolResult](c, mcp.MethodTasksResult, map[string]any{"taskId": list.Tasks[0].TaskID})
	if len(res.Content) != 200 {
		t.Fatalf("tasks/result has %d blocks, want 200: the whole result stays available", len(res.Content))
	}
	limit := int64(streamhttp.DefaultMaxStreamBytes + chunkSize + 1024) // the bound holds to one event
	if got := s.Transport().Stats().ReplayBytes; got > limit {
		t.Errorf("the never-read stream holds %d bytes of replay buffer, over %d (13 MB were produced)", got, limit)
	}
}

// Once a finished stream can no longer be resumed (StreamRetention after
// its final response) and no connection carries it, its events are
// released, though the session lives on (Hardening item 2: 1.43 GB stayed
// live after the task's ttl and its connections were gone). Resuming it
// then gets 409.
func TestFinishedStreamReleased(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		clk := clock.NewSim(time.Unix(1_700_000_000, 0))
		srv := server.New(&server.Options{Clock: clk})
		h := streamhttp.NewHandler(srv, &streamhttp.Options{Clock: clk, StreamRetention: time.Minute})
		defer func() { h.Close(); srv.Close() }()
		p := streamhttp.Pipe(h)
		c := connectVia(t, p.HTTPClient, p.URL, mcp.ClientCapabilities{})
		advanceWhenIdle(clk, server.DefaultImmediateWindow)
		s := c.open(mcp.MethodToolsCall, callParams(server.ToolSlowText,
			map[string]any{"chunks": 4, "chunkSize": 100_000, "intervalMs": 1000}, modes(mcp.ModeStreaming)))
		s.next() // the initial response; the rest is never read
		for range 4 {
			advance(clk, time.Second)
		}
		synctest.Wait()
		if got := h.Stats().ReplayBytes; got < 300_000 {
			t.Fatalf("replay buffer %d bytes before the stream was released, want the chunks", got)
		}
		s.cut()
		synctest.Wait()
		if got := h.Stats().ReplayBytes; got == 0 {
			t.Fatal("released before StreamRetention: the client could still resume")
		}
		for range 6 { // the sweep looks every StreamRetention/4
			advance(clk, 15*time.Second)
		}
		synctest.Wait()
		// What is left is the standalone stream's status notification.
		if got := h.Stats().ReplayBytes; got > 1000 {
			t.Errorf("%d bytes of replay buffer held after the stream can no longer be resumed", got)
		}
		req := c.httpReq(http.MethodGet, nil)
		req.Header.Set("Last-Event-ID", s.lastID)
		if a := c.do(req); a.status != http.StatusConflict {
			t.Errorf("resuming a released stream: %d, want 409", a.status)
		}
	})
}
