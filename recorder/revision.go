package recorder

import (
	"encoding/json"
	"net/http"
	"sync"

	"github.com/tasksim/tasksim/mcp"
	rev "github.com/tasksim/tasksim/mcp/rev20260728"
)

// The revision (era) of what a recorder records: docs/trace-format.md,
// "Revisions". A dual-era endpoint serves 2025-11-25 sessions and
// stateless 2026-07-28 requests side by side (2026-07-28 Versioning,
// "Backward Compatibility with Initialization-Based Versions"), so each
// record says which it belongs to.

// legacy is the revision of every session: only 2025-11-25 has them,
// whatever protocol version a session negotiated.
const legacy = string(mcp.Revision20251125)

// claimedRevision returns the revision a message from the client claims
// on its own, and whether it claims one: a request or notification whose
// params carry the per-request _meta protocolVersion is of that revision
// when it is a stateless one tasksim knows, else of an unknown one ("",
// claimed all the same: it is no message of a session); an initialize
// without that _meta opens a session.
func claimedRevision(method string, params json.RawMessage) (string, bool) {
	if method == "" {
		return "", false
	}
	if rev.HasRequestMeta(params) {
		var p struct {
			Meta struct {
				Version string `json:"io.modelcontextprotocol/protocolVersion"`
			} `json:"_meta"`
		}
		_ = json.Unmarshal(params, &p)
		if r, ok := mcp.RevisionOf(p.Meta.Version); ok && r.IsStateless() {
			return string(r), true
		}
		return "", true
	}
	if method == mcp.MethodInitialize {
		return legacy, true
	}
	return "", false
}

// view is what connEras needs of a message: its kind, method, id (as on
// the wire) and, of a message from the client, its params.
type view struct {
	kind   mcp.Kind
	method string
	id     string
	params json.RawMessage
}

func viewOf(msg *mcp.Message) view {
	return view{kind: msg.Kind(), method: msg.Method, id: msg.ID.String(), params: msg.Params}
}

// headRevision returns the revision of an HTTP request by its head: the
// one its MCP-Protocol-Version names (2026-07-28 Streamable HTTP,
// "Request Metadata"; 2025-11-25 Transports, "Protocol Version Header"),
// else 2025-11-25 when it belongs to a session (Mcp-Session-Id), else "".
func headRevision(h http.Header) string {
	if r, ok := mcp.RevisionOf(h.Get(rev.HeaderProtocolVersion)); ok {
		return string(r)
	}
	if h.Get("Mcp-Session-Id") != "" {
		return legacy
	}
	return ""
}

// maxAwaited bounds the requests a connEras remembers the revision of
// until their answer; past it, an answer takes the connection's revision.
const maxAwaited = 4096

// connEras follows the revision of the messages of one connection without
// headers (an in-process mcp.Conn, a stdio child): a message that claims
// a revision has it; an answer has its request's (by id); any other
// message has the connection's, 2025-11-25 once it opened a session with
// initialize, else that of the last request that claimed one. It is safe
// for concurrent use.
type connEras struct {
	mu      sync.Mutex
	session bool
	last    string
	awaited map[string]string // request id -> revision, until answered
}

// fromClient returns the revision of a message the client sent.
func (c *connEras) fromClient(msg view) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	r, claimed := claimedRevision(msg.method, msg.params)
	switch {
	case claimed && msg.method == mcp.MethodInitialize && r == legacy:
		c.session = true
	case claimed:
		c.last = r
	default:
		r = c.connLocked()
	}
	if msg.kind == mcp.KindRequest {
		if c.awaited == nil {
			c.awaited = make(map[string]string)
		}
		if len(c.awaited) < maxAwaited {
			c.awaited[msg.id] = r
		}
	}
	return r
}

// fromServer returns the revision of a message the server sent.
func (c *connEras) fromServer(msg view) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	if msg.kind == mcp.KindResponse {
		if r, ok := c.awaited[msg.id]; ok {
			delete(c.awaited, msg.id)
			return r
		}
	}
	return c.connLocked()
}

func (c *connEras) connLocked() string {
	if c.session {
		return legacy
	}
	return c.last
}
