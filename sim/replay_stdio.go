package sim

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"os/exec"
	"sync"
	"time"

	"github.com/tasksim/tasksim/recorder"
)

// stdioConn runs the target command, sends the script's lines to its
// stdin and gathers its stdout lines on channel 0, recording both.
type stdioConn struct {
	in     *io.PipeWriter
	out    *liveChan
	cancel context.CancelFunc
	done   chan struct{}
	runErr error
	ids    *idMap
	mu     sync.Mutex
}

func startStdio(ctx context.Context, command []string, stderr io.Writer, p *recorder.Pipeline, ids *idMap) (*stdioConn, error) {
	if len(command) == 0 {
		return nil, fmt.Errorf("%w: no command", ErrUnreachable)
	}
	path, err := exec.LookPath(command[0])
	if err != nil {
		return nil, fmt.Errorf("%w %s: %v", ErrUnreachable, command[0], err)
	}
	if stderr == nil {
		stderr = io.Discard
	}
	cctx, cancel := context.WithCancel(ctx)
	cmd := exec.Command(path, command[1:]...)
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	c := &stdioConn{in: inW, out: newLiveChan(), cancel: cancel, done: make(chan struct{}), ids: ids}
	go func() {
		defer close(c.done)
		_, c.runErr = recorder.RunStdioPipeline(cctx, cmd, inR, outW, stderr, p)
		outW.Close()
		inR.Close()
	}()
	go func() {
		sc := bufio.NewScanner(outR)
		sc.Buffer(make([]byte, 64<<10), 64<<20)
		for sc.Scan() {
			line := bytes.TrimRight(sc.Bytes(), "\r")
			c.out.push(liveItem{data: bytes.Clone(line)})
		}
		c.out.end(sc.Err())
		io.Copy(io.Discard, outR)
	}()
	return c, nil
}

func (c *stdioConn) channel(uint64) *liveChan { return c.out }

func (c *stdioConn) send(_ context.Context, st step) error {
	line := append(c.ids.rewriteTasks(bytes.Clone(st.body)), '\n')
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, err := c.in.Write(line); err != nil {
		return fmt.Errorf("stdin of the server: %w", err)
	}
	return nil
}

// close ends the server's stdin and waits for it to exit; one that does
// not within grace is stopped.
func (c *stdioConn) close(grace time.Duration) error {
	c.in.Close()
	t := time.NewTimer(grace)
	defer t.Stop()
	select {
	case <-c.done:
	case <-t.C:
		c.cancel()
		<-c.done
	}
	c.cancel()
	return c.runErr
}
