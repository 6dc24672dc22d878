package client_test

import (
	"strings"
	"testing"

	"github.com/tasksim/tasksim/mcp/client"
	"github.com/tasksim/tasksim/mcp/server"
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
