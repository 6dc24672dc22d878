package streamhttp_test

import (
	"context"
	"testing"

	"github.com/tasksim/tasksim/mcp"
	"github.com/tasksim/tasksim/mcp/streamhttp"
)

// TestClientConnReportsRevision: a client Conn says the revision its
// transport speaks, the zero Revision being the session era, 2025-11-25.
func TestClientConnReportsRevision(t *testing.T) {
	for _, tc := range []struct{ given, want mcp.Revision }{
		{"", mcp.Revision20251125},
		{mcp.Revision20251125, mcp.Revision20251125},
		{mcp.Revision20260728, mcp.Revision20260728},
	} {
		c, err := (&streamhttp.ClientTransport{URL: "http://127.0.0.1:1/mcp", Revision: tc.given}).Connect(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if got := mcp.RevisionOfConn(c); got != tc.want {
			t.Errorf("Revision %q: RevisionOfConn = %q, want %q", tc.given, got, tc.want)
		}
		c.Close()
	}
}
