package h1_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/tasksim/tasksim/internal/h1"
	"github.com/tasksim/tasksim/internal/leaktest"
)

// TestMain fails the package's tests if any goroutine outlives them.
func TestMain(m *testing.M) {
	leaktest.Main(m)
}

// server is a real loopback HTTP server that counts the connections it
// accepted.
type server struct {
	*httptest.Server
	mu    sync.Mutex
	conns int
}

func newServer(t *testing.T, h http.HandlerFunc) *server {
	s := &server{}
	s.Server = httptest.NewUnstartedServer(h)
	s.Config.ConnState = func(_ net.Conn, st http.ConnState) {
		if st == http.StateNew {
			s.mu.Lock()
			s.conns++
			s.mu.Unlock()
		}
	}
	s.Start()
	t.Cleanup(s.Close)
	return s
}

func (s *server) accepted() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.conns
}

func newClient(t *testing.T) (*http.Client, *h1.Transport) {
	rt := &h1.Transport{Proxy: func(*http.Request) (*url.URL, error) { return nil, nil }}
	t.Cleanup(rt.CloseIdleConnections)
	return &http.Client{Transport: rt}, rt
}

func get(t *testing.T, c *http.Client, url string) string {
	t.Helper()
	resp, err := c.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.Status + " " + string(data)
}

func TestBodiesAndReuse(t *testing.T) {
	tests := []struct {
		name string
		h    http.HandlerFunc
		want string
	}{
		{"content-length", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Length", "5")
			io.WriteString(w, "hello")
		}, "200 OK hello"},
		{"chunked", func(w http.ResponseWriter, r *http.Request) {
			for i := range 3 {
				fmt.Fprintf(w, "data: %d\n\n", i)
				w.(http.Flusher).Flush()
			}
		}, "200 OK data: 0\n\ndata: 1\n\ndata: 2\n\n"},
		{"empty 202", func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(http.StatusAccepted)
		}, "202 Accepted "},
		{"404 with a body", func(w http.ResponseWriter, r *http.Request) {
			http.Error(w, "no such session", http.StatusNotFound)
		}, "404 Not Found no such session\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newServer(t, tt.h)
			c, _ := newClient(t)
			for i := range 3 {
				if got := get(t, c, s.URL); got != tt.want {
					t.Fatalf("request %d: got %q, want %q", i, got, tt.want)
				}
			}
			// A body read to its end keeps saying so, also once its
			// connection carries the next request.
			resp, err := c.Get(s.URL)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := io.ReadAll(resp.Body); err != nil {
				t.Fatal(err)
			}
			if n, err := resp.Body.Read(make([]byte, 8)); n != 0 || err != io.EOF {
				t.Errorf("Read after the end: %d, %v; want 0, io.EOF", n, err)
			}
			resp.Body.Close()
			if n := s.accepted(); n != 1 {
				t.Errorf("3 requests read to the end took %d connections, want 1", n)
			}
		})
	}
}

func TestRequestOnTheWire(t *testing.T) {
	s := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		fmt.Fprintf(w, "%s %s %s len=%d te=%v sid=%s body=%s", r.Method, r.URL.RequestURI(), r.Proto, r.ContentLength, r.TransferEncoding, r.Header.Get("Mcp-Session-Id"), body)
	})
	c, _ := newClient(t)
	req, _ := http.NewRequest(http.MethodPost, s.URL+"/mcp?x=1", strings.NewReader(`{"jsonrpc":"2.0"}`))
	req.Header.Set("Mcp-Session-Id", "s1")
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	data, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	want := `POST /mcp?x=1 HTTP/1.1 len=17 te=[] sid=s1 body={"jsonrpc":"2.0"}`
	if string(data) != want {
		t.Errorf("server saw %q, want %q", data, want)
	}
	req, _ = http.NewRequest(http.MethodDelete, s.URL+"/mcp", nil)
	resp, err = c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	data, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	if want := "DELETE /mcp HTTP/1.1 len=0 te=[] sid= body="; string(data) != want {
		t.Errorf("server saw %q, want %q", data, want)
	}
	if n := s.accepted(); n != 1 {
		t.Errorf("took %d connections, want 1", n)
	}
}

func TestEarlyCloseClosesTheConnection(t *testing.T) {
	s := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, strings.Repeat("x", 64<<10))
	})
	c, _ := newClient(t)
	resp, err := c.Get(s.URL)
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 10)
	if _, err := io.ReadFull(resp.Body, buf); err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if _, err := resp.Body.Read(buf); err == nil {
		t.Error("Read after Close: no error")
	}
	if got := get(t, c, s.URL); len(got) != len("200 OK ")+64<<10 {
		t.Fatalf("second request: %d bytes", len(got))
	}
	if n := s.accepted(); n != 2 {
		t.Errorf("a body closed early, then a request: %d connections, want 2", n)
	}
}

