package plant_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/tasksim/tasksim/internal/plant"
	"github.com/tasksim/tasksim/internal/refserver"
	"github.com/tasksim/tasksim/mcp"
	rev "github.com/tasksim/tasksim/mcp/rev20260728"
	"github.com/tasksim/tasksim/mcp/server"
	"github.com/tasksim/tasksim/mcp/sse"
)

// post sends body to url with hdr and returns the status, the answer's
// Mcp-Session-Id and its last JSON-RPC message (of a JSON body or an SSE
// stream).
func post(t *testing.T, url, body string, hdr map[string]string) (int, string, *mcp.Message) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var last []byte
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		r := sse.NewReader(resp.Body)
		for range 1000 {
			ev, err := r.Next()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			if ev.Data != "" {
				last = []byte(ev.Data)
			}
		}
	} else if last, err = io.ReadAll(resp.Body); err != nil {
		t.Fatal(err)
	}
	var msg *mcp.Message
	if len(last) > 0 {
		if msg, err = mcp.DecodeMessage(last); err != nil {
			t.Fatalf("answer %q: %v", last, err)
		}
	}
	return resp.StatusCode, resp.Header.Get("Mcp-Session-Id"), msg
}

// A server with an endpoint bug planted still serves 2026-07-28: a
// stateless request is answered, unplanted, while a 2025-11-25 session
// meets the bug (docs/cli.md, --bug).
func TestPlantedServerKeepsStatelessEra(t *testing.T) {
	b, err := plant.Named("no-created-at")
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := b.Stdio(server.New(nil)).(mcp.StatelessEndpoint); !ok {
		t.Error("over stdio the planted server lost the stateless era")
	}
	if th, ok := b.Stdio(server.New(nil)).(rev.ToolHeaders); !ok || len(th.ParamHeaders(server.ToolCustomHeaders)) == 0 {
		t.Errorf("the planted server does not give its tools' x-mcp-header arguments, whose Mcp-Param headers go unchecked")
	}
	s := refserver.StartHTTP(t, b.RefServer(nil))

	meta := `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28",` +
		`"io.modelcontextprotocol/clientCapabilities":{"extensions":{"io.modelcontextprotocol/tasks":{}}}}`
	status, _, m := post(t, s.URL, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"sleep","arguments":{"durationMs":1},`+meta+`}}`,
		map[string]string{rev.HeaderProtocolVersion: rev.ProtocolVersion, rev.HeaderMethod: "tools/call", rev.HeaderName: "sleep"})
	var task struct {
		ResultType string `json:"resultType"`
		CreatedAt  string `json:"createdAt"`
	}
	if status != http.StatusOK || m == nil || m.Error != nil || json.Unmarshal(m.Result, &task) != nil ||
		task.ResultType != "task" || task.CreatedAt == "" {
		t.Fatalf("a 2026-07-28 task call: status %d, %+v; want a task with createdAt, unplanted", status, m)
	}

	status, sid, m := post(t, s.URL, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25",`+
		`"capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`, nil)
	if status != http.StatusOK || sid == "" || m == nil || m.Error != nil {
		t.Fatalf("initialize: status %d, session %q, %+v", status, sid, m)
	}
	sess := map[string]string{"Mcp-Session-Id": sid, "MCP-Protocol-Version": "2025-11-25"}
	post(t, s.URL, `{"jsonrpc":"2.0","method":"notifications/initialized"}`, sess)
	_, _, m = post(t, s.URL, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"sleep","arguments":{"durationMs":1},"task":{}}}`, sess)
	var created struct {
		Task map[string]json.RawMessage `json:"task"`
	}
	if m == nil || m.Error != nil || json.Unmarshal(m.Result, &created) != nil || created.Task["taskId"] == nil {
		t.Fatalf("a 2025-11-25 task call: %+v, want a task", m)
	}
	if _, ok := created.Task["createdAt"]; ok {
		t.Errorf("a 2025-11-25 session does not meet the planted bug: %s", m.Result)
	}
}
