package httplimit

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"time"
)

// Defaults of Limits.
const (
	DefaultHeaderTimeout = 10 * time.Second
	DefaultBodyTimeout   = 30 * time.Second
	DefaultIdleTimeout   = 30 * time.Second
	DefaultMaxConns      = 8192
	// fdReserve is kept free below the process's file limit when MaxConns
	// is clamped to it: the listener, logs, a child's pipes.
	fdReserve = 64
)

// Limits bound what a client may hold of a server. The zero value (or
// nil) gives every default.
type Limits struct {
	// HeaderTimeout bounds the reading of a request's head; 0 means
	// DefaultHeaderTimeout (10 s).
	HeaderTimeout time.Duration
	// BodyTimeout bounds the reading of a request's body, from when the
	// handler starts; a slower body gets 408 and its connection is
	// closed. 0 means DefaultBodyTimeout (30 s). It is applied by
	// CutSlowBody (Serve does), or by a handler that reads bodies whole.
	BodyTimeout time.Duration
	// IdleTimeout closes a keep-alive connection with no request for this
	// long; 0 means DefaultIdleTimeout (30 s).
	IdleTimeout time.Duration
	// MaxConns caps the connections open at once; one more is answered 503
	// and closed. 0 means DefaultMaxConns (8,192), lowered to the
	// process's open-file limit less 64 where that is smaller; negative,
	// no cap.
	MaxConns int
}

func (l *Limits) orZero() Limits {
	if l == nil {
		return Limits{}
	}
	return *l
}

// Body returns the body timeout, its default resolved.
func (l *Limits) Body() time.Duration {
	if d := l.orZero().BodyTimeout; d > 0 {
		return d
	}
	return DefaultBodyTimeout
}

// Server returns a Server for h with the head and idle timeouts.
// No ReadTimeout or WriteTimeout: they would cut SSE streams, which live
// as long as their task; the body has its own deadline (BodyTimeout) and
// SSE writes theirs.
func (l *Limits) Server(h http.Handler) *Server {
	o := l.orZero()
	hdr, idle := o.HeaderTimeout, o.IdleTimeout
	if hdr <= 0 {
		hdr = DefaultHeaderTimeout
	}
	if idle <= 0 {
		idle = DefaultIdleTimeout
	}
	return newServer(&http.Server{Handler: h, ReadHeaderTimeout: hdr, IdleTimeout: idle})
}

// Listener caps the connections ln accepts at MaxConns; it returns nil
// when there is no cap (MaxConns negative).
func (l *Limits) Listener(ln net.Listener) *Listener {
	if max := maxConns(l.orZero().MaxConns); max > 0 {
		return NewListener(ln, max)
	}
	return nil
}

// maxConns resolves Limits.MaxConns: 0 is the default, clamped to the
// open-file limit; negative is no cap (0 returned).
func maxConns(n int) int {
	switch {
	case n < 0:
		return 0
	case n > 0:
		return n
	}
	n = DefaultMaxConns
	if lim := openFileLimit(); lim > 0 && lim-fdReserve < n {
		n = max(lim-fdReserve, 1)
	}
	return n
}

// shutdownTimeout bounds the wait for open requests when Serve stops.
const shutdownTimeout = 5 * time.Second

// ServeOptions configure Serve. nil gives every default.
type ServeOptions struct {
	// Limits are the limits; nil means every default.
	Limits *Limits
	// ConnState, if set, is the http.Server's ConnState.
	ConnState func(net.Conn, http.ConnState)
	// StopCause is the cause of the requests' contexts' end when Serve's
	// context ends (context.Cause); nil means context.Canceled.
	StopCause error
}

// Serve serves h on ln, within the limits, until ctx ends: h is wrapped
// in CutSlowBody and ln in a Listener. Then it ends the requests still
// open (their contexts end with StopCause), waits up to five seconds for
// their handlers and returns nil. It returns early with an error if ln
// fails.
func Serve(ctx context.Context, ln net.Listener, h http.Handler, o *ServeOptions) error {
	if o == nil {
		o = &ServeOptions{}
	}
	base, stop := context.WithCancelCause(context.Background())
	defer stop(nil)
	hs := o.Limits.Server(CutSlowBody(h, o.Limits.Body()))
	hs.SetConnState(o.ConnState)
	hs.ErrorLog = log.New(io.Discard, "", 0)
	hs.BaseContext = func(net.Listener) context.Context { return base }
	if capped := o.Limits.Listener(ln); capped != nil {
		ln = capped
	}
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	select {
	case err := <-errc:
		return fmt.Errorf("serve: %w", err)
	case <-ctx.Done():
	}
	cause := o.StopCause
	if cause == nil {
		cause = context.Canceled
	}
	stop(cause)
	shutdown, cancel := context.WithTimeout(context.Background(), shutdownTimeout)
	defer cancel()
	if err := hs.Shutdown(shutdown); err != nil {
		hs.Close()
	}
	if err := <-errc; !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("serve: %w", err)
	}
	return nil
}
