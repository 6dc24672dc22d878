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

// A stream whose connections the server keeps closing is resumed with
// GET and Last-Event-ID each time, and loses nothing (CLIENT-RESUME).
func TestHTTPStreamingAcrossShortConnections(t *testing.T) {
	sess := connectHTTPServer(t, &streamhttp.Options{MaxStreamDuration: 20 * time.Millisecond, Retry: time.Millisecond},
		streamhttp.ClientTransport{NoStandaloneStream: true})
	args := map[string]any{"chunks": 20, "chunkSize": 16, "intervalMs": 5}
	res, err := sess.CallTool(testContext(t), client.CallOptions{Name: server.ToolSlowText, Args: args, Mode: client.ModeStreaming})
	if err != nil {
		t.Fatal(err)
	}
	wantContent(t, res.Content, chunks(20, 16))
	if res.Counts.Reconnects < 2 || res.Counts.GET != res.Counts.Reconnects || res.Counts.POST != 1 {
		t.Errorf("counts %+v: want one POST and several resuming GETs", res.Counts)
	}
	if res.Duplicates != 0 || res.Gaps != 0 || res.Resumes != 0 || res.StreamLost {
		t.Errorf("duplicates %d gaps %d resumes %d lost %v", res.Duplicates, res.Gaps, res.Resumes, res.StreamLost)
	}
	var ids []string
	for _, e := range res.Timeline {
		if e.Kind == client.EventHTTPRequest && e.Method == "GET" {
			if e.LastEventID == "" || e.HTTPStatus != 200 {
				t.Errorf("resume GET %+v", e)
			}
			for _, prev := range ids {
				if prev == e.LastEventID {
					t.Errorf("resumed twice after %q", prev)
				}
			}
			ids = append(ids, e.LastEventID)
		}
	}
	if int64(len(ids)) != res.Counts.Reconnects {
		t.Errorf("%d GETs on the timeline, %d counted", len(ids), res.Counts.Reconnects)
	}
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

// A stream that stays silent across many short connections is resumed
// each time, although no connection brings an event.
func TestHTTPSilentStreamAcrossShortConnections(t *testing.T) {
	sess := connectHTTPServer(t, &streamhttp.Options{MaxStreamDuration: 15 * time.Millisecond, Retry: time.Millisecond},
		streamhttp.ClientTransport{NoStandaloneStream: true})
	res, err := sess.CallTool(testContext(t), client.CallOptions{Name: server.ToolSleep, Args: map[string]any{"durationMs": 250, "text": "woke"},
		Mode: client.ModeStreaming, PollInterval: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	if res.Answer != client.AnswerStreaming || !res.Complete || res.StreamLost {
		t.Fatalf("answer %q complete %v lost %v", res.Answer, res.Complete, res.StreamLost)
	}
	if texts(res.Content) != "woke" {
		t.Errorf("content %q", texts(res.Content))
	}
	if res.Counts.Reconnects <= streamhttp.DefaultMaxReconnects {
		t.Errorf("%d reconnects: want more than %d for a 250 ms silence over 15 ms connections", res.Counts.Reconnects, streamhttp.DefaultMaxReconnects)
	}
}
