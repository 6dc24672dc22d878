package plant

import (
	"context"

	"github.com/tasksim/tasksim/mcp"
)

// endpoint decorates an mcp.Endpoint: each session's handler sees the
// messages the client sends (handle), and each Replier and Outbox the
// messages the server sends (reply, send). A nil hook passes through.
type endpoint struct {
	inner  mcp.Endpoint
	handle func(ctx context.Context, msg *mcp.Message, r mcp.Replier, next func(*mcp.Message, mcp.Replier))
	reply  func(ctx context.Context, msg *mcp.Message, final bool, next mcp.Replier) error
	send   func(ctx context.Context, msg *mcp.Message, self mcp.Outbox) error
	// newSession runs once per session with its outbox as the transport
	// gave it.
	newSession func(out mcp.Outbox)
}

func (e *endpoint) NewSession(out mcp.Outbox) mcp.Session {
	if e.newSession != nil {
		e.newSession(out)
	}
	var wrapped mcp.Outbox = out
	if e.send != nil {
		wrapped = outboxFunc(func(ctx context.Context, msg *mcp.Message) error { return e.send(ctx, msg, out) })
	}
	return &session{inner: e.inner.NewSession(wrapped), e: e}
}

type session struct {
	inner mcp.Session
	e     *endpoint
}

func (s *session) Handle(ctx context.Context, msg *mcp.Message, r mcp.Replier) {
	if r != nil && s.e.reply != nil {
		r = replier{inner: r, reply: s.e.reply}
	}
	if s.e.handle != nil {
		s.e.handle(ctx, msg, r, func(m *mcp.Message, r mcp.Replier) { s.inner.Handle(ctx, m, r) })
		return
	}
	s.inner.Handle(ctx, msg, r)
}

func (s *session) Close() { s.inner.Close() }

type replier struct {
	inner mcp.Replier
	reply func(ctx context.Context, msg *mcp.Message, final bool, next mcp.Replier) error
}

func (r replier) Reply(ctx context.Context, msg *mcp.Message, final bool) error {
	return r.reply(ctx, msg, final, r.inner)
}

type outboxFunc func(ctx context.Context, msg *mcp.Message) error

func (f outboxFunc) Send(ctx context.Context, msg *mcp.Message) error { return f(ctx, msg) }
