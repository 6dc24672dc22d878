package client_test

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/tasksim/tasksim/mcp/client"
	"github.com/tasksim/tasksim/mcp/server"
	"github.com/tasksim/tasksim/mcp/streamhttp"
)

// TestPlainCancelAfterOverHTTP: a plain call (no task) whose answer is a
// JSON body is cancelled after CancelAfter, while the POST still waits for
// the answer. The cancel timer used to start only once the POST returned,
// that is once the tool was done, so the call was never cancelled
// (found by tasksim sim, seed 225). In a synctest bubble, so the tool's
// hour is virtual.
func TestPlainCancelAfterOverHTTP(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv := server.New(nil)
		defer srv.Close()
		h := streamhttp.NewHandler(srv, nil)
		defer h.Close()
		tr := streamhttp.Pipe(h)
		tr.NoStandaloneStream = true
		ctx := context.Background()
		sess, err := client.New(nil).Connect(ctx, tr)
		if err != nil {
			t.Fatal(err)
		}
		defer sess.Close()
		start := time.Now()
		res, err := sess.CallTool(ctx, client.CallOptions{Name: server.ToolSleep, Mode: client.ModePlain,
			Args: map[string]any{"durationMs": 3_600_000}, CancelAfter: 50 * time.Millisecond})
		if !errors.Is(err, client.ErrCancelled) {
			t.Fatalf("plain call with CancelAfter ended with %v (result %+v), want cancelled by the client", err, res)
		}
		if took := time.Since(start); took != 50*time.Millisecond {
			t.Errorf("the cancel came %v after the call (bubble time), want 50ms", took)
		}
	})
}
