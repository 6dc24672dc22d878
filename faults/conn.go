package faults

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/tasksim/tasksim/clock"
	"github.com/tasksim/tasksim/mcp"
	rev "github.com/tasksim/tasksim/mcp/rev20260728"
	"github.com/tasksim/tasksim/traces"
)

// ConnOptions configure the Conn decorator. Zero values are documented
// defaults.
type ConnOptions struct {
	// Clock times delays; nil is the wall clock.
	Clock clock.Clock
	// Restart makes the server lose its state (server-restart); nil
	// ignores the fault.
	Restart func()
	// Advance moves the simulated clock (ttl-expiry:advance=D); nil
	// ignores the fault.
	Advance func(time.Duration)
	// Split, when set, names the logical stream a message belongs to
	// (a request id, a task), and messages are numbered within it: their
	// stream is "stdout:<name>" or "stdin:<name>". A Conn over Streamable
	// HTTP merges several HTTP streams in an order that is the
	// scheduler's; numbered within a logical stream, a message keeps its
	// identity, hence its fault decisions, from run to run. nil numbers
	// every message of a direction in one stream ("stdout", "stdin").
	Split func(dir traces.Direction, rpc *traces.RPCFields) string
}

// ErrCut is the error a Conn gives after a disconnect fault cut it.
var ErrCut = fmt.Errorf("cut by a disconnect fault: %w", mcp.ErrClosed)

// Conn returns inner with set's faults applied to every message: messages
// the client writes form stream "stdin", messages it reads "stdout",
// numbered from 1 in the order they pass. An in-process Conn knows no SSE
// events or HTTP requests: drop-sse-event acts on messages from the server
// (each stood in an event), http-status never fires.
func Conn(inner mcp.Conn, set *Set, opts *ConnOptions) mcp.Conn {
	c := &faultConn{inner: inner, set: set, stalled: make(chan struct{})}
	if opts != nil {
		c.opts = *opts
	}
	c.opts.Clock = clock.Or(c.opts.Clock)
	c.eras.Conn = mcp.RevisionOfConn(inner)
	return mcp.Decorate(inner, mcp.ConnFuncs{Read: c.read, Write: c.write, Close: c.close})
}

type faultConn struct {
	inner mcp.Conn
	set   *Set
	opts  ConnOptions
	eras  rev.Eras // the revision of each message (Msg.Revision)

	// Read side: one reader at a time.
	nRead    int
	nKey     map[string]int // per logical stream, both directions; under mu
	queue    []*mcp.Message
	heldRead *mcp.Message
	cutRead  bool

	mu        sync.Mutex
	nWrite    int
	heldWrite *mcp.Message
	cut       bool
	closeOnce sync.Once
	stalled   chan struct{} // closed on Close: ends stalls and delays
}

// effects applies the side effects of a message's decisions (delays, clock
// advances, restarts, rewrites) and returns the verb that decides its fate.
func (c *faultConn) effects(ctx context.Context, msg *mcp.Message, acts []Applied) (*mcp.Message, Verb, error) {
	fate := Pass
	for _, a := range acts {
		switch v := a.Action.Verb; v {
		case Delay:
			if err := c.sleep(ctx, a.Action.Delay); err != nil {
				return nil, Pass, err
			}
		case Advance:
			if c.opts.Advance != nil {
				c.opts.Advance(a.Action.Delay)
			}
		case Restart:
			if c.opts.Restart != nil {
				c.opts.Restart()
			}
		case Rewrite:
			if m, err := mcp.DecodeMessage(a.Action.Raw); err == nil {
				msg = m
			}
		default:
			if rank(v) > rank(fate) {
				fate = v
			}
		}
	}
	return msg, fate, nil
}

// sleep waits for a delay, or until ctx is done or the Conn is closed:
// Close ends a delayed read or write at once, with mcp.ErrClosed, as it
// ends a stall.
func (c *faultConn) sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := clock.NewTimer(c.opts.Clock, d)
	defer t.Stop()
	select {
	case <-t.C():
		return nil
	case <-ctx.Done():
		return ctx.Err()
	case <-c.stalled:
		return mcp.ErrClosed
	}
}

// rank orders the verbs that decide a message's fate when several faults
// act on it: the one that delivers least wins.
func rank(v Verb) int {
	switch v {
	case Status:
		return 8
	case Stall:
		return 7
	case CutBefore, CutMid:
		return 6
	case Drop:
		return 5
	case Hold:
		return 4
	case CutAfter:
		return 3
	case Duplicate:
		return 2
	}
	return 0
}

