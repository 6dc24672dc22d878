package client_test

import (
	"encoding/json"
	"log/slog"
	"strings"
	"testing"

	"github.com/tasksim/tasksim/mcp"
	"github.com/tasksim/tasksim/mcp/client"
	"github.com/tasksim/tasksim/mcp/server"
	"github.com/tasksim/tasksim/mcp/streamhttp"
)

// TestStatelessCallsToolWithParamHeaders calls test_custom_headers, whose
// arguments are mirrored into Mcp-Param headers, without listing the
// tools first. Over HTTP the first call is refused with -32020 (the
// transport does not know the tool's annotations yet); the client lists
// the tools and sends the call again, which completes (2026-07-28
// Streamable HTTP, "Client Behavior"). Over stdio no header applies.
func TestStatelessCallsToolWithParamHeaders(t *testing.T) {
	eachStateless(t, func(t *testing.T, dial func(*testing.T, pairOptions) *pair) {
		p := dial(t, pairOptions{})
		res, err := p.run(t, client.StatelessCallOptions{Name: server.ToolCustomHeaders,
			Args: map[string]any{"region": "Zürich ", "priority": 2, "query": "q"}})
		if err != nil || !res.Complete || !strings.Contains(texts(res.Content), "Zürich") {
			t.Fatalf("err %v, result %+v", err, res)
		}
	})
}

// TestStatelessListToolsLeavesOutBadHeaders lists the tools of a server
// that serves, beside its own, tools whose x-mcp-header annotations break
// the rules (a number, an empty name, one under items): they are left
// out, the others kept (2026-07-28 Streamable HTTP, "Schema Extension":
// the client MUST exclude the invalid tool from the result of tools/list).
func TestStatelessListToolsLeavesOutBadHeaders(t *testing.T) {
	bad := map[string]string{
		"bad_number": `{"type":"object","properties":{"score":{"type":"number","x-mcp-header":"Score"}}}`,
		"bad_empty":  `{"type":"object","properties":{"v":{"type":"string","x-mcp-header":""}}}`,
		"bad_items":  `{"type":"object","properties":{"v":{"type":"array","items":{"type":"string","x-mcp-header":"V"}}}}`,
	}
	tools := server.BuiltinTools()
	for name, schema := range bad {
		tools = append(tools, &server.Tool{Tool: mcp.Tool{Name: name, InputSchema: json.RawMessage(schema)},
			Prepare:   func(json.RawMessage) (server.RunFunc, error) { return nil, nil },
			Revisions: []mcp.Revision{mcp.Revision20260728}})
	}
	srv := server.New(&server.Options{Tools: tools})
	h := streamhttp.NewHandler(srv, &streamhttp.Options{Logger: slog.New(slog.DiscardHandler)})
	t.Cleanup(func() { h.Close(); srv.Close() })
	tr := streamhttp.Pipe(h)
	tr.Revision = mcp.Revision20260728
	s, err := client.New(nil).ConnectStateless(t.Context(), tr)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	listed, err := s.ListTools(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	for _, tl := range listed {
		names[tl.Name] = true
	}
	for name := range bad {
		if names[name] {
			t.Errorf("%s listed: its x-mcp-header annotation is invalid", name)
		}
	}
	if !names[server.ToolCustomHeaders] || !names[server.ToolEcho] {
		t.Errorf("listed %v: want %s and %s kept", names, server.ToolCustomHeaders, server.ToolEcho)
	}
}
