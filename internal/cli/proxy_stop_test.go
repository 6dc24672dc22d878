package cli

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tasksim/tasksim/mcp"
	"github.com/tasksim/tasksim/mcp/client"
	"github.com/tasksim/tasksim/mcp/server"
	"github.com/tasksim/tasksim/mcp/streamhttp"
	"github.com/tasksim/tasksim/traces"
)

// startHeldUpstream serves the reference server over Streamable HTTP on
// loopback, its slow_text sending its first chunk at once and then
// holding its stream open until the request ends.
func startHeldUpstream(t *testing.T) string {
	t.Helper()
	tools := withSlowText(func(json.RawMessage) (server.RunFunc, error) {
		return func(ctx context.Context, c *server.Call) (*mcp.CallToolResult, error) {
			if err := c.Emit(ctx, mcp.TextBlock(server.ChunkText(1, 8))); err != nil {
				return nil, err
			}
			<-ctx.Done()
			return nil, ctx.Err()
		}, nil
	})
	srv := server.New(&server.Options{Tools: tools})
	return serveUpstream(t, srv, srv)
}

// TestProxyStoppedBySignalTraceChecks: tasksim proxy --record, a real
// process, stopped by SIGINT or SIGTERM while a client's SSE stream is
// open, cuts that stream itself. The trace says so (End stopped), and
// tasksim trace check does not blame the client for not resuming a stream
// the recorder cut: CLIENT-RESUME does not fail.
func TestProxyStoppedBySignalTraceChecks(t *testing.T) {
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
		t.Run(sig.String(), func(t *testing.T) {
			upstream := startHeldUpstream(t)
			out := filepath.Join(t.TempDir(), "proxy.trace")
			cmd := exec.Command(os.Args[0], "proxy", "--listen", "127.0.0.1:0", "--upstream", upstream, "--record", out)
			cmd.Env = append(os.Environ(), asTasksimEnv+"=1")
			stderr := &syncBuffer{}
			cmd.Stdout, cmd.Stderr = stderr, stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			done := make(chan int, 1)
			go func() {
				cmd.Wait()
				done <- cmd.ProcessState.ExitCode()
			}()
			t.Cleanup(func() {
				if cmd.ProcessState == nil {
					cmd.Process.Kill()
					<-done
				}
			})
			u := stderr.await(t, frontURL, done)

			// A streamed call through the proxy: once its first segment
			// is in, its stream is open, waiting for more.
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			sess, err := client.New(nil).Connect(ctx, &streamhttp.ClientTransport{URL: u})
			if err != nil {
				t.Fatal(err)
			}
			first := make(chan struct{})
			called := make(chan error, 1)
			go func() {
				_, err := sess.CallTool(ctx, client.CallOptions{Name: server.ToolSlowText, Args: map[string]any{"chunks": 3},
					Mode: client.ModeStreaming, OnSegment: func(mcp.Segment) {
						select {
						case <-first:
						default:
							close(first)
						}
					}})
				called <- err
			}()
			select {
			case <-first:
			case err := <-called:
				t.Fatalf("the call ended before its first segment: %v", err)
			}

			if err := cmd.Process.Signal(sig); err != nil {
				t.Fatal(err)
			}
			if code := <-done; code != ExitOK {
				t.Fatalf("proxy exit %d on %s: %s", code, sig, stderr)
			}
			cancel()
			<-called
			sess.Close()

			_, recs := readTraceFile(t, out)
			stopped := false
			for _, r := range recs {
				if r.Kind.IsEnd() && testing.Verbose() {
					t.Logf("%d %s %s end=%s %q", r.Index, r.Kind, r.Stream, r.End, r.Note)
				}
				if r.Kind == traces.KindConnError && r.End == traces.EndStopped {
					stopped = true
				}
			}
			if !stopped {
				t.Errorf("no conn-error with End stopped in the trace")
			}
			code, stdout, errOut := run(t, "", "trace", "check", out)
			if strings.Contains(stdout, "FAIL  CLIENT-RESUME") || code != ExitOK {
				t.Errorf("trace check: exit %d\n%s%s", code, stdout, errOut)
			}
		})
	}
}
