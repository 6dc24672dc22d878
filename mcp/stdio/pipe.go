package stdio

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/tasksim/tasksim/mcp"
)

// Pipe returns a Transport that serves ep in-process over the stdio
// transport: each Connect runs Serve for a new session on io.Pipes and
// returns a client Conn over their other ends, as IOTransport would. No
// process, file or socket is involved, and nothing waits on a timer, so
// it runs inside testing/synctest bubbles and under a simulated clock.
//
//	Conn.Write ──line──▶ io.Pipe ──▶ Serve(ep) ──▶ io.Pipe ──line──▶ Conn.Read
//
// Close on the Conn ends the session: the server's input ends and its
// context is cancelled, both pipes are closed, and Close returns once
// Serve has returned (the endpoint's Session closed). opts configures
// Serve; its MaxLine also caps the lines the client reads.
func Pipe(ep mcp.Endpoint, opts *ServerOptions) mcp.Transport {
	return &pipeTransport{ep: ep, opts: opts}
}

type pipeTransport struct {
	ep   mcp.Endpoint
	opts *ServerOptions
}

// Connect implements mcp.Transport. It may be called any number of times;
// each call is a session of its own.
func (t *pipeTransport) Connect(ctx context.Context) (mcp.Conn, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if t.ep == nil {
		return nil, errors.New("stdio: Pipe needs an endpoint")
	}
	var maxLine int
	if t.opts != nil {
		maxLine = t.opts.MaxLine
	}
	inR, inW := io.Pipe()   // the server's stdin
	outR, outW := io.Pipe() // the server's stdout
	srvCtx, cancel := context.WithCancel(context.Background())
	served := make(chan struct{})
	var serveErr error // set before served is closed
	go func() {
		serveErr = Serve(srvCtx, t.ep, inR, outW, t.opts)
		close(served) // before the output ends, so that eof sees serveErr
		outW.Close()  // the client reads the end of the server's output
		inR.Close()
	}()
	c := newClientConn(outR, inW, maxLine)
	c.eof = func(readErr error) error {
		select {
		case <-served:
			if serveErr != nil && !errors.Is(serveErr, context.Canceled) {
				return fmt.Errorf("stdio: the in-process server ended: %w", serveErr)
			}
		default:
		}
		if errors.Is(readErr, io.EOF) {
			return errors.New("stdio: the server closed its output")
		}
		return fmt.Errorf("stdio: read: %w", readErr)
	}
	c.onClose = func() error {
		cancel()
		inW.Close()
		outR.Close()
		<-served
		return nil
	}
	c.start()
	return c, nil
}
