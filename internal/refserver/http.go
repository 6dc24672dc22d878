package refserver

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/tasksim/tasksim/internal/httplimit"
	"github.com/tasksim/tasksim/mcp"
	"github.com/tasksim/tasksim/mcp/server"
	"github.com/tasksim/tasksim/mcp/streamhttp"
)

// DefaultAddr is where a server listens when Options.Addr is empty: a
// free loopback port.
const DefaultAddr = "127.0.0.1:0"

// Defaults of the connection limits (Options), shared with tasksim
// record and proxy.
const (
	DefaultHeaderTimeout = httplimit.DefaultHeaderTimeout
	DefaultIdleTimeout   = httplimit.DefaultIdleTimeout
	DefaultMaxConns      = httplimit.DefaultMaxConns
)

// shutdownTimeout bounds the wait for open requests when an HTTP server
// closes; SSE streams are ended first, so only slow writes are left.
const shutdownTimeout = 5 * time.Second

// Options say how to start a reference server behind HTTP. The zero value
// is a default server on a free loopback port.
type Options struct {
	// Server configures the reference server; nil means every default.
	Server *server.Options
	// HTTP configures its Streamable HTTP transport; nil means every
	// default (the endpoint path is streamhttp.DefaultPath, /mcp).
	HTTP *streamhttp.Options
	// Addr is the TCP address to listen on; "" means DefaultAddr.
	Addr string
	// HeaderTimeout bounds the reading of a request's head; 0 means
	// DefaultHeaderTimeout (10 s). (The body's is
	// streamhttp.Options.BodyReadTimeout.)
	HeaderTimeout time.Duration
	// IdleTimeout closes a keep-alive connection with no request for this
	// long; 0 means DefaultIdleTimeout (30 s).
	IdleTimeout time.Duration
	// Endpoint, when set, wraps the reference server before the transport
	// serves it: the tests' planted bugs (internal/plant) decorate it from
	// outside. nil serves the server as it is.
	Endpoint func(mcp.Endpoint) mcp.Endpoint
	// Handler, when set, wraps the Streamable HTTP handler before it
	// serves: planted transport bugs (internal/plant) decorate it from
	// outside. nil serves the handler as it is.
	Handler func(http.Handler) http.Handler
	// MaxConns caps the connections open at once; one more is answered 503
	// and closed. 0 means DefaultMaxConns (8,192), lowered to the
	// process's open-file limit less 64 where that is smaller; negative,
	// no cap.
	MaxConns int
}

// HTTP is a reference server serving Streamable HTTP in this process.
type HTTP struct {
	// URL is the endpoint, e.g. http://127.0.0.1:40123/mcp.
	URL string
	// Addr is the address it listens on.
	Addr string
	// Server is the reference server (an mcp.Endpoint).
	Server *server.Server

	handler *streamhttp.Handler
	hs      *httplimit.Server
	done    chan struct{} // closed when Serve returns
	err     error         // Serve's error, once done is closed

	limit     *httplimit.Listener // nil: no connection cap
	closeOnce sync.Once
}

// limits are the connection limits of o (Hardening item 4: only a header
// timeout was set, and idle connections stayed open).
func (o *Options) limits() *httplimit.Limits {
	return &httplimit.Limits{HeaderTimeout: o.HeaderTimeout, IdleTimeout: o.IdleTimeout, MaxConns: o.MaxConns}
}

// newHTTPServer is the http.Server of a reference server, with the head
// and idle timeouts of o; the body has its own deadline
// (streamhttp.Options.BodyReadTimeout).
func newHTTPServer(h http.Handler, o *Options) *httplimit.Server { return o.limits().Server(h) }

// Conns returns the connections open (0 without a cap) and those refused
// past MaxConns so far.
func (s *HTTP) Conns() (open int, refused int64) {
	if s.limit == nil {
		return 0, 0
	}
	return s.limit.Open(), s.limit.Refused()
}

// Listen starts a reference server behind Streamable HTTP and returns
// once it listens: its URL accepts requests from then on. Close stops it.
func Listen(o *Options) (*HTTP, error) {
	if o == nil {
		o = &Options{}
	}
	addr := o.Addr
	if addr == "" {
		addr = DefaultAddr
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("listen on %s: %w", addr, err)
	}
	path := streamhttp.DefaultPath
	if o.HTTP != nil && o.HTTP.Path != "" {
		path = o.HTTP.Path
	}
	srv := server.New(o.Server)
	var ep mcp.Endpoint = srv
	if o.Endpoint != nil {
		ep = o.Endpoint(srv)
	}
	h := streamhttp.NewHandler(ep, o.HTTP)
	var served http.Handler = h
	if o.Handler != nil {
		served = o.Handler(h)
	}
	s := &HTTP{
		URL:     "http://" + ln.Addr().String() + path,
		Addr:    ln.Addr().String(),
		Server:  srv,
		handler: h,
		hs:      newHTTPServer(served, o),
		done:    make(chan struct{}),
	}
	if s.limit = o.limits().Listener(ln); s.limit != nil {
		ln = s.limit
	}
	go func() {
		defer close(s.done)
		if err := s.hs.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
			s.err = fmt.Errorf("serve: %w", err)
		}
	}()
	return s, nil
}

// Transport returns the Streamable HTTP handler serving the server, for
// its Stats.
func (s *HTTP) Transport() *streamhttp.Handler { return s.handler }

// Done is closed when the server stops serving: after Close, or when
// accepting connections failed (see Err).
func (s *HTTP) Done() <-chan struct{} { return s.done }

// Err waits for Done and returns why the server stopped serving: nil
// after Close.
func (s *HTTP) Err() error {
	<-s.done
	return s.err
}

// Close ends every session and stream, waits up to 5 s for requests in
// progress, and stops the server. An open subscriptions/listen (2026-07-28)
// is answered with its result before its stream closes (Subscriptions,
// "Graceful Closure"): the listens end first, then the handler, which
// writes the answers they queued. It is safe to call more than once.
func (s *HTTP) Close() error {
	s.closeOnce.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), shutdownTimeout)
		defer cancel()
		_ = s.Server.EndListens(ctx)
		s.handler.Close()
		if err := s.hs.Shutdown(ctx); err != nil {
			_ = s.hs.Close()
		}
		<-s.done
		s.Server.Close()
	})
	return nil
}
