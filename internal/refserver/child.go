package refserver

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"time"
)

// readyFD is the child's file descriptor of the ready pipe: the first of
// exec.Cmd.ExtraFiles.
const readyFD = 3

// stopTimeout is how long Stop waits for a child to exit after the
// interrupt before it kills it.
const stopTimeout = 5 * time.Second

// tailLines is how many of a child's last stderr lines are kept for error
// messages.
const tailLines = 10

// ChildOptions say how to run the tasksim binary's serve command.
type ChildOptions struct {
	// Args are more flags of tasksim serve, after --addr 127.0.0.1:0 (so
	// an --addr here replaces it); --ready-fd is the harness's.
	Args []string
	// Env is the child's environment; nil means this process's.
	Env []string
	// Stderr, when set, receives a copy of the child's stderr (its log).
	Stderr io.Writer
}

// Child is tasksim serve running as a child process.
type Child struct {
	// URL is the endpoint the child reported once it listened.
	URL string
	// Pid is the child's process id.
	Pid int

	cmd  *exec.Cmd
	mu   sync.Mutex
	tail []string
	// logDone is closed when the child's stderr is read to its end; only
	// then may the child be waited for (os/exec: Wait closes the pipe).
	logDone  chan struct{}
	exited   chan struct{}
	stopOnce sync.Once
}

// StartChild runs exe (the tasksim binary) as `exe serve --addr
// 127.0.0.1:0 ARGS... --ready-fd 3` and returns once the child has written
// its URL on the ready pipe, that is, once it listens. If the child exits
// first, the error says so with its last lines of stderr. ctx bounds the
// start only: a child that has started runs until Stop.
func StartChild(ctx context.Context, exe string, o *ChildOptions) (*Child, error) {
	if o == nil {
		o = &ChildOptions{}
	}
	args := append([]string{"serve", "--addr", DefaultAddr}, o.Args...)
	args = append(args, "--ready-fd", fmt.Sprint(readyFD))
	cmd := exec.Command(exe, args...)
	cmd.Env = o.Env
	readyR, readyW, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("start the reference server: %w", err)
	}
	defer readyR.Close()
	cmd.ExtraFiles = []*os.File{readyW} // fd 3 in the child
	stderr, err := cmd.StderrPipe()
	if err != nil {
		readyW.Close()
		return nil, fmt.Errorf("start the reference server: %w", err)
	}
	err = cmd.Start()
	// The child holds its own copy of the write end: once this one is
	// closed, the pipe ends (EOF) when the child writes its line and
	// closes it, or exits.
	readyW.Close()
	if err != nil {
		return nil, fmt.Errorf("start the reference server (%s serve): %w", exe, err)
	}
	c := &Child{Pid: cmd.Process.Pid, cmd: cmd, logDone: make(chan struct{}), exited: make(chan struct{})}
	go c.readLog(stderr, o.Stderr)
	go func() { <-c.logDone; _ = cmd.Wait(); close(c.exited) }()

	type ready struct {
		line string
		err  error
	}
	got := make(chan ready, 1)
	go func() {
		line, err := bufio.NewReader(readyR).ReadString('\n')
		got <- ready{line, err}
	}()
	select {
	case r := <-got:
		url := strings.TrimSpace(r.line)
		if r.err == nil && strings.HasPrefix(url, "http://") {
			c.URL = url
			return c, nil
		}
		// The pipe ended without a URL: the child failed to listen.
		<-c.exited
		return nil, fmt.Errorf("the reference server (%s serve) exited before listening (%v): %s", exe, c.cmd.ProcessState, c.lastLines())
	case <-ctx.Done():
		c.Stop()
		readyR.Close() // ends the reader goroutine
		return nil, fmt.Errorf("the reference server (%s serve) did not report its URL: %w", exe, ctx.Err())
	}
}

// readLog reads the child's stderr to its end, keeping the last lines and
// copying them to w.
func (c *Child) readLog(r io.Reader, w io.Writer) {
	defer close(c.logDone)
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		line := sc.Text()
		if w != nil {
			fmt.Fprintln(w, line)
		}
		c.mu.Lock()
		c.tail = append(c.tail, line)
		if len(c.tail) > tailLines {
			c.tail = c.tail[1:]
		}
		c.mu.Unlock()
	}
	_, _ = io.Copy(io.Discard, r)
}

func (c *Child) lastLines() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.tail) == 0 {
		return "no output"
	}
	return strings.Join(c.tail, " | ")
}

// Exited is closed once the child has exited and been waited for.
func (c *Child) Exited() <-chan struct{} { return c.exited }

// Stop interrupts the child (tasksim serve then shuts down cleanly) and
// waits for it, killing it after 5 s. It is safe to call more than once.
func (c *Child) Stop() {
	c.stopOnce.Do(func() {
		if err := c.cmd.Process.Signal(os.Interrupt); err != nil && !errors.Is(err, os.ErrProcessDone) {
			_ = c.cmd.Process.Kill()
		}
		t := time.NewTimer(stopTimeout)
		defer t.Stop()
		select {
		case <-c.exited:
		case <-t.C:
			_ = c.cmd.Process.Kill()
			<-c.exited
		}
	})
}

// ProcessState is the child's exit state once it has exited, else nil.
func (c *Child) ProcessState() *os.ProcessState {
	select {
	case <-c.exited:
		return c.cmd.ProcessState
	default:
		return nil
	}
}
