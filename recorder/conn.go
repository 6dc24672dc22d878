package recorder

import (
	"context"
	"sync"

	"github.com/tasksim/tasksim/mcp"
	rev "github.com/tasksim/tasksim/mcp/rev20260728"
	"github.com/tasksim/tasksim/traces"
)

// DefaultConnStream is the stream name of a Conn decorator's records.
const DefaultConnStream = "conn"

// ConnOptions configure a Conn decorator. The zero value (or nil) gives
// every default.
type ConnOptions struct {
	// ID is the connection id of its records; 0 means 1.
	ID uint64
	// Stream names the stream of its records; "" means DefaultConnStream.
	// Both directions share it, told apart by Dir.
	Stream string
	// Side is where the decorator observes, when a fault layer sits
	// between client and server: traces.SideClient between the client and
	// the fault layer, traces.SideServer between the fault layer and the
	// transport. The default, traces.SideWire, is for a run without one.
	Side traces.Side
	// Note is the conn-open record's note, such as the peer ("in-process
	// reference server").
	Note string
}

// Conn returns an mcp.Conn that behaves as inner and records into p what
// passes, one record per message, as the HTTP and stdio recorders do:
//
//	conn-open   -    when Conn is called (note: ConnOptions.Note)
//	message     c>s  each message written, recorded before it is passed on,
//	                 so that no answer is recorded before its request
//	message     s>c  each message read, recorded when inner returned it
//	conn-error  -    a Read or Write that failed (note: "read: <error>"),
//	                 unless the caller's ctx ended it; after the connection
//	                 is closed, only the first
//	conn-close  -    Close (a conn-error if inner's Close failed)
//
// A message record's Raw is the message's JSON; its RPC fields (type,
// method, id, task id, status, seqNr, seq, isComplete, error code) are
// traces.DescribeMessage's, filled in by the trace writer; its Revision
// is the MCP revision the message belongs to (a request's claim, else the
// revision of the request an answer answers, else the connection's, which
// inner reports when it knows it, mcp.RevisionOfConn:
// docs/trace-format.md, "Revisions"). Its time is
// the pipeline's clock when the message passed. Every record has the
// connection id, stream and side of opts.
//
// The decorator is built on mcp.Decorate: it unwraps to inner, so
// mcp.ConnAs finds inner's optional interfaces through it. It follows the
// concurrency rules of mcp.Conn; the pipeline keeps concurrent writes in
// the order they were recorded. The pipeline remembers each message's
// record index for Pipeline.IndexOf.
func Conn(inner mcp.Conn, p *Pipeline, opts *ConnOptions) mcp.Conn {
	rc := &recConn{p: p}
	if opts != nil {
		rc.opts = *opts
	}
	if rc.opts.ID == 0 {
		rc.opts.ID = 1
	}
	if rc.opts.Stream == "" {
		rc.opts.Stream = DefaultConnStream
	}
	rc.eras.Conn = mcp.RevisionOfConn(inner)
	rc.add(traces.Record{Kind: traces.KindConnOpen, Note: rc.opts.Note}, nil)
	return mcp.Decorate(inner, mcp.ConnFuncs{Read: rc.read, Write: rc.write, Close: rc.close})
}

type recConn struct {
	p    *Pipeline
	opts ConnOptions

	eras rev.Eras // the revision of each message

	mu     sync.Mutex
	closed bool // Close was called
	failed bool // an error was recorded after Close
}

func (c *recConn) add(r traces.Record, msg *mcp.Message) {
	r.Conn, r.Side = c.opts.ID, c.opts.Side
	if r.Kind == traces.KindMessage {
		r.Stream = c.opts.Stream
	}
	if r.Wall.IsZero() {
		r.Wall = c.p.clock.Now()
	}
	c.p.add(r, msg)
}

func (c *recConn) message(msg *mcp.Message, dir traces.Direction) {
	raw, err := msg.AppendJSON(nil)
	if err != nil {
		// Not encodable: the transport fails on it too; keep what is known.
		c.add(traces.Record{Stream: c.opts.Stream, Dir: dir, Kind: traces.KindAnnotation, Note: "message not encodable: " + err.Error()}, nil)
		return
	}
	r := traces.Record{Dir: dir, Kind: traces.KindMessage, Raw: raw, Revision: string(c.eras.FromMessage(dir == traces.DirClientToServer, msg))}
	c.add(r, msg)
}

// failure records a failed Read or Write, unless ctx ended it or the
// connection is closed and one was recorded already.
func (c *recConn) failure(ctx context.Context, op string, err error) {
	if ctx.Err() != nil {
		return // the caller gave up: not part of the conversation
	}
	c.mu.Lock()
	skip := c.closed && c.failed
	if c.closed {
		c.failed = true
	}
	c.mu.Unlock()
	if !skip {
		c.add(traces.Record{Stream: c.opts.Stream, Kind: traces.KindConnError, Note: op + ": " + err.Error(), End: traces.EndError}, nil)
	}
}

func (c *recConn) read(ctx context.Context, inner mcp.Conn) (*mcp.Message, error) {
	msg, err := inner.Read(ctx)
	if err != nil {
		c.failure(ctx, "read", err)
		return nil, err
	}
	c.message(msg, traces.DirServerToClient)
	return msg, nil
}

func (c *recConn) write(ctx context.Context, inner mcp.Conn, msg *mcp.Message) error {
	c.message(msg, traces.DirClientToServer)
	if err := inner.Write(ctx, msg); err != nil {
		c.failure(ctx, "write", err)
		return err
	}
	return nil
}

func (c *recConn) close(inner mcp.Conn) error {
	err := inner.Close()
	c.mu.Lock()
	first := !c.closed
	c.closed = true
	c.mu.Unlock()
	if first {
		if err != nil {
			c.add(traces.Record{Kind: traces.KindConnError, Note: "close: " + err.Error(), End: traces.EndError}, nil)
		} else {
			c.add(traces.Record{Kind: traces.KindConnClose, End: traces.EndEOF}, nil)
		}
	}
	return err
}
