package sim

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os/exec"
	"strings"
	"sync"

	"github.com/tasksim/tasksim/mcp"
	"github.com/tasksim/tasksim/mcp/stdio"
	"github.com/tasksim/tasksim/recorder"
)

// stdioConn runs the target command once per recorded connection (a
// stdio server serves one session), sends the script's messages to its
// stdin and gathers what it writes on the connection's channel; a
// recorder.Conn records both ways, as tasksim check records a stdio
// server.
type stdioConn struct {
	ctx     context.Context
	command []string
	stderr  io.Writer
	pipe    *recorder.Pipeline
	ids     *idMap
	mu      sync.Mutex
	conns   map[uint64]*stdioChild
	wg      sync.WaitGroup
}

type stdioChild struct {
	conn mcp.Conn
	out  *liveChan
}

func startStdio(ctx context.Context, command []string, stderr io.Writer, p *recorder.Pipeline, ids *idMap) (*stdioConn, error) {
	if len(command) == 0 {
		return nil, fmt.Errorf("%w: no command", ErrUnreachable)
	}
	if _, err := exec.LookPath(command[0]); err != nil {
		return nil, fmt.Errorf("%w %s: %v", ErrUnreachable, command[0], err)
	}
	if stderr == nil {
		stderr = io.Discard
	}
	return &stdioConn{ctx: ctx, command: command, stderr: stderr, pipe: p, ids: ids, conns: map[uint64]*stdioChild{}}, nil
}

func (c *stdioConn) channel(ch uint64) *liveChan {
	c.mu.Lock()
	defer c.mu.Unlock()
	if k := c.conns[ch]; k != nil {
		return k.out
	}
	return nil
}

// child returns the server process of recorded connection ch, started on
// first use.
func (c *stdioConn) child(ctx context.Context, ch uint64) (*stdioChild, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if k := c.conns[ch]; k != nil {
		return k, nil
	}
	t := &stdio.CommandTransport{Command: c.command[0], Args: c.command[1:], Stderr: c.stderr}
	inner, err := t.Connect(ctx)
	if err != nil {
		return nil, fmt.Errorf("%w %s: %v", ErrUnreachable, c.command[0], err)
	}
	k := &stdioChild{conn: recorder.Conn(inner, c.pipe, &recorder.ConnOptions{ID: uint64(len(c.conns) + 1), Note: strings.Join(c.command, " ")}), out: newLiveChan()}
	k.out.cancel = func() { k.conn.Close() }
	c.conns[ch] = k
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		for {
			m, err := k.conn.Read(c.ctx)
			if err != nil {
				k.out.end(nil)
				return
			}
			b, err := json.Marshal(m)
			if err != nil {
				k.out.end(err)
				return
			}
			k.out.push(liveItem{data: b})
		}
	}()
	return k, nil
}

func (c *stdioConn) send(ctx context.Context, st step) error {
	k, err := c.child(ctx, st.ch)
	if err != nil {
		return err
	}
	m, err := mcp.DecodeMessage(c.ids.rewriteTasks(st.body))
	if err != nil {
		return fmt.Errorf("record %d: not a JSON-RPC message: %w", st.rec.Index, err)
	}
	if err := k.conn.Write(ctx, m); err != nil {
		// The server is gone: what it did not answer is the divergence.
		k.out.end(err)
	}
	return nil
}

// close ends every server's stdin and waits for them to exit.
func (c *stdioConn) close() {
	c.mu.Lock()
	for _, k := range c.conns {
		k.conn.Close()
	}
	c.mu.Unlock()
	c.wg.Wait()
}
