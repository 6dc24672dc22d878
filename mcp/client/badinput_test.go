package client_test

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/tasksim/tasksim/mcp"
	"github.com/tasksim/tasksim/mcp/client"
	"github.com/tasksim/tasksim/mcp/stdio"
	"github.com/tasksim/tasksim/mcp/streamhttp"
)

// Bad servers: each gives a clear one-line error, and nothing hangs.

func shortContext(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	t.Cleanup(cancel)
	return ctx
}

func connectHTTP(t *testing.T, ctx context.Context, url string) (*client.Session, error) {
	sess, err := client.New(nil).Connect(ctx, &streamhttp.ClientTransport{URL: url})
	if err == nil {
		t.Cleanup(func() { sess.Close() })
	}
	return sess, err
}

func wantErr(t *testing.T, err error, parts ...string) {
	t.Helper()
	if err == nil {
		t.Fatalf("no error, want one with %q", parts)
	}
	for _, p := range parts {
		if !strings.Contains(err.Error(), p) {
			t.Errorf("error %q lacks %q", err, p)
		}
	}
	if strings.Contains(err.Error(), "\n") {
		t.Errorf("error %q spans lines", err)
	}
}

func TestUnreachableServer(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	url := "http://" + l.Addr().String() + "/mcp"
	l.Close()
	_, err = connectHTTP(t, testContext(t), url)
	wantErr(t, err, "initialize: POST "+url+": ", "connection refused")
}

func TestNotAnMCPServer(t *testing.T) {
	for _, tc := range []struct {
		name   string
		status int
		want   string
	}{
		{"html page", http.StatusOK, `unexpected Content-Type "text/html; charset=utf-8" (is this an MCP endpoint?)`},
		{"html not found", http.StatusNotFound, "404 Not Found"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "text/html; charset=utf-8")
				w.WriteHeader(tc.status)
				io.WriteString(w, "<!doctype html><title>Welcome</title>")
			}))
			defer srv.Close()
			_, err := connectHTTP(t, testContext(t), srv.URL)
			wantErr(t, err, "initialize: POST "+srv.URL, tc.want)
		})
	}
}

func TestHTTPErrorWithJSONRPCMessage(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		io.WriteString(w, `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Bad Request: unsupported protocol version"}}`)
	}))
	defer srv.Close()
	_, err := connectHTTP(t, testContext(t), srv.URL)
	wantErr(t, err, "initialize: POST "+srv.URL+": 400 Bad Request: Bad Request: unsupported protocol version")
}

func TestMalformedSSE(t *testing.T) {
	s := newScript(t)
	s.call = func(w *sseWriter, id mcp.ID, _ mcp.CallToolParams) {
		w.raw("id: 1\ndata: {this is not json\n\n")
	}
	sess := s.start(nil)
	res, err := sess.CallTool(testContext(t), client.CallOptions{Name: "x", Mode: client.ModeStreaming})
	wantErr(t, err, "tools/call x", "malformed SSE stream", "not a JSON-RPC message")
	if res == nil || res.Complete {
		t.Errorf("result %+v", res)
	}
	// The session survives.
	if err := sess.Ping(testContext(t)); err == nil || !strings.Contains(err.Error(), "Method not found") {
		t.Errorf("ping after a malformed stream: %v", err)
	}
}

func TestServerNeverAnswersInitialize(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body) // so that the server notices the client leave
		<-r.Context().Done()
	}))
	defer srv.Close()
	_, err := connectHTTP(t, shortContext(t), srv.URL)
	wantErr(t, err, "initialize: POST "+srv.URL, "context deadline exceeded")
}

func TestServerNeverAnswersCall(t *testing.T) {
	s := newScript(t)
	s.call = func(w *sseWriter, id mcp.ID, _ mcp.CallToolParams) { <-w.ctx.Done() }
	sess := s.start(nil)
	res, err := sess.CallTool(shortContext(t), client.CallOptions{Name: "x", Mode: client.ModeStreaming})
	wantErr(t, err, "tools/call x", "context deadline exceeded")
	if res.Complete {
		t.Error("complete")
	}
}

