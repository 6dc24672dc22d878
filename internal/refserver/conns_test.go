package refserver

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/tasksim/tasksim/mcp/server"
	"github.com/tasksim/tasksim/mcp/streamhttp"
)

const initBody = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`

// rawRequest is an initialize POST; with short, the head announces the
// whole body but only its first 10 bytes follow.
func rawRequest(short bool) string {
	body := initBody
	if short {
		body = initBody[:10]
	}
	return "POST /mcp HTTP/1.1\r\nHost: localhost\r\nAccept: application/json, text/event-stream\r\n" +
		"Content-Type: application/json\r\nContent-Length: " + strconv.Itoa(len(initBody)) + "\r\n\r\n" + body
}

// Past MaxConns a connection is answered 503 with a JSON-RPC error and
// closed, over real TCP, while the ones holding slots stay (Hardening
// item 4: 1,100 slow bodies exhausted the file descriptors).
func TestConnectionLimit(t *testing.T) {
	s, err := Listen(&Options{MaxConns: 3})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var held []net.Conn
	for range 3 {
		c, err := net.Dial("tcp", s.Addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		held = append(held, c)
	}
	// The listener accepts in order: the three above hold the slots.
	req, _ := http.NewRequest(http.MethodPost, s.URL, strings.NewReader(initBody))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	resp, err := (&http.Client{Transport: &http.Transport{DisableKeepAlives: true}}).Do(req.WithContext(ctx))
	if err != nil {
		t.Fatalf("the 4th connection: %v, want a 503 answer", err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") == "" || !strings.Contains(string(b), `"code":-32000`) || !strings.Contains(string(b), "limit") {
		t.Errorf("past MaxConns: %d, Retry-After %q, %s; want 503 with a JSON-RPC error", resp.StatusCode, resp.Header.Get("Retry-After"), b)
	}
	if open, refused := s.Conns(); open != 3 || refused != 1 {
		t.Errorf("conns open %d, refused %d; want 3 and 1", open, refused)
	}
	// The held connections still work.
	if _, err := io.WriteString(held[0], rawRequest(false)); err != nil {
		t.Fatal(err)
	}
	r, err := http.ReadResponse(bufio.NewReader(held[0]), nil)
	if err != nil || r.StatusCode != http.StatusOK {
		t.Fatalf("a held connection's request: %v %v", r, err)
	}
}

// A body that does not arrive within BodyReadTimeout gets 408 and its
// connection is closed, over real TCP (here with a short timeout; the
// test waits for the outcome, it does not time it).
func TestSlowBodyCutOverTCP(t *testing.T) {
	s, err := Listen(&Options{HTTP: &streamhttp.Options{BodyReadTimeout: 50 * time.Millisecond}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	c, err := net.Dial("tcp", s.Addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(20 * time.Second)) // a hang fails the test, not CI
	if _, err := io.WriteString(c, rawRequest(true)); err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(c)
	r, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatalf("a slow body got no answer: %v", err)
	}
	io.Copy(io.Discard, r.Body)
	r.Body.Close()
	if r.StatusCode != http.StatusRequestTimeout {
		t.Errorf("a slow body: %d, want 408", r.StatusCode)
	}
	if _, err := br.ReadByte(); !errors.Is(err, io.EOF) {
		t.Errorf("the connection of a slow body is still open: %v", err)
	}
}

// pipeListener serves net.Pipe connections: inside a synctest bubble the
// server's deadlines run on the bubble's fake time.
type pipeListener struct {
	conns chan net.Conn
	done  chan struct{}
}

func (l *pipeListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.conns:
		return c, nil
	case <-l.done:
		return nil, net.ErrClosed
	}
}
func (l *pipeListener) Close() error   { close(l.done); return nil }
func (l *pipeListener) Addr() net.Addr { return pipeAddr{} }

type pipeAddr struct{}

func (pipeAddr) Network() string { return "pipe" }
func (pipeAddr) String() string  { return "pipe" }

func (l *pipeListener) dial() net.Conn {
	c, srv := net.Pipe()
	l.conns <- srv
	return c
}

// closed reports whether the server closed c: a read sees EOF.
func closed(c net.Conn) bool {
	_ = c.SetReadDeadline(time.Now().Add(time.Millisecond))
	var b [1]byte
	_, err := c.Read(b[:])
	return errors.Is(err, io.EOF)
}

// With every default, a slow body and an idle keep-alive connection are
// closed within the body and idle timeouts, not held open for ever
// (Hardening item 4: both were still open at 90 s), and a legitimate
// client is served alongside. Simulated in a synctest bubble over
// net.Pipe: 30 s of timeouts cost nothing.
func TestSlowAndIdleConnectionsClosed(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv := server.New(nil)
		h := streamhttp.NewHandler(srv, nil)
		hs := newHTTPServer(h, &Options{})
		l := &pipeListener{conns: make(chan net.Conn), done: make(chan struct{})}
		go hs.Serve(l)
		defer func() { h.Close(); hs.Close(); srv.Close() }()

		slow := l.dial()
		defer slow.Close()
		go io.WriteString(slow, rawRequest(true))
		idle := l.dial()
		defer idle.Close()
		go io.WriteString(idle, rawRequest(false))
		br := bufio.NewReader(idle)
		r, err := http.ReadResponse(br, nil)
		if err != nil || r.StatusCode != http.StatusOK {
			t.Fatalf("the keep-alive connection's request: %v %v", r, err)
		}
		io.Copy(io.Discard, r.Body)
		r.Body.Close()

		time.Sleep(streamhttp.DefaultBodyReadTimeout + time.Second)
		sr := bufio.NewReader(slow)
		_ = slow.SetReadDeadline(time.Now().Add(time.Millisecond))
		if r, err := http.ReadResponse(sr, nil); err != nil || r.StatusCode != http.StatusRequestTimeout {
			t.Errorf("a slow body after %v: %v %v, want 408", streamhttp.DefaultBodyReadTimeout, r, err)
		}
		time.Sleep(DefaultIdleTimeout)
		if !closed(idle) {
			t.Errorf("an idle keep-alive connection is open after %v", DefaultIdleTimeout+streamhttp.DefaultBodyReadTimeout)
		}
		legit := l.dial()
		defer legit.Close()
		go io.WriteString(legit, rawRequest(false))
		if r, err := http.ReadResponse(bufio.NewReader(legit), nil); err != nil || r.StatusCode != http.StatusOK {
			t.Errorf("a legitimate client: %v %v", r, err)
		}
	})
}
