package suite

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"sync"
	"time"
)

// A client scenario over stdio gives the client under test a command to
// start as its stdio server, as an MCP host starts one. That command is a
// relay: it connects to the suite on a loopback port and copies its stdin
// to the suite and what the suite sends to its stdout. The scripted server
// runs in the suite, which records and judges the traffic as it passes.
//
//	client ──stdin──▶ relay process ──TCP──▶ suite: recorder ▶ scripted server
//	client ◀─stdout── relay process ◀─TCP─── suite: recorder ◀ misbehavior ◀
//
// A relay spec is "HOST:PORT/TOKEN"; the relay sends TOKEN and a newline
// first, so that no other local process can pass for the client.

// ErrBadRelaySpec is the error of a relay spec that is not HOST:PORT/TOKEN.
var ErrBadRelaySpec = errors.New("relay: want HOST:PORT/TOKEN")

// DialRelay connects to the suite's stdio endpoint named by spec and
// introduces itself: what is written to the connection is the scripted
// server's stdin, what is read from it its stdout.
func DialRelay(ctx context.Context, spec string) (net.Conn, error) {
	addr, token, ok := strings.Cut(spec, "/")
	if !ok || addr == "" || token == "" {
		return nil, fmt.Errorf("%w: %q", ErrBadRelaySpec, spec)
	}
	var d net.Dialer
	c, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("relay: %w", err)
	}
	if _, err := io.WriteString(c, token+"\n"); err != nil {
		c.Close()
		return nil, fmt.Errorf("relay: %w", err)
	}
	return c, nil
}

// Relay connects to spec and copies stdin to it and what comes back to
// stdout, until the suite closes the connection. The end of stdin is
// passed on (the scripted server sees its input end). It is what
// `tasksim check --stdio-relay SPEC` runs.
func Relay(ctx context.Context, spec string, stdin io.Reader, stdout io.Writer) error {
	c, err := DialRelay(ctx, spec)
	if err != nil {
		return err
	}
	defer c.Close()
	stop := context.AfterFunc(ctx, func() { c.Close() })
	defer stop()
	go func() {
		io.Copy(c, stdin)
		if tc, ok := c.(*net.TCPConn); ok {
			tc.CloseWrite()
		}
	}()
	_, err = io.Copy(stdout, c)
	if ctx.Err() != nil {
		return ctx.Err()
	}
	return err
}

// relayListener accepts the relays of one scenario: connections that
// introduce themselves with its token.
type relayListener struct {
	ln    net.Listener
	token string

	mu    sync.Mutex
	conns []net.Conn
}

func listenRelay() (*relayListener, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	b := make([]byte, 16)
	rand.Read(b)
	return &relayListener{ln: ln, token: hex.EncodeToString(b)}, nil
}

// Spec is what a relay is given to reach this listener.
func (l *relayListener) Spec() string { return l.ln.Addr().String() + "/" + l.token }

// serve accepts relays until Close and runs each on a goroutine of its
// own; it returns when they all returned.
func (l *relayListener) serve(run func(c net.Conn, r *bufio.Reader)) {
	var wg sync.WaitGroup
	defer wg.Wait()
	for {
		c, err := l.ln.Accept()
		if err != nil {
			return
		}
		l.mu.Lock()
		l.conns = append(l.conns, c)
		l.mu.Unlock()
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer c.Close()
			// A stranger that does not introduce itself at once is dropped.
			c.SetReadDeadline(time.Now().Add(10 * time.Second))
			r := bufio.NewReader(c)
			line, err := r.ReadString('\n')
			if err != nil || strings.TrimSpace(line) != l.token {
				return
			}
			c.SetReadDeadline(time.Time{})
			run(c, r)
		}()
	}
}

// Close stops accepting and closes the connections still open.
func (l *relayListener) Close() {
	l.ln.Close()
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, c := range l.conns {
		c.Close()
	}
}
