package client_test

import (
	"log/slog"
	"testing"
	"testing/synctest"
	"time"

	"github.com/tasksim/tasksim/mcp"
	"github.com/tasksim/tasksim/mcp/client"
	"github.com/tasksim/tasksim/mcp/server"
	"github.com/tasksim/tasksim/mcp/stdio"
	"github.com/tasksim/tasksim/mcp/streamhttp"
)

// bubbleDialers are the transports of dialers in memory, for tests run
// inside a testing/synctest bubble (forEachBubbleTransport). There the
// server's timers (a tool's work, the immediate window, a stream's
// connection length), the client's (cancel, polls) and the transports'
// (retry) all run on the bubble's clock, which moves only when every
// goroutine waits: what a test sees depends on the durations it names,
// never on how fast the machine runs it. A test whose verdict weighs one
// duration against another belongs here.
var bubbleDialers = map[string]dialer{
	"stdio": func(t *testing.T, sopts *server.Options, copts *client.Options) *client.Session {
		t.Helper()
		srv := server.New(sopts)
		return connectBubble(t, stdio.Pipe(srv, nil), copts, srv.Close)
	},
	"http": func(t *testing.T, sopts *server.Options, copts *client.Options) *client.Session {
		t.Helper()
		return dialBubbleHTTP(t, sopts, copts, &streamhttp.Options{})
	},
	// As dialers' http-short-connections: the server ends every SSE
	// connection after 30 ms, the client resumes it.
	"http-short-connections": func(t *testing.T, sopts *server.Options, copts *client.Options) *client.Session {
		t.Helper()
		return dialBubbleHTTP(t, sopts, copts, &streamhttp.Options{MaxStreamDuration: 30 * time.Millisecond, Retry: time.Millisecond})
	},
}

func dialBubbleHTTP(t *testing.T, sopts *server.Options, copts *client.Options, hopts *streamhttp.Options) *client.Session {
	t.Helper()
	srv := server.New(sopts)
	hopts.Logger = slog.New(slog.DiscardHandler)
	h := streamhttp.NewHandler(srv, hopts)
	return connectBubble(t, streamhttp.Pipe(h), copts, func() {
		h.Close()
		srv.Close()
	})
}

// connectBubble connects a client over tr; when the test ends, the
// session closes, then stop runs.
func connectBubble(t *testing.T, tr mcp.Transport, copts *client.Options, stop func()) *client.Session {
	t.Helper()
	sess, err := client.New(copts).Connect(testContext(t), tr)
	if err != nil {
		stop()
		t.Fatalf("connect: %v", err)
	}
	t.Cleanup(func() {
		if err := sess.Close(); err != nil {
			t.Errorf("close: %v", err)
		}
		stop()
	})
	return sess
}

// forEachBubbleTransport runs f once per in-memory transport, each inside
// a synctest bubble of its own.
func forEachBubbleTransport(t *testing.T, f func(t *testing.T, dial dialer)) {
	for name, d := range bubbleDialers {
		t.Run(name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) { f(t, d) })
		})
	}
}
