package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// hungServer is a Streamable HTTP server that answers initialize,
// notifications and tools/list, then never answers the requests whose
// method hang names (it accepts them and holds them). From then on its
// session is stuck: every later request of it (the cancel notice, the
// DELETE) is held too. It ignores the client going away; only the test's
// end releases what it holds.
type hungServer struct {
	hang    func(method string) bool
	answer  string // "silent", "headers" (SSE headers, no event), "trickle" (SSE comments, no event)
	release chan struct{}

	mu    sync.Mutex
	n     int
	stuck map[string]bool
}

func (h *hungServer) hold(w http.ResponseWriter, session string) {
	h.mu.Lock()
	h.stuck[session] = true
	h.mu.Unlock()
	if h.answer != "silent" {
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		w.(http.Flusher).Flush()
	}
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for range 100000 {
		select {
		case <-h.release:
			return
		case <-tick.C:
			if h.answer == "trickle" {
				io.WriteString(w, ": still here\n\n")
				w.(http.Flusher).Flush()
			}
		}
	}
}

func (h *hungServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	session := r.Header.Get("Mcp-Session-Id")
	h.mu.Lock()
	stuck := h.stuck[session]
	h.mu.Unlock()
	if stuck {
		h.hold(w, session)
		return
	}
	if r.Method != http.MethodPost {
		w.WriteHeader(http.StatusMethodNotAllowed)
		return
	}
	var m struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
	}
	b, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	if json.Unmarshal(b, &m) != nil {
		w.WriteHeader(http.StatusBadRequest)
		return
	}
	if m.ID == nil {
		w.WriteHeader(http.StatusAccepted)
		return
	}
	var result any
	switch {
	case m.Method == "initialize":
		h.mu.Lock()
		h.n++
		w.Header().Set("Mcp-Session-Id", fmt.Sprintf("hung-%d", h.n))
		h.mu.Unlock()
		result = map[string]any{
			"protocolVersion": "2025-11-25",
			"capabilities": map[string]any{"tools": map[string]any{}, "tasks": map[string]any{
				"list": map[string]any{}, "cancel": map[string]any{},
				"requests": map[string]any{"tools": map[string]any{"call": map[string]any{}}},
			}},
			"serverInfo": map[string]any{"name": "hung", "version": "1"},
		}
	case m.Method == "tools/list":
		result = map[string]any{"tools": []any{map[string]any{
			"name": "work", "inputSchema": map[string]any{"type": "object"},
			"execution": map[string]any{"taskSupport": "optional"},
		}}}
	case h.hang(m.Method):
		h.hold(w, session)
		return
	case m.Method == "tools/call":
		now := time.Now().UTC().Format(time.RFC3339)
		result = map[string]any{"task": map[string]any{"taskId": "t-" + session, "status": "working", "createdAt": now, "lastUpdatedAt": now, "ttl": 60000, "pollInterval": 50}}
	default:
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"error":{"code":-32601,"message":"Method not found"}}`, m.ID)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(map[string]any{"jsonrpc": "2.0", "id": m.ID, "result": result})
}

// TestCheckHungTarget: a target that accepts the connection and never
// answers one scenario's request (nothing, SSE headers and no event, or
// an endless trickle of SSE comments), its session stuck from then on
// (no answer to the cancel notice, nor to the DELETE), ends the scenario
// as FAIL saying what it waited for, and check exits 1. The time it takes
// is not asserted (docs/cli.md, check: every scenario is bounded by
// --timeout; the note measures it with a command).
func TestCheckHungTarget(t *testing.T) {
	cases := []struct {
		name, answer, scenario, waited string
		hang                           func(string) bool
	}{
		{"tools/call silent", "silent", "task-isolation", "tools/call", func(m string) bool { return m == "tools/call" }},
		{"tools/call headers only", "headers", "task-lifecycle", "tools/call", func(m string) bool { return m == "tools/call" }},
		{"tools/call trickle", "trickle", "task-isolation", "tools/call", func(m string) bool { return m == "tools/call" }},
		{"tasks silent", "silent", "task-isolation", "tasks/", func(m string) bool { return strings.HasPrefix(m, "tasks/") }},
		{"tasks trickle", "trickle", "task-lifecycle", "tasks/", func(m string) bool { return strings.HasPrefix(m, "tasks/") }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := &hungServer{hang: tc.hang, answer: tc.answer, release: make(chan struct{}), stuck: map[string]bool{}}
			hs := httptest.NewServer(h)
			defer hs.Close()
			defer close(h.release) // before hs.Close, which waits for the handlers
			js := filepath.Join(t.TempDir(), "r.json")
			code, stdout, stderr := run(t, "", "check", "--server", hs.URL+"/mcp", "--scenario", tc.scenario, "--timeout", "1s", "--json", js)
			if code != ExitFindings {
				t.Fatalf("exit %d, want %d\n%s\n%s", code, ExitFindings, stdout, stderr)
			}
			b, err := os.ReadFile(js)
			if err != nil {
				t.Fatal(err)
			}
			var doc struct {
				Scenarios []struct{ Name, Status, Why string }
			}
			if err := json.Unmarshal(b, &doc); err != nil || len(doc.Scenarios) != 1 {
				t.Fatalf("json: %v\n%s", err, b)
			}
			sc := doc.Scenarios[0]
			if sc.Name != tc.scenario || sc.Status != "FAIL" || !strings.Contains(sc.Why, "timed out after 1s") || !strings.Contains(sc.Why, tc.waited) {
				t.Errorf("%s: %s %q; want fail, timed out after 1s waiting for %s", sc.Name, sc.Status, sc.Why, tc.waited)
			}
		})
	}
}
