package replay

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/tasksim/tasksim/mcp"
	"github.com/tasksim/tasksim/mcp/stdio"
	"github.com/tasksim/tasksim/recorder"
	"github.com/tasksim/tasksim/traces"
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
	// answered says some server process wrote a message.
	answered atomic.Bool
}

// stdioChild is one server process. What it writes is one stream, but
// the order of its responses and notifications depends on timing (a
// status notification and a tasks/result answer race), so it is split:
// each response goes to the queue of its request id, each notification
// or request to the queue of its method, and a recorded message is
// matched in order within its queue.
type stdioChild struct {
	conn mcp.Conn
	mu   sync.Mutex
	subs map[string]*liveChan
	done bool
	err  error
}

// stdioKey names the queue of a message: "id 3" for a response, the
// method otherwise.
func stdioKey(raw []byte) string {
	rpc := traces.DescribeMessage(raw)
	switch {
	case rpc == nil:
		return "?"
	case rpc.Type == "response":
		return "id " + rpc.ID
	}
	return rpc.Method
}

// sub returns the queue named key, made on first use (by the reader or
// the script, whichever comes first).
func (k *stdioChild) sub(key string) *liveChan {
	k.mu.Lock()
	defer k.mu.Unlock()
	lc := k.subs[key]
	if lc == nil {
		lc = newLiveChan()
		lc.cancel = func() { k.conn.Close() }
		if k.done {
			lc.ended, lc.endErr = true, k.err
		}
		k.subs[key] = lc
	}
	return lc
}

// end ends every queue, and those made later.
func (k *stdioChild) end(err error) {
	k.mu.Lock()
	k.done, k.err = true, err
	subs := make([]*liveChan, 0, len(k.subs))
	for _, lc := range k.subs {
		subs = append(subs, lc)
	}
	k.mu.Unlock()
	for _, lc := range subs {
		lc.end(err)
	}
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

func (c *stdioConn) channel(st step) *liveChan {
	c.mu.Lock()
	k := c.conns[st.ch]
	c.mu.Unlock()
	if k == nil {
		return nil
	}
	return k.sub(stdioKey(st.rec.Raw))
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
	k := &stdioChild{conn: recorder.Conn(inner, c.pipe, &recorder.ConnOptions{ID: uint64(len(c.conns) + 1), Note: strings.Join(c.command, " ")}), subs: map[string]*liveChan{}}
	c.conns[ch] = k
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		for {
			m, err := k.conn.Read(c.ctx)
			if err != nil {
				k.end(nil)
				return
			}
			b, err := json.Marshal(m)
			if err != nil {
				k.end(err)
				return
			}
			c.answered.Store(true)
			k.sub(stdioKey(b)).push(liveItem{data: b})
		}
	}()
	return k, nil
}

func (c *stdioConn) send(ctx context.Context, st step) error {
	k, err := c.child(ctx, st.ch)
	if err != nil {
		return err
	}
	m, err := mcp.DecodeMessage(c.ids.rewriteRequest(st.body))
	if err != nil {
		return fmt.Errorf("record %d: not a JSON-RPC message: %w", st.rec.Index, err)
	}
	if err := k.conn.Write(ctx, m); err != nil {
		// The server is gone: what it did not answer is the divergence.
		k.end(err)
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
