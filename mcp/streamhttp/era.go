package streamhttp

import (
	"net/http"
	"slices"
	"strings"

	"github.com/tasksim/tasksim/mcp"
	rev "github.com/tasksim/tasksim/mcp/rev20260728"
	"github.com/tasksim/tasksim/mcp/rev20260728/tasks"
)

// eras is what a Handler knows of the revisions its endpoint serves. An
// endpoint that is not an mcp.StatelessEndpoint is served in the session
// era (2025-11-25) only, exactly as before the stateless era existed.
type eras struct {
	// stateless is the endpoint as a StatelessEndpoint, or nil.
	stateless mcp.StatelessEndpoint
	// sessions and statelessToo say whether the endpoint serves the
	// session era and a stateless one.
	sessions, statelessToo bool
	// tools is stateless as a rev.ToolHeaders, or nil.
	tools rev.ToolHeaders
	// nameRules are the Mcp-Name rules of the stateless requests: the
	// core's and the tasks extension's (2026-07-28 Streamable HTTP,
	// "Standard Request Headers"; Tasks, "Streamable HTTP: Routing
	// Headers").
	nameRules rev.NameRules
}

func newEras(ep mcp.Endpoint) eras {
	se, ok := ep.(mcp.StatelessEndpoint)
	if !ok {
		return eras{sessions: true}
	}
	revs := se.Revisions()
	tools, _ := ep.(rev.ToolHeaders)
	return eras{
		stateless:    se,
		tools:        tools,
		sessions:     slices.ContainsFunc(revs, mcp.Revision.HasSessions),
		statelessToo: slices.ContainsFunc(revs, mcp.Revision.IsStateless),
		nameRules:    rev.CoreNameRules().With(tasks.NameRules()),
	}
}

// isStateless decides the era of a POSTed message. The rule follows how
// a dual-era server selects its behaviour from how the client opens
// (2026-07-28 Versioning, "Backward Compatibility with
// Initialization-Based Versions"), in this order:
//
//  1. an endpoint that does not implement the stateless era: session era;
//  2. an endpoint that serves no session era: stateless, whatever the
//     message (initialize then gets the version error, and Mcp-Session-Id
//     is ignored: 2026-07-28 Streamable HTTP, "Earlier Streamable HTTP
//     Revisions");
//  3. an initialize request: session era ("An initialize request selects
//     legacy semantics, scoped to the session"), unless it is sent the
//     2026-07-28 way, with the per-request _meta or an MCP-Protocol-Version
//     naming a stateless revision: that is a modern request ("A request
//     carrying modern per-request _meta is served statelessly"), and this
//     revision has no initialize, so it gets -32601 with 404 (2026-07-28
//     Streamable HTTP, "Protocol Version Header"; changelog, major change 2);
//  4. an Mcp-Session-Id naming a live session: session era, that
//     session's (2025-11-25 Transports, "Session Management");
//  5. params whose _meta carries io.modelcontextprotocol/protocolVersion:
//     stateless ("A request carrying modern per-request _meta is served
//     statelessly"; rev20260728.HasRequestMeta);
//  6. an MCP-Protocol-Version header naming a stateless revision:
//     stateless, so that a modern client that forgot _meta hears -32602
//     rather than a 2025-11-25 "missing session" (2026-07-28 Overview,
//     "Per-request protocol fields");
//  7. anything else: session era, as before.
//
// Steps 1–4 cost the 2025-11-25 path nothing it did not pay already: the
// body of a request of a live session is not scanned. The params, when
// steps 3 or 5 read them, are read once (rev.ReadRequest) and returned
// with the verdict, for serveStateless to use rather than read them again;
// q is nil when they were not read.
func (h *Handler) isStateless(r *http.Request, msg *mcp.Message) (stateless bool, q *rev.Request) {
	switch {
	case h.eras.stateless == nil:
		return false, nil
	case !h.eras.sessions:
		return true, nil
	case msg.Kind() == mcp.KindRequest && msg.Method == mcp.MethodInitialize:
		q = rev.ReadRequest(msg)
		return sentModern(r, q), q
	case h.liveSession(r):
		return false, nil
	}
	q = rev.ReadRequest(msg)
	return q.HasMeta() || namesStatelessVersion(r.Header[headerProtocol]), q
}

// sentModern reports whether q is sent the way of a stateless revision:
// its params carry the per-request _meta, or its MCP-Protocol-Version
// names a stateless revision. No 2025-11-25 client sends either.
func sentModern(r *http.Request, q *rev.Request) bool {
	return q.HasMeta() || namesStatelessVersion(r.Header[headerProtocol])
}

// liveSession reports whether the request's Mcp-Session-Id names a live
// session.
func (h *Handler) liveSession(r *http.Request) bool {
	ids := r.Header[headerSession]
	if len(ids) == 0 || ids[0] == "" {
		return false
	}
	h.mu.RLock()
	_, ok := h.sessions[ids[0]]
	h.mu.RUnlock()
	return ok
}

// namesStatelessVersion reports whether an MCP-Protocol-Version header
// names the version of a stateless revision.
func namesStatelessVersion(values []string) bool {
	if len(values) != 1 {
		return false
	}
	r, ok := mcp.RevisionOf(strings.TrimSpace(values[0]))
	return ok && r.IsStateless()
}

// refuseStateless answers 405 Method Not Allowed, with Allow: POST, to a
// GET or DELETE of a stateless client, and reports whether it did: the
// stateless revision has no standalone stream and no session to end
// (2026-07-28 Streamable HTTP, "Earlier Streamable HTTP Revisions": a
// server SHOULD answer GET or DELETE with 405). A stateless client is one
// whose MCP-Protocol-Version names a stateless revision, or any client of
// an endpoint that serves no session era.
func (h *Handler) refuseStateless(w http.ResponseWriter, r *http.Request) bool {
	e := h.eras
	if !e.statelessToo || e.sessions && !namesStatelessVersion(r.Header[headerProtocol]) {
		return false
	}
	w.Header()["Allow"] = valueAllowStateless
	writeRPCError(w, http.StatusMethodNotAllowed, mcp.ID{}, mcp.Errorf(mcp.CodeInvalidRequest,
		"Method Not Allowed: %s is not part of protocol revision %s, whose requests are POSTs", r.Method, rev.ProtocolVersion))
	return true
}

var valueAllowStateless = []string{"POST"}

// writeRPCError answers status with e, data included, as a JSON-RPC error
// response to id.
func writeRPCError(w http.ResponseWriter, status int, id mcp.ID, e *mcp.Error) {
	body, err := mcp.NewError(id, e).AppendJSON(nil)
	if err != nil { // unreachable: data is valid JSON
		writeError(w, status, e.Code, id, e.Message)
		return
	}
	w.Header()["Content-Type"] = valueJSON
	w.WriteHeader(status)
	_, _ = w.Write(body)
}
