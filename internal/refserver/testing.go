package refserver

import (
	"testing"

	"github.com/tasksim/tasksim/mcp/server"
)

// Start serves a reference server with opts (nil: every default) behind
// Streamable HTTP on a loopback port and returns its endpoint URL and the
// server. Everything stops when the test ends.
func Start(t testing.TB, opts *server.Options) (string, *server.Server) {
	t.Helper()
	s := StartHTTP(t, &Options{Server: opts})
	return s.URL, s.Server
}

// StartHTTP is Start with the transport's options too. It fails the test
// if the server cannot listen.
func StartHTTP(t testing.TB, o *Options) *HTTP {
	t.Helper()
	s, err := Listen(o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}
