package refserver

import (
	"context"
	"io"

	"github.com/tasksim/tasksim/mcp/server"
	"github.com/tasksim/tasksim/mcp/stdio"
)

// ServeStdio runs a reference server with opts (nil: every default) for
// one session over newline-delimited JSON, messages from r and to w,
// with the stdio transport's options o (nil: defaults), as stdio.Serve
// does: it returns nil when r ends, or ctx's error. The server is closed
// before it returns.
func ServeStdio(ctx context.Context, opts *server.Options, r io.Reader, w io.Writer, o *stdio.ServerOptions) error {
	srv := server.New(opts)
	defer srv.Close()
	return stdio.Serve(ctx, srv, r, w, o)
}
