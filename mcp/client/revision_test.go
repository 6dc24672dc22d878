package client_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"

	"github.com/tasksim/tasksim/internal/refserver"
	"github.com/tasksim/tasksim/mcp"
	"github.com/tasksim/tasksim/mcp/client"
	"github.com/tasksim/tasksim/mcp/streamhttp"
)

// TestConnectChecksTheConnsRevision: against the dual-era reference server
// over HTTP on 127.0.0.1, a connection that says it speaks the other era
// is refused at once, before anything is sent: ConnectStateless over a
// session-era transport, Connect over a 2026-07-28 one. The matching
// pairs connect.
func TestConnectChecksTheConnsRevision(t *testing.T) {
	u, _ := refserver.Start(t, nil)
	var requests atomic.Int64
	ctx := context.Background()
	count := func(r mcp.Revision) mcp.Transport {
		tr := &streamhttp.ClientTransport{URL: u, Revision: r}
		return mcp.DecorateTransport(tr, func(c mcp.Conn) mcp.Conn {
			return mcp.Decorate(c, mcp.ConnFuncs{Write: func(ctx context.Context, inner mcp.Conn, m *mcp.Message) error {
				requests.Add(1)
				return inner.Write(ctx, m)
			}})
		})
	}
	if _, err := client.New(nil).ConnectStateless(ctx, count("")); !errors.Is(err, client.ErrRevisionMismatch) {
		t.Errorf("ConnectStateless over a session-era transport: %v, want ErrRevisionMismatch", err)
	}
	if _, err := client.New(nil).Connect(ctx, count(mcp.Revision20260728)); !errors.Is(err, client.ErrRevisionMismatch) {
		t.Errorf("Connect over a 2026-07-28 transport: %v, want ErrRevisionMismatch", err)
	}
	if n := requests.Load(); n != 0 {
		t.Errorf("%d messages sent, want none", n)
	}
	s, err := client.New(nil).ConnectStateless(ctx, count(mcp.Revision20260728))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Discover(ctx); err != nil {
		t.Error(err)
	}
	s.Close()
	sess, err := client.New(nil).Connect(ctx, count(""))
	if err != nil {
		t.Fatal(err)
	}
	sess.Close()
}
