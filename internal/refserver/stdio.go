package refserver

import (
	"context"
	"io"

	"github.com/tasksim/tasksim/mcp"
	"github.com/tasksim/tasksim/mcp/server"
	"github.com/tasksim/tasksim/mcp/stdio"
)

// ServeStdio runs a reference server with opts (nil: every default) for
// one session over newline-delimited JSON, messages from r and to w,
// with the stdio transport's options o (nil: defaults), as stdio.Serve
// does: it returns nil when r ends, or ctx's error. The server is closed
// before it returns.
func ServeStdio(ctx context.Context, opts *server.Options, r io.Reader, w io.Writer, o *stdio.ServerOptions) error {
	return ServeStdioWrapped(ctx, opts, nil, r, w, o)
}

// ServeStdioWrapped is ServeStdio with the server wrapped by wrap before
// the transport serves it (a planted bug, internal/plant); nil serves it
// as it is.
func ServeStdioWrapped(ctx context.Context, opts *server.Options, wrap func(mcp.Endpoint) mcp.Endpoint, r io.Reader, w io.Writer, o *stdio.ServerOptions) error {
	srv := server.New(opts)
	defer srv.Close()
	var ep mcp.Endpoint = srv
	if wrap != nil {
		ep = wrap(srv)
	}
	return stdio.Serve(ctx, ep, r, w, o)
}
