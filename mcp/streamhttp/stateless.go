package streamhttp

import (
	"context"
	"errors"
	"net/http"

	"github.com/tasksim/tasksim/mcp"
	rev "github.com/tasksim/tasksim/mcp/rev20260728"
)

// serveStateless serves a POSTed message of the stateless era (2026-07-28
// Streamable HTTP). Nothing of it outlives the POST: no session is made
// or named (Mcp-Session-Id is ignored and never sent), no event store
// keeps its answer (Last-Event-ID is ignored; "Resumable SSE streams via
// Last-Event-ID are not supported"). The checks, after readMessage's:
//
//	a notification or a response                   → 202 (no header rules
//	                                                  for notification POSTs)
//	_meta per-request fields present and well-formed  else 400, -32602
//	MCP-Protocol-Version, Mcp-Method, Mcp-Name match  else 400, -32020
//
// The endpoint then checks the version (-32022, 400), the method (-32601,
// 404) and the rest, and answers as the stateless replier allows (see
// answerStateless). The request's context ends when the client goes away
// ("Closing the SSE response stream MUST be treated by the server as
// cancellation") or the handler closes.
//
// q is msg as rev.ReadRequest read it where the era was chosen, or nil if
// it was not read there.
func (h *Handler) serveStateless(w http.ResponseWriter, r *http.Request, msg *mcp.Message, q *rev.Request) {
	ep := h.eras.stateless
	h.mu.RLock()
	closed := h.closed
	h.mu.RUnlock()
	if closed {
		writeShuttingDown(w, msg.ID)
		return
	}
	if msg.Kind() != mcp.KindRequest {
		ep.HandleStateless(h.ctx, msg, nil)
		w.WriteHeader(http.StatusAccepted)
		return
	}
	// An initialize sent the 2025-11-25 way is here only when the endpoint
	// serves no session era; it carries no _meta and no routing headers,
	// and the endpoint answers it with the versions it serves. One sent
	// the 2026-07-28 way is checked as any request of that revision.
	if q == nil {
		q = rev.ReadRequest(msg)
	}
	if msg.Method != mcp.MethodInitialize || sentModern(r, q) {
		if e := h.checkStateless(r, q); e != nil {
			writeRPCError(w, http.StatusBadRequest, msg.ID, e)
			return
		}
	}
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	stop := context.AfterFunc(h.ctx, cancel)
	defer stop()
	p := newStatelessReplier(h.opts.MaxStreamBytes)
	ep.HandleStateless(rev.WithRequest(ctx, q), msg, p)
	if !h.answerStateless(ctx, w, p) && h.ctx.Err() != nil && r.Context().Err() == nil {
		// The handler closed before the endpoint answered, and the
		// client still waits: say so, rather than a 200 with no body.
		writeShuttingDown(w, msg.ID)
	}
}

// writeShuttingDown answers 503 with a -32603 error to id: the handler is
// closed, or closed before the request was answered.
func writeShuttingDown(w http.ResponseWriter, id mcp.ID) {
	writeRPCError(w, http.StatusServiceUnavailable, id, mcp.Errorf(mcp.CodeInternalError, "Service Unavailable: the server is shutting down"))
}

// checkStateless checks what the transport owns of a stateless request:
// the per-request _meta fields, which the MCP-Protocol-Version header must
// match (2026-07-28 Overview, "Per-request protocol fields": -32602, on
// HTTP 400), then the routing headers against the body (2026-07-28
// Streamable HTTP, "Server Validation": -32020, 400), the Mcp-Param
// headers of a tools/call included when the endpoint's tools declare
// x-mcp-header arguments ("Server Behavior for Custom Headers").
func (h *Handler) checkStateless(r *http.Request, q *rev.Request) *mcp.Error {
	if err := q.MetaErr; err != nil {
		var me *rev.MetaError
		if errors.As(err, &me) {
			return me.RPCError()
		}
		return mcp.Errorf(mcp.CodeInvalidParams, "invalid params: %v", err)
	}
	if err := q.CheckHeaders(r.Header, h.eras.nameRules, h.eras.tools); err != nil {
		var he *rev.HeaderError
		if errors.As(err, &he) {
			return he.RPCError()
		}
		return rev.HeaderMismatch("Header mismatch: %v", err)
	}
	return nil
}

// statelessStatus is the HTTP status of a JSON answer whose message is an
// error with code: 400 for the codes the revision defines (2026-07-28
// Overview, "Error Codes", "Per-request protocol fields"; Versioning,
// "Protocol Version Negotiation"), 404 for an unknown method (2026-07-28
// Streamable HTTP, "Protocol Version Header"), 200 otherwise: the
// JSON-RPC error is the answer.
func statelessStatus(code int) int {
	switch code {
	case rev.CodeHeaderMismatch, rev.CodeMissingRequiredClientCapability, rev.CodeUnsupportedProtocolVersion:
		return http.StatusBadRequest
	case mcp.CodeMethodNotFound:
		return http.StatusNotFound
	}
	return http.StatusOK
}
