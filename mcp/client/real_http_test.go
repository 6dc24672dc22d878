package client_test

import (
	"log/slog"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/tasksim/tasksim/mcp/client"
	"github.com/tasksim/tasksim/mcp/server"
	"github.com/tasksim/tasksim/mcp/streamhttp"
)

func init() {
	dialers["http"] = func(t *testing.T, sopts *server.Options, copts *client.Options) *client.Session {
		return dialHTTP(t, sopts, copts, nil)
	}
	// The server closes every SSE connection after 30 ms and the client
	// resumes it with GET and Last-Event-ID, again and again (2025-11-25
	// Transports, "Sending Messages to the Server": the server MAY close
	// the connection without terminating the stream).
	dialers["http-short-connections"] = func(t *testing.T, sopts *server.Options, copts *client.Options) *client.Session {
		return dialHTTP(t, sopts, copts, &streamhttp.Options{MaxStreamDuration: 30 * time.Millisecond, Retry: time.Millisecond})
	}
}

// dialHTTP runs the reference server behind the Streamable HTTP handler.
func dialHTTP(t *testing.T, sopts *server.Options, copts *client.Options, hopts *streamhttp.Options) *client.Session {
	t.Helper()
	srv := server.New(sopts)
	if hopts == nil {
		hopts = &streamhttp.Options{}
	}
	hopts.Logger = slog.New(slog.DiscardHandler)
	h := streamhttp.NewHandler(srv, hopts)
	hs := httptest.NewServer(h)
	sess, err := client.New(copts).Connect(testContext(t), &streamhttp.ClientTransport{URL: hs.URL + "/mcp"})
	if err != nil {
		hs.Close()
		t.Fatalf("connect: %v", err)
	}
	t.Cleanup(func() {
		if err := sess.Close(); err != nil {
			t.Errorf("close: %v", err)
		}
		h.Close()
		hs.Close()
		srv.Close()
	})
	return sess
}

// connectHTTPServer connects to a reference server behind the handler with
// the given client transport settings.
func connectHTTPServer(t *testing.T, hopts *streamhttp.Options, ct streamhttp.ClientTransport) *client.Session {
	t.Helper()
	srv := server.New(nil)
	hopts.Logger = slog.New(slog.DiscardHandler)
	h := streamhttp.NewHandler(srv, hopts)
	hs := httptest.NewServer(h)
	ct.URL = hs.URL + "/mcp"
	sess, err := client.New(nil).Connect(testContext(t), &ct)
	if err != nil {
		hs.Close()
		t.Fatalf("connect: %v", err)
	}
	t.Cleanup(func() {
		sess.Close()
		h.Close()
		hs.Close()
		srv.Close()
	})
	return sess
}

// Counts: a plain call is one POST, its bytes counted both ways.
func TestHTTPCounts(t *testing.T) {
	sess := connectHTTPServer(t, &streamhttp.Options{}, streamhttp.ClientTransport{NoStandaloneStream: true})
	res, err := sess.CallTool(testContext(t), client.CallOptions{Name: server.ToolEcho, Args: map[string]string{"x": "y"}, Mode: client.ModePlain})
	if err != nil {
		t.Fatal(err)
	}
	c := res.Counts
	if c.HTTPRequests != 1 || c.POST != 1 || c.GET != 0 || c.BytesSent < 100 || c.BytesReceived < 50 {
		t.Errorf("counts %+v", c)
	}
	if count(res.Timeline, client.EventHTTPRequest, "POST") != 1 {
		t.Errorf("timeline %+v", res.Timeline)
	}
	// Task mode: POST tools/call, some POST tasks/get, one POST tasks/result.
	res, err = sess.CallTool(testContext(t), client.CallOptions{Name: server.ToolSleep, Args: map[string]any{"durationMs": 30}, Mode: client.ModePoll, PollInterval: 5 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	gets := int64(count(res.Timeline, client.EventRequestSent, "tasks/get"))
	if res.Counts.POST != 2+gets || gets < 1 {
		t.Errorf("counts %+v with %d polls", res.Counts, gets)
	}
}
