package h1

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/url"
	"sync"
	"syscall"
	"time"
)

// Defaults of Transport.
const (
	// DefaultMaxIdleConns is how many idle connections the pool keeps.
	DefaultMaxIdleConns = 100
	// DefaultIdleConnTimeout is how long an idle connection is kept.
	DefaultIdleConnTimeout = 90 * time.Second
	// DefaultBufferSize is a connection's read buffer and the request
	// write buffer, in bytes (net/http's defaults).
	DefaultBufferSize = 4 << 10
	dialTimeout       = 30 * time.Second
)

// Transport is an http.RoundTripper for plain HTTP/1.1 that keeps no
// goroutine per connection (the package doc tells how). It is safe for
// concurrent use; the zero value is ready to use. A response body must be
// read to io.EOF for its connection to be reused; closing it earlier
// closes the connection, as net/http's Transport does.
type Transport struct {
	// Dial opens connections; nil means a net.Dialer with a 30 s timeout
	// and 30 s TCP keep-alives.
	Dial func(ctx context.Context, network, addr string) (net.Conn, error)
	// ReadBufferSize is each connection's read buffer; WriteBufferSize the
	// buffer a request is written through (shared between requests, not
	// held by connections). 0 means DefaultBufferSize.
	ReadBufferSize, WriteBufferSize int
	// MaxIdleConns caps the idle connections kept, across hosts; 0 means
	// DefaultMaxIdleConns, a negative value keeps none.
	MaxIdleConns int
	// IdleConnTimeout is how long an idle connection is kept; 0 means
	// DefaultIdleConnTimeout.
	IdleConnTimeout time.Duration
	// Proxy picks a proxy for a request; nil means
	// http.ProxyFromEnvironment. A request with a proxy goes to Fallback.
	Proxy func(*http.Request) (*url.URL, error)
	// Fallback carries what this transport does not: https, proxied
	// requests, protocol upgrades. nil means http.DefaultTransport.
	Fallback http.RoundTripper

	mu      sync.Mutex
	idle    map[string][]*conn // by host:port, newest last
	nidle   int
	writers sync.Pool // *bufio.Writer, detached between requests
}

// conn is one connection and its read buffer.
type conn struct {
	nc     net.Conn
	br     *bufio.Reader
	key    string
	idleAt time.Time
}

// RoundTrip implements http.RoundTripper.
func (t *Transport) RoundTrip(req *http.Request) (*http.Response, error) {
	if !t.carries(req) {
		return t.fallback().RoundTrip(req)
	}
	ctx := req.Context()
	key := hostPort(req.URL)
	for attempt := 0; ; attempt++ {
		c, reused, err := t.connTo(ctx, key)
		if err != nil {
			closeBody(req)
			return nil, err
		}
		resp, err := t.exchange(ctx, c, req)
		if err == nil {
			return resp, nil
		}
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		// A kept connection the server closed as the request went out:
		// send again on a new one when the request can be sent twice
		// (net/http's Transport does the same).
		if !reused || attempt > 0 || !connGone(err) || !replayable(req) {
			closeBody(req)
			return nil, err
		}
		again, ok := rewound(req)
		if !ok {
			return nil, err
		}
		req = again
	}
}

// carries reports whether this transport carries req itself: plain HTTP
// to a host, no protocol upgrade, no proxy. The rest goes to Fallback.
func (t *Transport) carries(req *http.Request) bool {
	if req.URL == nil || req.URL.Scheme != "http" || req.URL.Host == "" || req.Header.Get("Upgrade") != "" {
		return false
	}
	proxy := t.Proxy
	if proxy == nil {
		proxy = http.ProxyFromEnvironment
	}
	p, err := proxy(req)
	return err == nil && p == nil
}

// connTo returns an idle connection to key (reused true) or a new one.
func (t *Transport) connTo(ctx context.Context, key string) (c *conn, reused bool, err error) {
	if c := t.take(key); c != nil {
		return c, true, nil
	}
	c, err = t.dial(ctx, key)
	return c, false, err
}

// rewound returns req ready to be sent again: with a fresh body from
// GetBody when it has a body. ok is false when GetBody fails.
func rewound(req *http.Request) (again *http.Request, ok bool) {
	if req.GetBody == nil || req.Body == nil || req.Body == http.NoBody {
		return req, true
	}
	b, err := req.GetBody()
	if err != nil {
		return nil, false
	}
	r2 := *req
	r2.Body = b
	return &r2, true
}

// exchange writes req on c and reads the response head. The returned
// body owns c; on an error c is closed.
func (t *Transport) exchange(ctx context.Context, c *conn, req *http.Request) (*http.Response, error) {
	stop := context.AfterFunc(ctx, func() { c.nc.Close() })
	fail := func(err error) (*http.Response, error) {
		stop()
		c.nc.Close()
		return nil, err
	}
	w := t.writer(c.nc)
	err := req.Write(w)
	if err == nil {
		err = w.Flush()
	}
	w.Reset(nil)
	t.writers.Put(w)
	if err != nil {
		return fail(err)
	}
	var resp *http.Response
	for {
		resp, err = http.ReadResponse(c.br, req)
		if err != nil {
			return fail(err)
		}
		// 1xx answers other than 101 come before the response
		// (RFC 9110, section 15.2).
		if resp.StatusCode < 100 || resp.StatusCode > 199 || resp.StatusCode == http.StatusSwitchingProtocols {
			break
		}
	}
	b := &body{t: t, c: c, rc: resp.Body, stop: stop, ctx: ctx, reusable: !resp.Close && !req.Close}
	if resp.Body == http.NoBody {
		b.release(true)
		return resp, nil
	}
	resp.Body = b
	return resp, nil
}

