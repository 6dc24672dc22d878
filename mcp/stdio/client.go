package stdio

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"sync/atomic"

	"github.com/tasksim/tasksim/mcp"
)

// IOTransport is the client side of the stdio transport over a reader and
// a writer that are already connected to a server: the server's output and
// input. Tests use it with pipes to an in-process Serve; CommandTransport
// uses it with a child process.
//
//	Write ──line──▶ Writer (server's stdin)
//	Read  ◀─line─── Reader (server's stdout)
type IOTransport struct {
	// Reader is the server's output; closed on Close if it is an
	// io.Closer.
	Reader io.Reader
	// Writer is the server's input; closed on Close.
	Writer io.WriteCloser
	// MaxLine caps one message line in bytes; 0 means DefaultMaxLine.
	MaxLine int
	// Revision is the protocol revision the client speaks over the
	// connection, reported by the Conn (mcp.RevisionOfConn) to the layers
	// that record or fault it. The transport carries the lines of either
	// era alike; the zero value says nothing, and each message then says
	// its own (a dual-era server tells them apart the same way). An
	// unknown revision is an error of Connect.
	Revision mcp.Revision
}

// Connect implements mcp.Transport. It may be called once.
func (t *IOTransport) Connect(ctx context.Context) (mcp.Conn, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if t.Reader == nil || t.Writer == nil {
		return nil, errors.New("stdio: IOTransport needs a Reader and a Writer")
	}
	if err := checkRevision(t.Revision); err != nil {
		return nil, err
	}
	c := newClientConn(t.Reader, t.Writer, t.MaxLine)
	c.revision = t.Revision
	c.onClose = func() error {
		err := t.Writer.Close()
		if rc, ok := t.Reader.(io.Closer); ok {
			rc.Close()
		}
		return err
	}
	c.start()
	return c, nil
}

// checkRevision accepts the zero revision and the known ones.
func checkRevision(r mcp.Revision) error {
	if r != "" && !r.IsKnown() {
		return fmt.Errorf("stdio: %w %q", mcp.ErrUnknownRevision, r)
	}
	return nil
}

// ErrClosed is returned by Read and Write after Close.
var ErrClosed = mcp.ErrClosed

// LineError is returned by Read for a line of the server's output that is
// not a JSON-RPC message (2025-11-25 Transports, "stdio": the server MUST
// NOT write anything else to its stdout). It concerns that line only:
// Read goes on with the next one.
type LineError struct {
	// Line is the offending line, cut to 200 bytes.
	Line string
	Err  error
}

func (e *LineError) Error() string {
	return fmt.Sprintf("stdio: the server wrote a line that is not a JSON-RPC message: %q: %v", e.Line, e.Err)
}

func (e *LineError) Unwrap() error { return e.Err }

// clientConn is a client's NDJSON connection. Read is fed by one goroutine
// that reads lines; Write writes whole lines, one at a time.
type clientConn struct {
	lines *lineReader
	w     io.Writer
	in    chan clientItem
	// closed is closed by Close; readEnd when the read goroutine is done.
	closed  chan struct{}
	readEnd chan struct{}
	// endErr is the error Read returns once the output ended; set before
	// readEnd is closed.
	endErr error
	// eof turns the end of the server's output into Read's final error;
	// nil means a plain "closed its output" error.
	eof     func(error) error
	onClose func() error
	wsem    chan struct{} // one writer at a time, with a ctx
	// revision is the revision the client said it speaks; zero: unsaid.
	revision mcp.Revision
	once     sync.Once
	buf      []byte

	msgsIn, msgsOut, bytesIn, bytesOut atomic.Int64
}

type clientItem struct {
	msg *mcp.Message
	err error
}

func newClientConn(r io.Reader, w io.Writer, maxLine int) *clientConn {
	if maxLine <= 0 {
		maxLine = DefaultMaxLine
	}
	return &clientConn{
		lines:   newLineReader(r, maxLine),
		w:       w,
		in:      make(chan clientItem, 64),
		closed:  make(chan struct{}),
		readEnd: make(chan struct{}),
		wsem:    make(chan struct{}, 1),
	}
}

func (c *clientConn) start() { go c.readLoop() }

