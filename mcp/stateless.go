package mcp

import "context"

// StatelessEndpoint is implemented by an Endpoint that also serves a
// stateless revision (2026-07-28): each request stands alone, with its
// protocol version and client capabilities in its own _meta, and no
// session (2026-07-28 Overview, "Statelessness"). A dual-era server picks
// the era of each request from how the client opens: per-request _meta is
// the stateless era, initialize the session era (2026-07-28 Versioning,
// "Backward Compatibility with Initialization-Based Versions"); both MAY
// be served on one endpoint. A transport finds this interface by type
// assertion on the Endpoint it serves; an Endpoint without it is served in
// the session era only.
//
//	transport ──NewSession(outbox)─────────▶ Endpoint          (initialize: session era)
//	transport ──HandleStateless(msg, r)────▶ StatelessEndpoint (per-request _meta)
//	                                         └──Reply(msg, final)──▶ transport
//
// The transport checks what its binding adds (over Streamable HTTP the
// routing headers, 2026-07-28 Streamable HTTP, "Server Validation"); the
// endpoint checks the rest: the _meta fields, the protocol version, the
// method, the capabilities. A transport that read the params already may
// hand them over in the context (rev20260728.WithRequest), so that they
// are not read twice.
type StatelessEndpoint interface {
	Endpoint
	// Revisions lists the revisions the endpoint serves, newest first. It
	// does not change over the endpoint's life. A transport hands every
	// request to HandleStateless when the session era is not among them,
	// initialize included, and never opens a session; the endpoint answers
	// what it does not serve with the version error of the stateless
	// revision (-32022).
	Revisions() []Revision
	// HandleStateless processes one message of the stateless era. The
	// rules of Session.Handle hold (return promptly; answer through r; r is
	// nil for a notification or a response), but ctx is the request's own:
	// it ends when the request is cancelled (over Streamable HTTP, when the
	// client closes the response stream: 2026-07-28 Streamable HTTP,
	// "Cancellation") or the transport shuts down, and the endpoint then
	// stops the work and sends nothing more for it.
	HandleStateless(ctx context.Context, msg *Message, r Replier)
}