func (t *Transport) fallback() http.RoundTripper {
	if t.Fallback != nil {
		return t.Fallback
	}
	return http.DefaultTransport
}

func (t *Transport) dial(ctx context.Context, key string) (*conn, error) {
	dial := t.Dial
	if dial == nil {
		dial = (&net.Dialer{Timeout: dialTimeout, KeepAlive: 30 * time.Second}).DialContext
	}
	nc, err := dial(ctx, "tcp", key)
	if err != nil {
		return nil, err
	}
	return &conn{nc: nc, br: bufio.NewReaderSize(nc, size(t.ReadBufferSize)), key: key}, nil
}

func (t *Transport) writer(nc net.Conn) *bufio.Writer {
	if w, ok := t.writers.Get().(*bufio.Writer); ok {
		w.Reset(nc)
		return w
	}
	return bufio.NewWriterSize(nc, size(t.WriteBufferSize))
}

// take returns a live idle connection to key, or nil.
func (t *Transport) take(key string) *conn {
	timeout := t.IdleConnTimeout
	if timeout <= 0 {
		timeout = DefaultIdleConnTimeout
	}
	for {
		t.mu.Lock()
		cs := t.idle[key]
		if len(cs) == 0 {
			t.mu.Unlock()
			return nil
		}
		c := cs[len(cs)-1]
		cs[len(cs)-1] = nil
		t.idle[key] = cs[:len(cs)-1]
		t.nidle--
		t.mu.Unlock()
		if time.Since(c.idleAt) < timeout && c.br.Buffered() == 0 && alive(c.nc) {
			return c
		}
		c.nc.Close()
	}
}

// put keeps c for reuse, or closes it when the pool is full.
func (t *Transport) put(c *conn) {
	limit := t.MaxIdleConns
	if limit == 0 {
		limit = DefaultMaxIdleConns
	}
	t.mu.Lock()
	if t.nidle >= limit {
		t.mu.Unlock()
		c.nc.Close()
		return
	}
	if t.idle == nil {
		t.idle = map[string][]*conn{}
	}
	c.idleAt = time.Now()
	t.idle[c.key] = append(t.idle[c.key], c)
	t.nidle++
	t.mu.Unlock()
}

// CloseIdleConnections closes the pool's connections, and Fallback's
// idle ones (http.Client.CloseIdleConnections calls it).
func (t *Transport) CloseIdleConnections() {
	t.mu.Lock()
	idle := t.idle
	t.idle, t.nidle = nil, 0
	t.mu.Unlock()
	for _, cs := range idle {
		for _, c := range cs {
			c.nc.Close()
		}
	}
	if f, ok := t.fallback().(interface{ CloseIdleConnections() }); ok {
		f.CloseIdleConnections()
	}
}

// body is a response body that owns its connection until EOF.
type body struct {
	t        *Transport
	c        *conn
	rc       io.ReadCloser // http.ReadResponse's; never closed (that would drain it)
	stop     func() bool   // stops the AfterFunc that closes c on ctx's end
	ctx      context.Context
	reusable bool

	mu   sync.Mutex
	done bool // released: pooled or closed
	eof  bool // read to its end: later reads return io.EOF again
}

var errBodyClosed = errors.New("h1: read on closed response body")

func (b *body) Read(p []byte) (int, error) {
	b.mu.Lock()
	done, eof := b.done, b.eof
	b.mu.Unlock()
	switch {
	case eof:
		return 0, io.EOF
	case done:
		return 0, errBodyClosed
	}
	n, err := b.rc.Read(p)
	switch {
	case err == io.EOF:
		b.mu.Lock()
		b.eof = true
		b.mu.Unlock()
		b.release(true)
	case err != nil:
		b.release(false)
		if b.ctx.Err() != nil {
			err = b.ctx.Err()
		}
	}
	return n, err
}

// Close closes the connection unless the body was read to its end: the
// rest is not read (net/http's Transport does the same).
func (b *body) Close() error {
	b.release(false)
	return nil
}

// release gives the connection back to the pool when the body ended
// cleanly and the connection may carry another request, else closes it.
func (b *body) release(eof bool) {
	b.mu.Lock()
	if b.done {
		b.mu.Unlock()
		return
	}
	b.done = true
	b.mu.Unlock()
	if b.stop() && eof && b.reusable {
		b.t.put(b.c)
		return
	}
	b.c.nc.Close()
}

// hostPort is the dial address of u: host:port, port 80 by default.
func hostPort(u *url.URL) string {
	port := u.Port()
	if port == "" {
		port = "80"
	}
	return net.JoinHostPort(u.Hostname(), port)
}

func size(n int) int {
	if n <= 0 {
		return DefaultBufferSize
	}
	return n
}

// connGone reports whether err says the peer had closed the connection.
func connGone(err error) bool {
	return errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE)
}

// replayable reports whether req may be sent again: an idempotent method
// (RFC 9110, section 9.2.2) whose body, if any, can be had again.
func replayable(req *http.Request) bool {
	switch req.Method {
	case "", http.MethodGet, http.MethodHead, http.MethodOptions, http.MethodTrace, http.MethodDelete, http.MethodPut:
	default:
		return false
	}
	return req.Body == nil || req.Body == http.NoBody || req.GetBody != nil
}

func closeBody(req *http.Request) {
	if req.Body != nil {
		req.Body.Close()
	}
}
