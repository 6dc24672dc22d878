package mcp

import "context"

// A decorating Conn (recording, fault injection) wraps another and changes
// some of what passes through. It forwards the optional interfaces of the
// Conn it wraps (StatsReporter, RequestObserver, RevisionReporter, and any
// added later) through Unwrap: users find them with [ConnAs], never with a
// plain type assertion, so a decorator need not know them.
//
//	client ──▶ Decorate(recording) ──▶ Decorate(faults) ──▶ transport Conn
//	ConnAs[StatsReporter](outer) ─Unwrap─Unwrap─────────────▶ found here

// Unwrapper is implemented by a decorating Conn.
type Unwrapper interface {
	// Unwrap returns the Conn this one wraps.
	Unwrap() Conn
}

// ConnAs finds the first Conn in c's chain of decorators that implements T,
// c itself first.
func ConnAs[T any](c Conn) (T, bool) {
	for c != nil {
		if t, ok := c.(T); ok {
			return t, true
		}
		u, ok := c.(Unwrapper)
		if !ok {
			break
		}
		c = u.Unwrap()
	}
	var zero T
	return zero, false
}

// ConnFuncs are the parts of a Conn a decorator replaces; a nil field
// passes the call to the wrapped Conn unchanged. Each receives the wrapped
// Conn to call through.
type ConnFuncs struct {
	Read  func(ctx context.Context, inner Conn) (*Message, error)
	Write func(ctx context.Context, inner Conn, msg *Message) error
	Close func(inner Conn) error
}

// Decorate returns a Conn that behaves as inner but for the calls f
// replaces, and that unwraps to inner. The concurrency rules of Conn hold
// for f's functions as for inner's methods.
func Decorate(inner Conn, f ConnFuncs) Conn { return &decorated{inner: inner, f: f} }

type decorated struct {
	inner Conn
	f     ConnFuncs
}

func (d *decorated) Read(ctx context.Context) (*Message, error) {
	if d.f.Read != nil {
		return d.f.Read(ctx, d.inner)
	}
	return d.inner.Read(ctx)
}

func (d *decorated) Write(ctx context.Context, msg *Message) error {
	if d.f.Write != nil {
		return d.f.Write(ctx, d.inner, msg)
	}
	return d.inner.Write(ctx, msg)
}

func (d *decorated) Close() error {
	if d.f.Close != nil {
		return d.f.Close(d.inner)
	}
	return d.inner.Close()
}

func (d *decorated) Unwrap() Conn { return d.inner }

// DecorateTransport returns a Transport whose Conns are wrap(inner's Conn).
func DecorateTransport(inner Transport, wrap func(Conn) Conn) Transport {
	return transportFunc(func(ctx context.Context) (Conn, error) {
		c, err := inner.Connect(ctx)
		if err != nil {
			return nil, err
		}
		return wrap(c), nil
	})
}

type transportFunc func(ctx context.Context) (Conn, error)

func (f transportFunc) Connect(ctx context.Context) (Conn, error) { return f(ctx) }
