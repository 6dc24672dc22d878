package rev20260728

import (
	"encoding/json"
	"net/http"
	"sync"

	"github.com/tasksim/tasksim/mcp"
)

// The revision (era) of a message on a dual-era wire, for those that look
// at the wire from outside (the recorder, the fault layer). A dual-era
// endpoint serves 2025-11-25 sessions and stateless 2026-07-28 requests
// side by side (2026-07-28 Versioning, "Backward Compatibility with
// Initialization-Based Versions"): a message says which it belongs to by
// its _meta, its HTTP head, the request it answers, or the connection it
// travels on.

// ClaimedRevision returns the revision a message from the client claims on
// its own, and whether it claims one: a request or notification whose
// params carry the per-request _meta protocolVersion is of that revision
// when it is a stateless one tasksim knows, else of an unknown one (the
// zero Revision, claimed all the same: it is no message of a session); an
// initialize without that _meta opens a session, 2025-11-25. Any other
// message (method "": an answer) claims none.
func ClaimedRevision(method string, params json.RawMessage) (mcp.Revision, bool) {
	if method == "" {
		return "", false
	}
	if HasRequestMeta(params) {
		var p struct {
			Meta struct {
				Version string `json:"io.modelcontextprotocol/protocolVersion"`
			} `json:"_meta"`
		}
		_ = json.Unmarshal(params, &p)
		if r, ok := mcp.RevisionOf(p.Meta.Version); ok && r.IsStateless() {
			return r, true
		}
		return "", true
	}
	if method == mcp.MethodInitialize {
		return mcp.Revision20251125, true
	}
	return "", false
}

// HeadRevision returns the revision of an HTTP request by its head: the
// one its MCP-Protocol-Version names (2026-07-28 Streamable HTTP,
// "Request Metadata"; 2025-11-25 Transports, "Protocol Version Header"),
// else 2025-11-25 when it belongs to a session (Mcp-Session-Id: only
// 2025-11-25 has them), else the zero Revision.
func HeadRevision(h http.Header) mcp.Revision {
	if r, ok := mcp.RevisionOf(h.Get(HeaderProtocolVersion)); ok {
		return r
	}
	if h.Get("Mcp-Session-Id") != "" {
		return mcp.Revision20251125
	}
	return ""
}

// RequestRevision returns the revision of an HTTP request and of what
// answers it: the one its JSON-RPC message claims (ClaimedRevision, method
// and params of the body; "" for none), else its head's (HeadRevision).
func RequestRevision(h http.Header, method string, params json.RawMessage) mcp.Revision {
	if r, ok := ClaimedRevision(method, params); ok {
		return r
	}
	return HeadRevision(h)
}

// MaxAwaited bounds the requests an Eras remembers the revision of until
// their answer; past it, an answer takes the connection's revision.
const MaxAwaited = 4096

// Eras follows the revision of the messages of one connection without
// HTTP heads (an mcp.Conn, a stdio pipe): a message that claims a
// revision (ClaimedRevision) has it; an answer has its request's (by id);
// any other message has the connection's: Conn when it is set, else
// 2025-11-25 once the connection opened a session with initialize, else
// that of the last request that claimed one. Its methods are safe for
// concurrent use; the zero Eras is ready to use.
type Eras struct {
	// Conn is the revision the connection speaks when it says so
	// (mcp.RevisionOfConn); zero: it does not. Set it before first use.
	Conn mcp.Revision

	mu      sync.Mutex
	session bool
	last    mcp.Revision
	awaited map[string]mcp.Revision // request id (as on the wire) -> revision, until answered
}

// FromClient returns the revision of a message the client sent, of kind,
// method (a request's or notification's), id (a request's, as on the
// wire) and params.
func (e *Eras) FromClient(kind mcp.Kind, method, id string, params json.RawMessage) mcp.Revision {
	e.mu.Lock()
	defer e.mu.Unlock()
	r, claimed := ClaimedRevision(method, params)
	switch {
	case claimed && method == mcp.MethodInitialize && r == mcp.Revision20251125:
		e.session = true
	case claimed:
		e.last = r
	default:
		r = e.connLocked()
	}
	if kind == mcp.KindRequest {
		if e.awaited == nil {
			e.awaited = make(map[string]mcp.Revision)
		}
		if len(e.awaited) < MaxAwaited {
			e.awaited[id] = r
		}
	}
	return r
}

// FromServer returns the revision of a message the server sent, of kind
// and id (a response's, as on the wire).
func (e *Eras) FromServer(kind mcp.Kind, id string) mcp.Revision {
	e.mu.Lock()
	defer e.mu.Unlock()
	if kind == mcp.KindResponse {
		if r, ok := e.awaited[id]; ok {
			delete(e.awaited, id)
			return r
		}
	}
	return e.connLocked()
}

// FromMessage returns the revision of msg, sent by the client
// (fromClient) or the server.
func (e *Eras) FromMessage(fromClient bool, msg *mcp.Message) mcp.Revision {
	if !fromClient {
		return e.FromServer(msg.Kind(), msg.ID.String())
	}
	return e.FromClient(msg.Kind(), msg.Method, msg.ID.String(), msg.Params)
}

// FromLine returns the revision of one message line (stdio) sent by the
// client (fromClient) or the server, of kind, method and id as FromClient
// and FromServer take them. Only a client's request or notification is
// decoded, for its params' _meta.
func (e *Eras) FromLine(fromClient bool, kind mcp.Kind, method, id string, line []byte) mcp.Revision {
	if !fromClient {
		return e.FromServer(kind, id)
	}
	var params json.RawMessage
	if method != "" {
		if msg, err := mcp.DecodeMessage(line); err == nil {
			params = msg.Params
		}
	}
	return e.FromClient(kind, method, id, params)
}

func (e *Eras) connLocked() mcp.Revision {
	switch {
	case e.Conn != "":
		return e.Conn
	case e.session:
		return mcp.Revision20251125
	}
	return e.last
}
