package interop

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"mime"
	"net/http"
	"path/filepath"
	"testing"
	"time"

	"github.com/tasksim/tasksim/mcp/sse"
)

// TestMCPGoTaskStatusReachesOtherSession: with a plain client of two
// sessions on the mcp-go task server (no tasksim in the path), session A's
// notifications/tasks/status reaches session B's standalone GET stream.
// mcp-go v1.2.1's sendTaskStatusNotification calls
// SendNotificationToAllClients, which queues the notification on every
// initialized session. That breaks Task Isolation (2025-11-25, Tasks ›
// Security Considerations › Task Isolation and Access Control: a task is
// bound to its session's authorization context) and is the
// cross-session finding of docs/interop.md. When mcp-go fixes it, this
// test fails: update the finding and TestCheckMCPGo.
func TestMCPGoTaskStatusReachesOtherSession(t *testing.T) {
	exe := filepath.Join(goPeers(t), "mcpgo")
	url := startPeer(t, mcpgoURL, nil, exe, "--http")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	a := openRawSession(ctx, t, url)
	b := openRawSession(ctx, t, url)

	// B listens on its standalone GET stream; every message it carries
	// goes to seen.
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Mcp-Session-Id", b)
	req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("session B's GET stream answered %s", resp.Status)
	}
	seen := make(chan rawMessage, 64)
	go func() {
		defer close(seen)
		for ev, err := range sse.NewReader(resp.Body).Events() {
			if err != nil {
				return
			}
			var m rawMessage
			if json.Unmarshal([]byte(ev.Data), &m) == nil {
				select {
				case seen <- m:
				case <-ctx.Done():
					return
				}
			}
		}
	}()

	// A creates a task.
	msgs := rawPost(ctx, t, url, a, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"mcpgo_optional","arguments":{"delayMs":50},"task":{"ttl":60000}}}`)
	var taskID string
	for _, m := range msgs {
		var r struct {
			Task struct {
				TaskID string `json:"taskId"`
			} `json:"task"`
		}
		if string(m.ID) == "2" && json.Unmarshal(m.Result, &r) == nil {
			taskID = r.Task.TaskID
		}
	}
	if taskID == "" {
		t.Fatalf("session A's task-augmented call gave no task: %s", msgs)
	}

	// B's stream carries A's task status, or the test ends on its
	// context's deadline.
	for {
		select {
		case m, ok := <-seen:
			if !ok {
				t.Fatalf("session B's GET stream ended without session A's task %s", taskID)
			}
			var p struct {
				TaskID string `json:"taskId"`
				Status string `json:"status"`
			}
			if m.Method == "notifications/tasks/status" && json.Unmarshal(m.Params, &p) == nil && p.TaskID == taskID {
				t.Logf("session B (%s) received session A's (%s) notifications/tasks/status for task %s, status %s", b, a, taskID, p.Status)
				return
			}
		case <-ctx.Done():
			t.Fatalf("session B's GET stream did not carry session A's task %s: %v", taskID, ctx.Err())
		}
	}
}

// rawMessage is a JSON-RPC message as a plain client reads it.
type rawMessage struct {
	ID     json.RawMessage `json:"id,omitempty"`
	Method string          `json:"method,omitempty"`
	Params json.RawMessage `json:"params,omitempty"`
	Result json.RawMessage `json:"result,omitempty"`
}

func (m rawMessage) String() string {
	b, _ := json.Marshal(m)
	return string(b)
}

// openRawSession initializes a session over plain HTTP and returns its id.
func openRawSession(ctx context.Context, t *testing.T, url string) string {
	t.Helper()
	body := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"interop-raw","version":"1"}}}`
	req := rawRequest(ctx, t, url, "", body)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	msgs := readMessages(t, resp)
	sid := resp.Header.Get("Mcp-Session-Id")
	if sid == "" || len(msgs) == 0 || msgs[len(msgs)-1].Result == nil {
		t.Fatalf("initialize: session id %q, messages %s", sid, msgs)
	}
	rawPost(ctx, t, url, sid, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	return sid
}

// rawPost posts one message in session sid and returns the messages of
// the answer (none for a 202).
func rawPost(ctx context.Context, t *testing.T, url, sid, body string) []rawMessage {
	t.Helper()
	resp, err := http.DefaultClient.Do(rawRequest(ctx, t, url, sid, body))
	if err != nil {
		t.Fatal(err)
	}
	return readMessages(t, resp)
}

func rawRequest(ctx context.Context, t *testing.T, url, sid, body string) *http.Request {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewBufferString(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
	if sid != "" {
		req.Header.Set("Mcp-Session-Id", sid)
	}
	return req
}

// readMessages reads a POST's answer, a JSON body or an SSE stream up to
// its response, and closes it.
func readMessages(t *testing.T, resp *http.Response) []rawMessage {
	t.Helper()
	defer resp.Body.Close()
	if resp.StatusCode == http.StatusAccepted {
		return nil
	}
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
		t.Fatalf("answered %s: %s", resp.Status, b)
	}
	var out []rawMessage
	mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	if mt != "text/event-stream" {
		var m rawMessage
		if err := json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(&m); err != nil {
			t.Fatalf("JSON answer: %v", err)
		}
		return append(out, m)
	}
	for ev, err := range sse.NewReader(resp.Body).Events() {
		if err != nil {
			t.Fatalf("SSE answer: %v (after %s)", err, out)
		}
		var m rawMessage
		if err := json.Unmarshal([]byte(ev.Data), &m); err != nil {
			continue // priming events carry no message
		}
		out = append(out, m)
		if m.ID != nil && m.Method == "" {
			return out
		}
	}
	return out
}