// Over in-memory pipes the whole exchange runs in a synctest bubble: the
// 100 ms deadline passes in virtual time once everything waits, so the
// request is always out before it.
func TestStdioServerNeverAnswers(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		fromServer, serverOut := io.Pipe()
		serverIn, toServer := io.Pipe()
		go io.Copy(io.Discard, serverIn) // reads, never answers
		defer serverOut.Close()
		_, err := client.New(nil).Connect(shortContext(t), &stdio.IOTransport{Reader: fromServer, Writer: toServer})
		wantErr(t, err, "initialize: no answer: context deadline exceeded")
	})
}

func TestStdioNonJSONLine(t *testing.T) {
	fromServer, serverOut := io.Pipe()
	serverIn, toServer := io.Pipe()
	go func() {
		bufio.NewReader(serverIn).ReadString('\n')
		io.WriteString(serverOut, "Starting server on port 8080...\n")
		io.Copy(io.Discard, serverIn)
	}()
	defer serverOut.Close()
	_, err := client.New(nil).Connect(testContext(t), &stdio.IOTransport{Reader: fromServer, Writer: toServer})
	wantErr(t, err, "initialize", "connection lost", `not a JSON-RPC message: "Starting server on port 8080..."`)
}

// A 404 to the session id: the session is gone, every call says so, and
// Reinitialize starts a new one (2025-11-25 Transports, "Session
// Management").
func TestSessionGoneAndReinitialize(t *testing.T) {
	var sessions atomic.Int64
	var kill atomic.Bool
	var current atomic.Value
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			w.WriteHeader(http.StatusMethodNotAllowed)
			return
		}
		body, _ := io.ReadAll(r.Body)
		msg, _ := mcp.DecodeMessage(body)
		if msg.Method == mcp.MethodInitialize {
			if r.Header.Get("Mcp-Session-Id") != "" {
				t.Errorf("initialize carried session id %q", r.Header.Get("Mcp-Session-Id"))
			}
			id := "s" + string(rune('0'+sessions.Add(1)))
			current.Store(id)
			kill.Store(false)
			w.Header().Set("Mcp-Session-Id", id)
			writeJSON(w, result(msg.ID, mcp.InitializeResult{ProtocolVersion: mcp.LatestProtocolVersion, ServerInfo: mcp.Implementation{Name: "x", Version: "1"}}))
			return
		}
		if kill.Load() || r.Header.Get("Mcp-Session-Id") != current.Load() {
			http.NotFound(w, r)
			return
		}
		if msg.Kind() != mcp.KindRequest {
			w.WriteHeader(http.StatusAccepted)
			return
		}
		writeJSON(w, result(msg.ID, struct{}{}))
	}))
	defer srv.Close()
	sess, err := connectHTTP(t, testContext(t), srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	if err := sess.Ping(testContext(t)); err != nil {
		t.Fatal(err)
	}
	kill.Store(true)
	err = sess.Ping(testContext(t))
	if !errors.Is(err, streamhttp.ErrSessionGone) {
		t.Fatalf("ping: %v, want ErrSessionGone", err)
	}
	wantErr(t, err, "ping: POST "+srv.URL, "404", "start a new session")
	if err := sess.Ping(testContext(t)); !errors.Is(err, streamhttp.ErrSessionGone) {
		t.Fatalf("second ping: %v", err)
	}
	if err := sess.Reinitialize(testContext(t)); err != nil {
		t.Fatal(err)
	}
	if err := sess.Ping(testContext(t)); err != nil {
		t.Fatalf("ping in the new session: %v", err)
	}
	if sessions.Load() != 2 {
		t.Errorf("%d sessions", sessions.Load())
	}
}