// readLoop turns lines into messages until the output ends.
func (c *clientConn) readLoop() {
	defer close(c.readEnd)
	for {
		line, err := c.lines.next()
		if err != nil {
			if c.eof != nil {
				c.endErr = c.eof(err)
			} else if errors.Is(err, io.EOF) {
				c.endErr = errors.New("stdio: the server closed its output")
			} else {
				c.endErr = fmt.Errorf("stdio: read: %w", err)
			}
			return
		}
		if lineError(line) != nil {
			c.bytesIn.Add(int64(c.lines.max))
			if !c.push(clientItem{err: &LineError{Line: "(cut)", Err: fmt.Errorf("longer than %d bytes", c.lines.max)}}) {
				return
			}
			continue
		}
		c.bytesIn.Add(int64(len(line) + 1))
		if len(trimSpace(line)) == 0 {
			continue
		}
		msg, err := mcp.DecodeMessage(line)
		it := clientItem{msg: msg}
		if err != nil {
			shown := string(line)
			if len(shown) > 200 {
				shown = shown[:200] + "…"
			}
			it = clientItem{err: &LineError{Line: shown, Err: err}}
		} else {
			c.msgsIn.Add(1)
		}
		if !c.push(it) {
			return
		}
	}
}

func trimSpace(b []byte) []byte {
	for len(b) > 0 && (b[0] == ' ' || b[0] == '\t' || b[0] == '\r') {
		b = b[1:]
	}
	for len(b) > 0 && (b[len(b)-1] == ' ' || b[len(b)-1] == '\t' || b[len(b)-1] == '\r') {
		b = b[:len(b)-1]
	}
	return b
}

func (c *clientConn) push(it clientItem) bool {
	select {
	case c.in <- it:
		return true
	case <-c.closed:
		return false
	}
}

// Read implements mcp.Conn. It returns the messages in the order the
// server wrote them, a *LineError for a line that is not one, and, once
// the server's output ended, the same final error on every call: for a
// child process, its exit status.
func (c *clientConn) Read(ctx context.Context) (*mcp.Message, error) {
	select {
	case <-c.closed:
		return nil, ErrClosed
	default:
	}
	select {
	case it := <-c.in:
		return it.msg, it.err
	case <-c.closed:
		return nil, ErrClosed
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-c.readEnd:
	}
	// The output ended: what was queued before still comes first.
	select {
	case <-c.closed:
		return nil, ErrClosed
	case it := <-c.in:
		return it.msg, it.err
	default:
		return nil, c.endErr
	}
}

// Write implements mcp.Conn: the message on one line. Writes do not
// interleave. A write the server does not take (it stopped reading) is
// abandoned when ctx ends; Close unblocks it.
func (c *clientConn) Write(ctx context.Context, msg *mcp.Message) error {
	select {
	case c.wsem <- struct{}{}:
	case <-c.closed:
		return ErrClosed
	case <-ctx.Done():
		return ctx.Err()
	}
	b, err := msg.AppendJSON(c.buf[:0])
	if err != nil {
		<-c.wsem
		return fmt.Errorf("stdio: encode: %w", err)
	}
	b = append(b, '\n')
	done := make(chan error, 1)
	go func() {
		_, err := c.w.Write(b)
		if cap(b) <= 64<<10 {
			c.buf = b[:0]
		}
		<-c.wsem
		done <- err
	}()
	select {
	case err := <-done:
		if err != nil {
			select {
			case <-c.closed:
				return ErrClosed
			default:
			}
			return fmt.Errorf("stdio: write: %w", err)
		}
		c.msgsOut.Add(1)
		c.bytesOut.Add(int64(len(b)))
		return nil
	case <-ctx.Done():
		return ctx.Err()
	case <-c.closed:
		return ErrClosed
	}
}

// Stats implements Stats.
func (c *clientConn) Stats() mcp.WireStats {
	return mcp.WireStats{
		MessagesSent:     c.msgsOut.Load(),
		MessagesReceived: c.msgsIn.Load(),
		BytesSent:        c.bytesOut.Load(),
		BytesReceived:    c.bytesIn.Load(),
	}
}

// Revision implements mcp.RevisionReporter: what the transport was told
// (IOTransport.Revision, CommandTransport.Revision); zero when it was not.
func (c *clientConn) Revision() mcp.Revision { return c.revision }

// Close implements mcp.Conn. It is idempotent; a pending Read returns
// ErrClosed.
func (c *clientConn) Close() error {
	var err error
	c.once.Do(func() {
		close(c.closed)
		if c.onClose != nil {
			err = c.onClose()
		}
	})
	return err
}
