package stdio

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"time"

	"github.com/tasksim/tasksim/clock"
	"github.com/tasksim/tasksim/internal/child"
	"github.com/tasksim/tasksim/mcp"
)

// DefaultGracePeriod is how long Close waits for a server process to exit
// after its stdin was closed, before killing it.
const DefaultGracePeriod = 2 * time.Second

// CommandTransport starts an MCP server as a child process and speaks
// newline-delimited JSON-RPC on its stdin and stdout (2025-11-25
// Transports, "stdio"). The child's stderr is passed on, not interpreted:
// a server MAY log there and the client SHOULD NOT take it for errors.
//
// The child runs in a process group of its own. Close closes the child's
// stdin, waits GracePeriod for it to exit, then sends SIGTERM to its group,
// waits GracePeriod more, then kills the group. Once the child has exited,
// by itself or so, what it started and left running in its group is ended
// too (SIGTERM, then SIGKILL after GracePeriod). A child that exits first
// makes Read return an error with its exit status and the last line it
// wrote to stderr.
type CommandTransport struct {
	// Command is the program, looked up in PATH if it has no slash.
	Command string
	Args    []string
	// Env is added to this process's environment ("KEY=value" entries;
	// a later entry wins).
	Env []string
	// Dir is the child's working directory; "" means this process's.
	Dir string
	// Stderr receives the child's stderr; nil means os.Stderr.
	Stderr io.Writer
	// GracePeriod is how long Close waits for the child to exit after
	// closing its stdin; 0 means DefaultGracePeriod.
	GracePeriod time.Duration
	// MaxLine caps one message line in bytes; 0 means DefaultMaxLine.
	MaxLine int
	// Revision is the protocol revision the client speaks, as
	// IOTransport.Revision: reported by the Conn, zero when unsaid.
	Revision mcp.Revision
	// Clock times GracePeriod; nil means the wall clock. On a clock.Sim,
	// Close kills a child that outlives its stdin once simulated time
	// passes GracePeriod. (exec's own one-second WaitDelay, for a
	// grandchild holding stderr open, stays on the wall clock.)
	Clock clock.Clock
}

// Connect implements mcp.Transport: it starts the child. ctx bounds the
// start only; the child lives until Close.
func (t *CommandTransport) Connect(ctx context.Context) (mcp.Conn, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if t.Command == "" {
		return nil, errors.New("stdio: no server command")
	}
	if err := checkRevision(t.Revision); err != nil {
		return nil, err
	}
	cmd := exec.Command(t.Command, t.Args...)
	child.Isolate(cmd)
	cmd.Dir = t.Dir
	if len(t.Env) > 0 {
		cmd.Env = append(os.Environ(), t.Env...)
	}
	stderr := t.Stderr
	if stderr == nil {
		stderr = os.Stderr
	}
	tail := &child.Tail{W: stderr}
	cmd.Stderr = tail
	// A grandchild that keeps stderr open must not hold up Wait forever.
	cmd.WaitDelay = time.Second
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, fmt.Errorf("stdio: %w", err)
	}
	// Stdout is an os.Pipe read directly, not exec's pipe: Wait would
	// close that one, possibly before the last lines were read.
	outR, outW, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("stdio: %w", err)
	}
	cmd.Stdout = outW
	if err := cmd.Start(); err != nil {
		outR.Close()
		outW.Close()
		return nil, fmt.Errorf("stdio: start %s: %w", t.Command, err)
	}
	outW.Close()

	grace := t.GracePeriod
	if grace <= 0 {
		grace = DefaultGracePeriod
	}
	exited := make(chan struct{})
	var waitErr error
	go func() {
		waitErr = cmd.Wait()
		// What the child started and left behind ends with it.
		child.End(cmd, grace)
		close(exited)
	}()

	clk := clock.Or(t.Clock)
	c := newClientConn(outR, stdin, t.MaxLine)
	c.revision = t.Revision
	var killed bool
	var mu sync.Mutex
	c.eof = func(readErr error) error {
		// The output ended: the child exited or is about to.
		<-exited
		mu.Lock()
		k := killed
		mu.Unlock()
		if k {
			return ErrClosed
		}
		return exitError(t.Command, waitErr, tail.Last(), readErr)
	}
	c.onClose = func() error {
		stdin.Close()
		timer := clock.NewTimer(clk, grace)
		defer timer.Stop()
		select {
		case <-exited:
		case <-timer.C():
			mu.Lock()
			killed = true
			mu.Unlock()
			// Asked to end, then killed, with every process it started.
			_ = child.Terminate(cmd)
			timer.Reset(grace)
			select {
			case <-exited:
			case <-timer.C():
				_ = child.Kill(cmd)
				<-exited
			}
		}
		outR.Close()
		mu.Lock()
		k := killed
		mu.Unlock()
		if k || waitErr == nil {
			return nil
		}
		return exitError(t.Command, waitErr, tail.Last(), nil)
	}
	c.start()
	return c, nil
}

// exitError describes the end of the server process.
func exitError(command string, waitErr error, stderr string, readErr error) error {
	var b strings.Builder
	fmt.Fprintf(&b, "stdio: server %s exited", command)
	if readErr != nil && !errors.Is(readErr, io.EOF) {
		fmt.Fprintf(&b, " (reading its output: %v)", readErr)
	}
	if stderr != "" {
		fmt.Fprintf(&b, "; its last stderr line: %q", stderr)
	}
	if waitErr == nil {
		return errors.New(b.String() + ": exit status 0")
	}
	return fmt.Errorf("%s: %w", b.String(), waitErr)
}
