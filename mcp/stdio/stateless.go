package stdio

import (
	"slices"

	"github.com/tasksim/tasksim/mcp"
	rev "github.com/tasksim/tasksim/mcp/rev20260728"
)

// statelessRoute hands the messages of the stateless era (2026-07-28) to
// an endpoint that serves it, beside the process's one session. Over stdio
// there are no routing headers to check; the endpoint checks the rest.
type statelessRoute struct {
	ep mcp.StatelessEndpoint // nil: the endpoint serves the session era only
	// all says the endpoint serves no session era: every message is
	// stateless, initialize included (it gets the version error).
	all bool
}

func newStatelessRoute(ep mcp.Endpoint) statelessRoute {
	se, ok := ep.(mcp.StatelessEndpoint)
	if !ok {
		return statelessRoute{}
	}
	return statelessRoute{ep: se, all: !slices.ContainsFunc(se.Revisions(), mcp.Revision.HasSessions)}
}

// takes reports whether msg is of the stateless era: a request whose
// params carry the per-request _meta (2026-07-28 Versioning, "Backward
// Compatibility with Initialization-Based Versions": "A request carrying
// modern per-request _meta is served statelessly"). An initialize without
// it scopes the session era to the process; one with it is a request of a
// revision that has no initialize, and gets -32601. Notifications stay
// with the session: the revision's one client notification over stdio,
// notifications/cancelled, is not served statelessly yet.
func (s statelessRoute) takes(msg *mcp.Message) bool {
	switch {
	case s.ep == nil:
		return false
	case s.all:
		return true
	}
	return msg.Kind() == mcp.KindRequest && rev.HasRequestMeta(msg.Params)
}
