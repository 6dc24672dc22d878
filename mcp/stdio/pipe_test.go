package stdio_test

import (
	"errors"
	"strings"
	"testing"
	"testing/synctest"

	"github.com/tasksim/tasksim/mcp"
	"github.com/tasksim/tasksim/mcp/client"
	"github.com/tasksim/tasksim/mcp/server"
	"github.com/tasksim/tasksim/mcp/stdio"
)

// The reference client calls the reference server over stdio.Pipe, in a
// synctest bubble: the tool's pauses pass in virtual time, and Close
// leaves no goroutine behind (the bubble would not end otherwise).
func TestPipe(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv := server.New(nil)
		defer srv.Close()
		tr := stdio.Pipe(srv, nil)
		sess, err := client.New(nil).Connect(t.Context(), tr)
		if err != nil {
			t.Fatal(err)
		}
		args := map[string]any{"chunks": 3, "chunkSize": 16, "intervalMs": 100}
		for _, mode := range []client.Mode{client.ModeStreaming, client.ModeTask, client.ModePartial} {
			res, err := sess.CallTool(t.Context(), client.CallOptions{Name: server.ToolSlowText, Args: args, Mode: mode})
			if err != nil {
				t.Fatalf("%s: %v", mode, err)
			}
			var got []string
			for _, b := range res.Content {
				got = append(got, b.Text)
			}
			want := []string{server.ChunkText(1, 16), server.ChunkText(2, 16), server.ChunkText(3, 16)}
			if !res.Complete || strings.Join(got, "|") != strings.Join(want, "|") {
				t.Fatalf("%s: complete %v content %q", mode, res.Complete, got)
			}
		}

		// Each Connect is a session of its own.
		other, err := client.New(nil).Connect(t.Context(), tr)
		if err != nil {
			t.Fatal(err)
		}
		if err := other.Ping(t.Context()); err != nil {
			t.Fatal(err)
		}
		if err := other.Close(); err != nil {
			t.Fatal(err)
		}
		if err := sess.Ping(t.Context()); err != nil {
			t.Fatalf("the first session after the second closed: %v", err)
		}

		stats, ok := mcp.ConnAs[mcp.StatsReporter](sess.Conn())
		if !ok || stats.Stats().MessagesSent < 5 || stats.Stats().MessagesReceived < 5 {
			t.Fatalf("stats %v %+v", ok, stats)
		}
		if err := sess.Close(); err != nil {
			t.Fatal(err)
		}
		if _, err := sess.Conn().Read(t.Context()); !errors.Is(err, mcp.ErrClosed) {
			t.Fatalf("Read after Close: %v", err)
		}
	})
}

// Close while a call is running ends the server's session at once.
func TestPipeCloseDuringCall(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv := server.New(nil)
		defer srv.Close()
		conn, err := stdio.Pipe(srv, nil).Connect(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		init, _ := mcp.NewRequest(mcp.IntID(1), mcp.MethodInitialize, mcp.InitializeParams{ProtocolVersion: mcp.LatestProtocolVersion})
		if err := conn.Write(t.Context(), init); err != nil {
			t.Fatal(err)
		}
		if m, err := conn.Read(t.Context()); err != nil || m.ID != mcp.IntID(1) || m.Result == nil {
			t.Fatalf("initialize: %+v, %v", m, err)
		}
		call, _ := mcp.NewRequest(mcp.IntID(2), mcp.MethodToolsCall, mcp.CallToolParams{Name: server.ToolSleep, Arguments: []byte(`{"durationMs":3600000}`)})
		if err := conn.Write(t.Context(), call); err != nil {
			t.Fatal(err)
		}
		synctest.Wait() // the call is running: the server waits on its hour
		if err := conn.Close(); err != nil {
			t.Fatal(err)
		}
	})
}