func TestCancelMidBody(t *testing.T) {
	release := make(chan struct{})
	s := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/next" {
			io.WriteString(w, "next")
			return
		}
		io.WriteString(w, "data: first\n\n")
		w.(http.Flusher).Flush()
		select {
		case <-r.Context().Done():
		case <-release:
		}
	})
	defer close(release)
	c, _ := newClient(t)
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, s.URL, nil)
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	buf := make([]byte, 13)
	if _, err := io.ReadFull(resp.Body, buf); err != nil || string(buf) != "data: first\n\n" {
		t.Fatalf("first event: %q, %v", buf, err)
	}
	readErr := make(chan error, 1)
	go func() {
		_, err := resp.Body.Read(buf)
		readErr <- err
	}()
	cancel()
	if err := <-readErr; !errors.Is(err, context.Canceled) {
		t.Errorf("Read after cancel: %v, want context.Canceled", err)
	}
	// The connection is not reused.
	if got := get(t, c, s.URL+"/next"); got != "200 OK next" {
		t.Errorf("next request: %q", got)
	}
	if n := s.accepted(); n != 2 {
		t.Errorf("took %d connections, want 2", n)
	}
}

func TestCancelBeforeResponse(t *testing.T) {
	arrived := make(chan struct{})
	s := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		close(arrived)
		<-r.Context().Done()
	})
	c, _ := newClient(t)
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		<-arrived
		cancel()
	}()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, s.URL, nil)
	if _, err := c.Do(req); !errors.Is(err, context.Canceled) {
		t.Errorf("Do: %v, want context.Canceled", err)
	}
}

func TestServerClosesConnection(t *testing.T) {
	t.Run("Connection: close", func(t *testing.T) {
		s := newServer(t, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Connection", "close")
			io.WriteString(w, "bye")
		})
		c, _ := newClient(t)
		for range 2 {
			if got := get(t, c, s.URL); got != "200 OK bye" {
				t.Fatalf("got %q", got)
			}
		}
		if n := s.accepted(); n != 2 {
			t.Errorf("2 requests answered with Connection: close took %d connections, want 2", n)
		}
	})
	t.Run("idle connection closed", func(t *testing.T) {
		s := newServer(t, func(w http.ResponseWriter, r *http.Request) {
			body, _ := io.ReadAll(r.Body)
			fmt.Fprintf(w, "%s %s", r.Method, body)
		})
		c, _ := newClient(t)
		if got := get(t, c, s.URL); got != "200 OK GET " {
			t.Fatalf("got %q", got)
		}
		s.CloseClientConnections() // the pooled connection is now dead
		// A POST cannot be sent twice: the dead connection must be
		// noticed before it is used.
		resp, err := c.Post(s.URL, "text/plain", strings.NewReader("once"))
		if err != nil {
			t.Fatal(err)
		}
		data, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if string(data) != "POST once" {
			t.Errorf("got %q", data)
		}
		if n := s.accepted(); n != 2 {
			t.Errorf("took %d connections, want 2", n)
		}
	})
	t.Run("mid-body", func(t *testing.T) {
		s := newServer(t, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Length", "100")
			io.WriteString(w, "short")
			w.(http.Flusher).Flush()
			conn, _, _ := http.NewResponseController(w).Hijack()
			conn.Close()
		})
		c, _ := newClient(t)
		resp, err := c.Get(s.URL)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		if _, err := io.ReadAll(resp.Body); !errors.Is(err, io.ErrUnexpectedEOF) {
			t.Errorf("body cut short: %v, want io.ErrUnexpectedEOF", err)
		}
	})
}

func TestFallback(t *testing.T) {
	s := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, r.Proto)
	}))
	defer s.Close()
	fb := s.Client().Transport.(*http.Transport)
	rt := &h1.Transport{Fallback: fb}
	defer rt.CloseIdleConnections()
	if got := get(t, &http.Client{Transport: rt}, s.URL); got != "200 OK HTTP/1.1" {
		t.Errorf("https through the fallback: %q", got)
	}

	proxied := false
	plain := newServer(t, func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "direct") })
	rt2 := &h1.Transport{
		Proxy:    func(*http.Request) (*url.URL, error) { return nil, nil },
		Fallback: roundTripFunc(func(*http.Request) (*http.Response, error) { proxied = true; return nil, errors.New("fallback") }),
	}
	if got := get(t, &http.Client{Transport: rt2}, plain.URL); got != "200 OK direct" || proxied {
		t.Errorf("no proxy: %q, fallback used %v", got, proxied)
	}
	rt2.Proxy = http.ProxyURL(mustURL(t, "http://proxy.invalid:3128"))
	if _, err := (&http.Client{Transport: rt2}).Get(plain.URL); err == nil || !proxied {
		t.Errorf("with a proxy: err %v, fallback used %v", err, proxied)
	}
	rt2.CloseIdleConnections()
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

func mustURL(t *testing.T, s string) *url.URL {
	u, err := url.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

// TestConnectionCloseNotReused: a server that says Connection: close but
// leaves the connection open (a raw one, answering every request it
// reads) must still not see a second request on it.
func TestConnectionCloseNotReused(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		conns []net.Conn
	)
	wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
			wg.Go(func() {
				br := bufio.NewReader(c)
				for {
					if _, err := http.ReadRequest(br); err != nil {
						return
					}
					io.WriteString(c, "HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 3\r\n\r\nbye")
				}
			})
		}
	})
	defer func() {
		ln.Close()
		mu.Lock()
		for _, c := range conns {
			c.Close()
		}
		mu.Unlock()
		wg.Wait()
	}()
	c, _ := newClient(t)
	for range 2 {
		if got := get(t, c, "http://"+ln.Addr().String()); got != "200 OK bye" {
			t.Fatalf("got %q", got)
		}
	}
	mu.Lock()
	n := len(conns)
	mu.Unlock()
	if n != 2 {
		t.Errorf("2 requests answered with Connection: close took %d connections, want 2", n)
	}
}
