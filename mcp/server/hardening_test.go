package server_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"regexp"
	"testing"

	"github.com/tasksim/tasksim/mcp"
	"github.com/tasksim/tasksim/mcp/server"
)

// A ttl from the wire is compared with the cap in milliseconds before it
// becomes a time.Duration (Hardening item 5): 1e13 ms overflowed into a
// negative ttl, and the task expired at once and lost its result.
func TestHugeTTLIsCapped(t *testing.T) {
	url, _ := serve(t, nil)
	c := connect(t, url, mcp.ClientCapabilities{})
	maxMs := server.DefaultMaxTTL.Milliseconds()
	for _, ttl := range []int64{10_000_000_000_000, 9_223_372_036_854, 1 << 62, maxMs + 1} {
		created := result[mcp.CreateTaskResult](c, mcp.MethodToolsCall,
			callParams(server.ToolSleep, map[string]any{"durationMs": 1}, &mcp.TaskParams{TTL: ptr(ttl)}))
		if got := created.Task.TTL; got == nil || *got != maxMs {
			t.Errorf("ttl %d: granted %v, want the cap %d (docs/server.md)", ttl, got, maxMs)
		}
		res := result[mcp.CallToolResult](c, mcp.MethodTasksResult, map[string]any{"taskId": created.Task.TaskID})
		if res.IsError {
			t.Errorf("ttl %d: the task's result is an error: %+v", ttl, res.Content)
		}
		if got := result[mcp.Task](c, mcp.MethodTasksGet, map[string]any{"taskId": created.Task.TaskID}); got.Status != mcp.StatusCompleted {
			t.Errorf("ttl %d: status %s after the result, want completed", ttl, got.Status)
		}
	}
}

// A duration argument is checked against the 24 h limit in milliseconds
// before conversion (Hardening item 5): durationMs 1e18 overflowed and
// passed the check.
func TestHugeDurationArgumentRefused(t *testing.T) {
	url, _ := serve(t, nil)
	c := connect(t, url, mcp.ClientCapabilities{})
	cases := []struct {
		name string
		tool string
		args map[string]any
	}{
		{"sleep 1e18", server.ToolSleep, map[string]any{"durationMs": 1e18}},
		{"sleep 1e300", server.ToolSleep, map[string]any{"durationMs": 1e300}},
		{"sleep 24h + 1ms", server.ToolSleep, map[string]any{"durationMs": 86_400_001}},
		{"slow_text durationMs 1e18", server.ToolSlowText, map[string]any{"durationMs": 1e18}},
		{"slow_text intervalMs 9.3e15", server.ToolSlowText, map[string]any{"intervalMs": 9.3e15}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			for _, task := range []*mcp.TaskParams{nil, {}} {
				e := rpcError(c, mcp.MethodToolsCall, callParams(tc.tool, tc.args, task))
				if e.Code != mcp.CodeInvalidParams {
					t.Errorf("task %v: error %d %q, want %d", task != nil, e.Code, e.Message, mcp.CodeInvalidParams)
				}
			}
		})
	}
}

// Invalid UTF-8 is a parse error (-32700), not rewritten to U+FFFD
// (Hardening item 6; 2025-11-25 Base Protocol, Transports: messages MUST
// be UTF-8 encoded).
func TestInvalidUTF8IsParseError(t *testing.T) {
	url, _ := serve(t, nil)
	c := connect(t, url, mcp.ClientCapabilities{})
	bodies := map[string]string{
		"id":     "{\"jsonrpc\":\"2.0\",\"id\":\"\xc3(\",\"method\":\"ping\"}",
		"method": "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"pi\xffng\"}",
		"params": "{\"jsonrpc\":\"2.0\",\"id\":8,\"method\":\"tools/call\",\"params\":{\"name\":\"echo\",\"arguments\":{\"x\":\"\xed\xa0\x80\"}}}",
	}
	for name, body := range bodies {
		t.Run(name, func(t *testing.T) {
			resp, err := http.DefaultClient.Do(c.httpReq(http.MethodPost, []byte(body)))
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			raw, _ := io.ReadAll(resp.Body)
			if bytes.Contains(raw, []byte("\ufffd")) || bytes.Contains(raw, []byte(`\ufffd`)) {
				t.Errorf("the answer carries U+FFFD: %s", raw)
			}
			var m struct {
				ID    json.RawMessage `json:"id"`
				Error *mcp.Error      `json:"error"`
			}
			if err := json.Unmarshal(raw, &m); err != nil || m.Error == nil || m.Error.Code != mcp.CodeParseError {
				t.Fatalf("status %d, body %s: want a -32700 error", resp.StatusCode, raw)
			}
			if string(m.ID) != "null" && len(m.ID) != 0 {
				t.Errorf("id %s, want null (the id could not be read)", m.ID)
			}
		})
	}
}

// The server declares the logging capability, so logging/setLevel works
// (Hardening item 7).
func TestLoggingSetLevel(t *testing.T) {
	url, srv := serve(t, nil)
	if srv.Capabilities().Logging == nil {
		t.Fatal("logging capability no longer declared: then drop this test")
	}
	c := connect(t, url, mcp.ClientCapabilities{})
	for _, l := range mcp.LoggingLevels() {
		a := c.post(mcp.MethodLoggingSetLevel, mcp.SetLevelParams{Level: l})
		if m := a.last(); m.Error != nil || string(bytes.TrimSpace(m.Result)) != "{}" {
			t.Errorf("level %s: result %s, error %v; want {}", l, m.Result, m.Error)
		}
	}
	for _, params := range []any{map[string]any{"level": "loud"}, map[string]any{}, map[string]any{"level": 3}} {
		if e := rpcError(c, mcp.MethodLoggingSetLevel, params); e.Code != mcp.CodeInvalidParams {
			t.Errorf("params %v: error %d %q, want %d", params, e.Code, e.Message, mcp.CodeInvalidParams)
		}
	}
}

// Session ids are unguessable: 26 base32 characters from crypto/rand
// (130 bits), fresh for every session (2025-11-25 Transports, "Session
// Management": a session ID SHOULD be globally unique and
// cryptographically secure). docs/security.md cites this test.
func TestSessionIDEntropy(t *testing.T) {
	url, _ := serve(t, nil)
	seen := map[string]bool{}
	for range 100 {
		id := connect(t, url, mcp.ClientCapabilities{}).sid
		if !sessionID.MatchString(id) || seen[id] {
			t.Fatalf("session id %q: not a fresh 26-character base32 id", id)
		}
		seen[id] = true
	}
}

var sessionID = regexp.MustCompile(`^[A-Z2-7]{26}$`)
