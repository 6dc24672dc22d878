package streamhttp

import (
	"bufio"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/tasksim/tasksim/mcp/server"
)

// An idle session ends after SessionIdleTimeout; one with an open GET
// stream does not.
func TestSessionIdleTimeout(t *testing.T) {
	h := NewHandler(server.New(nil), &Options{SessionIdleTimeout: 100 * time.Millisecond})
	ts := httptest.NewServer(h)
	defer func() { ts.CloseClientConnections(); h.Close(); ts.Close() }()
	url := ts.URL + "/mcp"

	initialize := func() string {
		t.Helper()
		resp := idlePost(t, url, "", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
		resp.Body.Close()
		return resp.Header.Get("Mcp-Session-Id")
	}
	ping := func(sid string) int {
		resp := idlePost(t, url, sid, `{"jsonrpc":"2.0","id":2,"method":"ping"}`)
		resp.Body.Close()
		return resp.StatusCode
	}

	idle, listening := initialize(), initialize()
	req, _ := http.NewRequest(http.MethodGet, url, nil)
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Mcp-Session-Id", listening)
	get, err := http.DefaultClient.Do(req)
	if err != nil || get.StatusCode != http.StatusOK {
		t.Fatalf("GET: %v %v", err, get)
	}
	defer get.Body.Close()
	_, _ = bufio.NewReader(get.Body).ReadString('\n') // the priming event: attached

	// Watch the session table: a request would itself count as use.
	registered := func(sid string) bool {
		h.mu.RLock()
		defer h.mu.RUnlock()
		return h.sessions[sid] != nil
	}
	deadline := time.Now().Add(10 * time.Second)
	for registered(idle) {
		if time.Now().After(deadline) {
			t.Fatal("an idle session was never ended")
		}
		time.Sleep(20 * time.Millisecond)
	}
	if st := ping(idle); st != http.StatusNotFound {
		t.Errorf("an ended idle session answered %d, want 404", st)
	}
	if st := ping(listening); st != http.StatusOK {
		t.Errorf("a session with an open GET stream answered %d after the idle timeout, want 200", st)
	}
}

func idlePost(t *testing.T, url, sid, body string) *http.Response {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Content-Type", "application/json")
	if sid != "" {
		req.Header.Set("Mcp-Session-Id", sid)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}
