package server

import (
	"context"

	"github.com/tasksim/tasksim/mcp"
	rev "github.com/tasksim/tasksim/mcp/rev20260728"
	"github.com/tasksim/tasksim/mcp/rev20260728/tasks"
)

// statelessMethod answers one request of the stateless era whose _meta
// was read and whose protocol version is served.
type statelessMethod func(s *Server, ctx context.Context, msg *mcp.Message, meta rev.RequestMeta, r mcp.Replier)

// extension is an extension the stateless era serves: server/discover
// declares exactly these, and HandleStateless routes their methods, so the
// server never advertises an extension whose methods it would refuse with
// -32601 (2026-07-28 Versioning, "Extension Negotiation").
type extension struct {
	id      string
	methods map[string]statelessMethod
}

// extensions are the extensions the server serves, in the order
// server/discover lists them.
var extensions = []extension{
	{id: tasks.ExtensionID, methods: map[string]statelessMethod{
		tasks.MethodGet:    (*Server).tasksGetStateless,
		tasks.MethodUpdate: (*Server).tasksUpdateStateless,
		tasks.MethodCancel: (*Server).tasksCancelStateless,
	}},
}

// extensionMethod returns the handler of an extension's method, or nil.
func extensionMethod(method string) statelessMethod {
	for _, e := range extensions {
		if m, ok := e.methods[method]; ok {
			return m
		}
	}
	return nil
}
