package streamhttp_test

import (
	"context"
	"log/slog"
	"net/http"
	"sync/atomic"
	"testing"

	"github.com/tasksim/tasksim/mcp"
	"github.com/tasksim/tasksim/mcp/server"
	"github.com/tasksim/tasksim/mcp/streamhttp"
)

// countingEndpoint wraps the reference server and handles HandleStateless
// itself, as a decorator does (a planted bug, a recorder): it counts
// what it sees, then hands the message on.
type countingEndpoint struct {
	*server.Server
	seen atomic.Int64
}

func (e *countingEndpoint) HandleStateless(ctx context.Context, msg *mcp.Message, r mcp.Replier) {
	e.seen.Add(1)
	e.Server.HandleStateless(ctx, msg, r)
}

// The params the transport read are handed on in the context, not through
// a method of the endpoint's that an embedded server would promote: a
// wrapper's HandleStateless sees every stateless request, and the server
// behind it still answers from what the transport read.
func TestStatelessWrapperSeesEveryRequest(t *testing.T) {
	ep := &countingEndpoint{Server: server.New(nil)}
	h := streamhttp.NewHandler(ep, &streamhttp.Options{Logger: slog.New(slog.DiscardHandler)})
	t.Cleanup(func() {
		h.Close()
		ep.Close()
	})
	s := &statelessServer{t: t, srv: ep.Server, h: h, url: "http://" + streamhttp.MemoryHost + streamhttp.DefaultPath,
		client: &http.Client{Transport: streamhttp.NewMemoryTransport(h)}}
	for range 3 {
		s.call(server.ToolEcho, metaTasks())
	}
	if n := ep.seen.Load(); n != 3 {
		t.Fatalf("the wrapper saw %d of 3 requests", n)
	}
}