func (c *faultConn) read(ctx context.Context, inner mcp.Conn) (*mcp.Message, error) {
	for {
		if len(c.queue) > 0 {
			m := c.queue[0]
			c.queue = c.queue[1:]
			return m, nil
		}
		if c.cutRead {
			c.cutNow()
			return nil, ErrCut
		}
		msg, err := inner.Read(ctx)
		if err != nil {
			if c.heldRead != nil { // the stream ended: the held message goes last
				m := c.heldRead
				c.heldRead = nil
				return m, nil
			}
			return nil, err
		}
		c.nRead++
		raw, err := msg.MarshalJSON()
		if err != nil {
			return msg, nil
		}
		acts := c.set.Decide(c.msg(StreamStdout, c.nRead, traces.DirServerToClient, msg, raw))
		msg, fate, err := c.effects(ctx, msg, acts)
		if err != nil {
			return nil, err
		}
		switch fate {
		case Stall:
			select {
			case <-ctx.Done():
				return nil, ctx.Err()
			case <-c.stalled:
				return nil, mcp.ErrClosed
			}
		case CutBefore, CutMid:
			c.cutNow()
			return nil, ErrCut
		case Drop:
			continue
		case Hold:
			if c.heldRead == nil {
				c.heldRead = msg
				continue
			}
		case Duplicate:
			c.queue = append(c.queue, msg)
		case CutAfter:
			c.cutRead = true
		}
		if c.heldRead != nil {
			c.queue = append(c.queue, c.heldRead)
			c.heldRead = nil
		}
		return msg, nil
	}
}

func (c *faultConn) write(ctx context.Context, inner mcp.Conn, msg *mcp.Message) error {
	raw, err := msg.MarshalJSON()
	if err != nil {
		return inner.Write(ctx, msg)
	}
	c.mu.Lock()
	if c.cut {
		c.mu.Unlock()
		return ErrCut
	}
	c.nWrite++
	n := c.nWrite
	c.mu.Unlock()
	acts := c.set.Decide(c.msg(StreamStdin, n, traces.DirClientToServer, msg, raw))
	msg, fate, err := c.effects(ctx, msg, acts)
	if err != nil {
		return err
	}
	var out []*mcp.Message
	switch fate {
	case CutBefore, CutMid:
		c.cutNow()
		return ErrCut
	case Drop, Stall:
		return nil // lost on the way: the writer cannot tell
	case Hold:
		c.mu.Lock()
		if c.heldWrite == nil {
			c.heldWrite = msg
			c.mu.Unlock()
			return nil
		}
		c.mu.Unlock()
		out = append(out, msg)
	case Duplicate:
		out = append(out, msg, msg)
	default:
		out = append(out, msg)
	}
	c.mu.Lock()
	if c.heldWrite != nil {
		out = append(out, c.heldWrite)
		c.heldWrite = nil
	}
	c.mu.Unlock()
	for _, m := range out {
		if err := inner.Write(ctx, m); err != nil {
			return err
		}
	}
	if fate == CutAfter {
		c.cutNow()
	}
	return nil
}

// msg describes msg, raw its JSON, a message of stream kind (StreamStdin,
// StreamStdout) at position n of its direction, or of its logical stream
// with Split.
func (c *faultConn) msg(kind string, n int, dir traces.Direction, msg *mcp.Message, raw []byte) *Msg {
	m := NewMsg(PlaceConn, kind, kind, n, dir, raw)
	m.Revision = c.eras.FromMessage(dir == traces.DirClientToServer, msg)
	if c.opts.Split == nil {
		return m
	}
	key := kind + ":" + c.opts.Split(dir, m.RPC)
	c.mu.Lock()
	if c.nKey == nil {
		c.nKey = map[string]int{}
	}
	c.nKey[key]++
	m.N = c.nKey[key]
	c.mu.Unlock()
	m.StreamID = key
	return m
}

func (c *faultConn) cutNow() {
	c.mu.Lock()
	c.cut = true
	c.mu.Unlock()
	_ = c.close(c.inner)
}

func (c *faultConn) close(inner mcp.Conn) error {
	var err error
	c.closeOnce.Do(func() {
		close(c.stalled)
		err = inner.Close()
	})
	return err
}
