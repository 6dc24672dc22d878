package httplimit

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

// pipeListener hands out the server ends of net.Pipe connections.
type pipeListener struct {
	conns chan net.Conn
	once  sync.Once
	done  chan struct{}
}

func newPipeListener() *pipeListener {
	return &pipeListener{conns: make(chan net.Conn), done: make(chan struct{})}
}

func (l *pipeListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.conns:
		return c, nil
	case <-l.done:
		return nil, net.ErrClosed
	}
}

func (l *pipeListener) Close() error { l.once.Do(func() { close(l.done) }); return nil }
func (l *pipeListener) Addr() net.Addr {
	return &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 1}
}

// dial returns the client end of a new connection.
func (l *pipeListener) dial() net.Conn {
	c, s := net.Pipe()
	l.conns <- s
	return c
}

// TestShutdownClosesUnusedConn: a connection a client dialled and never
// used does not hold Shutdown (net/http's waits five seconds for it, as
// long as a stopping command's budget), while a request in progress is
// still waited for and answered. On synctest's clock, so the five seconds
// are measured, not waited.
func TestShutdownClosesUnusedConn(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		entered, release := make(chan struct{}), make(chan struct{})
		h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			close(entered)
			<-release
			_, _ = io.WriteString(w, "done")
		})
		ln := newPipeListener()
		s := (&Limits{}).Server(h)
		states := make(chan http.ConnState, 16)
		s.SetConnState(func(_ net.Conn, st http.ConnState) { states <- st })
		served := make(chan error, 1)
		go func() { served <- s.Serve(ln) }()

		unused := ln.dial()
		if st := <-states; st != http.StateNew {
			t.Fatalf("first state %v, want new", st)
		}
		busy := ln.dial()
		<-states // new
		go func() {
			_, _ = io.WriteString(busy, "GET / HTTP/1.1\r\nHost: x\r\n\r\n")
		}()
		if st := <-states; st != http.StateActive {
			t.Fatalf("state %v, want active", st)
		}
		// net/http drops a request it has read once Shutdown has begun,
		// unless its handler runs: wait for the handler.
		<-entered
		start := time.Now()
		shut := make(chan error, 1)
		go func() { shut <- s.Shutdown(context.Background()) }()

		// The unused connection is closed at once.
		if _, err := unused.Read(make([]byte, 1)); !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrClosedPipe) {
			t.Fatalf("read on the unused connection: %v, want it closed", err)
		}
		synctest.Wait()
		select {
		case err := <-shut:
			t.Fatalf("Shutdown returned %v with a request in progress", err)
		default:
		}
		close(release)
		resp, err := http.ReadResponse(bufio.NewReader(busy), nil)
		if err != nil {
			t.Fatalf("the request in progress: %v", err)
		}
		body, _ := io.ReadAll(resp.Body)
		if string(body) != "done" {
			t.Errorf("body %q, want done", body)
		}
		if err := <-shut; err != nil {
			t.Fatalf("Shutdown: %v", err)
		}
		if d := time.Since(start); d >= 5*time.Second {
			t.Errorf("Shutdown took %v of the bubble's clock: it waited for the unused connection", d)
		}
		if err := <-served; !errors.Is(err, http.ErrServerClosed) {
			t.Errorf("Serve: %v", err)
		}
		unused.Close()
		busy.Close()
	})
}
