package streamhttp

import (
	"encoding/json"
	"net/http"
	"sync"

	"github.com/tasksim/tasksim/mcp"
	rev "github.com/tasksim/tasksim/mcp/rev20260728"
)

// paramBook keeps, for a Conn of the stateless era, the tool arguments the
// server marks x-mcp-header, learnt from the tools/list answers the Conn
// carries, so that a tools/call of such a tool mirrors them into
// Mcp-Param headers, as a client MUST (2026-07-28 Streamable HTTP, "Custom
// Headers from Tool Parameters", "Client Behavior"). A tool whose
// annotations break the rules gets no headers; a client that wants to
// leave it out of its own list checks it with rev20260728.ParamHeaders.
// A tools/call of a tool no answer listed is sent without them, and the
// server may refuse it with -32020: the caller lists the tools, then
// retries ("Client Behavior").
type paramBook struct {
	mu      sync.Mutex
	pending map[mcp.ID]struct{}          // tools/list requests in flight
	tools   map[string][]rev.ParamHeader // by tool name; only tools that declare some
}

// maxPendingLists bounds the tools/list requests a paramBook waits for.
const maxPendingLists = 64

// noteRequest notes a tools/list request whose answer is to be read.
func (b *paramBook) noteRequest(msg *mcp.Message) {
	if msg.Kind() != mcp.KindRequest || msg.Method != mcp.MethodToolsList {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.pending == nil || len(b.pending) >= maxPendingLists {
		// Answers lost to broken streams never arrive; forget them.
		b.pending = map[mcp.ID]struct{}{}
	}
	b.pending[msg.ID] = struct{}{}
}

// noteAnswer learns the annotations of the tools a tools/list answer
// lists.
func (b *paramBook) noteAnswer(msg *mcp.Message) {
	if msg.Kind() != mcp.KindResponse {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if _, ok := b.pending[msg.ID]; !ok {
		return
	}
	delete(b.pending, msg.ID)
	var res struct {
		Tools []mcp.Tool `json:"tools"`
	}
	if msg.Result == nil || json.Unmarshal(msg.Result, &res) != nil {
		return
	}
	for _, t := range res.Tools {
		params, err := rev.ParamHeaders(t.InputSchema)
		if err != nil || len(params) == 0 {
			delete(b.tools, t.Name)
			continue
		}
		if b.tools == nil {
			b.tools = map[string][]rev.ParamHeader{}
		}
		b.tools[t.Name] = params
	}
}

// setHeaders sets the Mcp-Param headers of msg when it is a tools/call of
// a tool known to declare some.
func (b *paramBook) setHeaders(h http.Header, msg *mcp.Message) {
	if msg.Method != mcp.MethodToolsCall {
		return
	}
	b.mu.Lock()
	empty := len(b.tools) == 0
	b.mu.Unlock()
	if empty {
		return
	}
	var p struct {
		Name      string          `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
	}
	if json.Unmarshal(msg.Params, &p) != nil {
		return
	}
	b.mu.Lock()
	params := b.tools[p.Name]
	b.mu.Unlock()
	rev.SetParamHeaders(h, p.Arguments, params)
}
