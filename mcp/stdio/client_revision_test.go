package stdio_test

import (
	"context"
	"errors"
	"io"
	"testing"

	"github.com/tasksim/tasksim/mcp"
	"github.com/tasksim/tasksim/mcp/stdio"
)

// TestClientConnReportsRevision: a stdio client Conn says the revision its
// transport was told, and nothing when it was told none; an unknown
// revision is an error of Connect.
func TestClientConnReportsRevision(t *testing.T) {
	for _, r := range []mcp.Revision{"", mcp.Revision20251125, mcp.Revision20260728} {
		outR, _ := io.Pipe()
		_, inW := io.Pipe()
		c, err := (&stdio.IOTransport{Reader: outR, Writer: inW, Revision: r}).Connect(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if got := mcp.RevisionOfConn(c); got != r {
			t.Errorf("Revision %q: RevisionOfConn = %q", r, got)
		}
		c.Close()
	}
	outR, _ := io.Pipe()
	_, inW := io.Pipe()
	if _, err := (&stdio.IOTransport{Reader: outR, Writer: inW, Revision: "2024-11-05"}).Connect(context.Background()); !errors.Is(err, mcp.ErrUnknownRevision) {
		t.Errorf("IOTransport with an unknown revision: %v, want ErrUnknownRevision", err)
	}
	if _, err := (&stdio.CommandTransport{Command: "true", Revision: "2024-11-05"}).Connect(context.Background()); !errors.Is(err, mcp.ErrUnknownRevision) {
		t.Errorf("CommandTransport with an unknown revision: %v, want ErrUnknownRevision", err)
	}
}
