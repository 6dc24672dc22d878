package stdio_test

import (
	"io"
	"path/filepath"
	"testing"
	"time"

	"github.com/tasksim/tasksim/internal/child/childtest"
	"github.com/tasksim/tasksim/mcp/stdio"
)

// TestCommandTransportEndsWhatTheServerStarted: what a server process
// starts and leaves running ends when the server does, whether it exits
// once its stdin is closed or has to be stopped after the grace period.
func TestCommandTransportEndsWhatTheServerStarted(t *testing.T) {
	childtest.NeedProc(t)
	for _, tc := range []struct{ name, script string }{
		{"exits", childtest.Fork + "exec cat"},
		{"deaf", childtest.Fork + "exec sleep 1000"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pids := filepath.Join(t.TempDir(), "pids")
			t.Setenv("PIDS", pids)
			tr := &stdio.CommandTransport{Command: "sh", Args: []string{"-c", tc.script}, Stderr: io.Discard, GracePeriod: 50 * time.Millisecond}
			conn, err := tr.Connect(ctxT(t))
			if err != nil {
				t.Fatal(err)
			}
			childtest.WaitFile(t, pids)
			conn.Close()
			childtest.WaitGone(t, pids)
		})
	}
}
