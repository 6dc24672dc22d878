// Package refserver starts tasksim's reference server behind its
// Streamable HTTP transport on a loopback port, for tests of the packages
// that drive it (the client, the recorder, the load generator, the CLI).
package refserver

import (
	"net/http/httptest"
	"testing"

	"github.com/tasksim/tasksim/mcp/server"
	"github.com/tasksim/tasksim/mcp/streamhttp"
)

// Start serves a reference server with opts (nil: every default) and
// returns its endpoint URL and the server. Everything stops when the test
// ends.
func Start(t testing.TB, opts *server.Options) (string, *server.Server) {
	t.Helper()
	srv := server.New(opts)
	h := streamhttp.NewHandler(srv, nil)
	ts := httptest.NewServer(h)
	t.Cleanup(func() {
		ts.CloseClientConnections()
		h.Close()
		ts.Close()
		srv.Close()
	})
	return ts.URL + "/mcp", srv
}
