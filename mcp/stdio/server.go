package stdio

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"

	"github.com/tasksim/tasksim/mcp"
)

// DefaultMaxLine is the longest message line a server accepts.
const DefaultMaxLine = 16 << 20

// ServerOptions configure Serve. The zero value is usable.
type ServerOptions struct {
	// MaxLine caps one message line in bytes; default DefaultMaxLine. A
	// longer line is answered with -32600 and skipped.
	MaxLine int
	// Logger receives transport logs (never written to the message
	// stream); nil discards them.
	Logger *slog.Logger
}

// Serve runs one session of ep over newline-delimited JSON: messages from r,
// one per line, and every message to the client on w, one per line
// (2025-11-25 Transports, "stdio": no embedded newlines, nothing but MCP
// messages on the output). It returns nil when r ends, after the requests
// still being answered have been answered, or ctx.Err() when ctx ends
// first. The session is closed before Serve returns.
func Serve(ctx context.Context, ep mcp.Endpoint, r io.Reader, w io.Writer, opts *ServerOptions) error {
	var o ServerOptions
	if opts != nil {
		o = *opts
	}
	if o.MaxLine <= 0 {
		o.MaxLine = DefaultMaxLine
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	out := &lineWriter{w: bufio.NewWriter(w), log: o.Logger}
	sess := ep.NewSession(outbox{out})
	defer sess.Close()
	route := newStatelessRoute(ep)

	pending := newInFlight()
	lines := newLineReader(r, o.MaxLine)
	readErr := make(chan error, 1)
	go func() {
		for {
			line, err := lines.next()
			if err != nil {
				readErr <- err
				return
			}
			if len(bytes.TrimSpace(line)) == 0 {
				continue
			}
			handle(ctx, sess, route, out, pending, line)
		}
	}()
	select {
	case err := <-readErr:
		if errors.Is(err, io.EOF) {
			// The client closed its side: answer what was asked, then
			// stop. No request starts after EOF, and nothing is left
			// waiting for them when ctx ends first: a request that is
			// never answered (a task call cut by the session's end) must
			// not keep a goroutine. An open listen is never answered: it
			// ends with the pipe.
			if route.ep != nil {
				route.running.endListens()
			}
			select {
			case <-pending.idle():
				return out.err()
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		return fmt.Errorf("stdio: read: %w", err)
	case <-ctx.Done():
		return ctx.Err()
	}
}

func handle(ctx context.Context, sess mcp.Session, route statelessRoute, out *lineWriter, pending *inFlight, line []byte) {
	if errors.Is(errLineTooLong, lineError(line)) {
		out.write(mcp.NewError(mcp.NullID, mcp.Errorf(mcp.CodeInvalidRequest, "invalid request: message longer than the line limit")))
		return
	}
	msg, err := mcp.DecodeMessage(line)
	if err != nil {
		var e *mcp.Error
		if !errors.As(err, &e) {
			e = mcp.Errorf(mcp.CodeParseError, "parse error: %v", err)
		}
		id := mcp.NullID
		if msg != nil && !msg.ID.IsZero() {
			id = msg.ID
		}
		out.write(mcp.NewError(id, e))
		return
	}
	if route.cancels(msg) {
		return
	}
	if route.takes(msg) {
		if msg.Kind() != mcp.KindRequest {
			route.ep.HandleStateless(ctx, msg, nil)
			return
		}
		pending.add()
		reqCtx, end := route.running.start(ctx, msg)
		route.ep.HandleStateless(reqCtx, msg, &replier{out: out, done: func() {
			end()
			pending.done()
		}})
		return
	}
	if msg.Kind() != mcp.KindRequest {
		sess.Handle(ctx, msg, nil)
		return
	}
	pending.add()
	sess.Handle(ctx, msg, &replier{out: out, done: pending.done})
}

// inFlight counts the requests being answered, without a goroutine to
// wait for them: idle returns a channel that is closed while none is.
type inFlight struct {
	mu    sync.Mutex
	n     int
	empty chan struct{} // closed while n is 0
}

func newInFlight() *inFlight {
	f := &inFlight{empty: make(chan struct{})}
	close(f.empty)
	return f
}

func (f *inFlight) add() {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.n == 0 {
		f.empty = make(chan struct{})
	}
	f.n++
}

func (f *inFlight) done() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.n--
	if f.n == 0 {
		close(f.empty)
	}
}

func (f *inFlight) idle() <-chan struct{} {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.empty
}

// replier answers one request on the shared output.
type replier struct {
	out  *lineWriter
	mu   sync.Mutex
	sent bool
	done func()
}

func (r *replier) Reply(_ context.Context, msg *mcp.Message, final bool) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.sent {
		return mcp.ErrReplied
	}
	var err error
	if msg != nil {
		err = r.out.write(msg)
	}
	if final {
		r.sent = true
		r.done()
	}
	return err
}

type outbox struct{ out *lineWriter }

func (o outbox) Send(_ context.Context, msg *mcp.Message) error { return o.out.write(msg) }

// lineWriter writes whole messages, one per line, from many goroutines.
type lineWriter struct {
	mu      sync.Mutex
	w       *bufio.Writer
	buf     []byte
	log     *slog.Logger
	lastErr error
}

func (l *lineWriter) write(msg *mcp.Message) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.lastErr != nil {
		return l.lastErr
	}
	b, err := msg.AppendJSON(l.buf[:0])
	if err != nil {
		l.log.Error("stdio: encode", "err", err)
		return err
	}
	l.buf = append(b, '\n')
	if _, err := l.w.Write(l.buf); err != nil {
		l.lastErr = fmt.Errorf("stdio: write: %w", err)
		return l.lastErr
	}
	if err := l.w.Flush(); err != nil {
		l.lastErr = fmt.Errorf("stdio: write: %w", err)
	}
	return l.lastErr
}

func (l *lineWriter) err() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.lastErr
}
