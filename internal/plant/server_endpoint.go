package plant

import (
	"context"
	"encoding/json"
	"sync"

	"github.com/tasksim/tasksim/mcp"
	rev "github.com/tasksim/tasksim/mcp/rev20260728"
)

// hooks are what a decorator does to one session of an mcp.Endpoint: handle
// sees the messages the client sends (next hands one on to the server, and
// may be called for requests of the decorator's own), reply the messages the
// server answers with, send those it sends on its own (Outbox), close runs
// when the session closes. A nil hook passes through.
type hooks struct {
	handle func(ctx context.Context, msg *mcp.Message, r mcp.Replier, next func(*mcp.Message, mcp.Replier))
	reply  func(ctx context.Context, msg *mcp.Message, final bool, next mcp.Replier) error
	send   func(ctx context.Context, msg *mcp.Message, self mcp.Outbox) error
	close  func()
}

// endpoint decorates an mcp.Endpoint with hooks, the same for every
// session, or made for each by perSession (with the session's outbox as
// the transport gave it) when the decorator keeps state per session.
type endpoint struct {
	inner mcp.Endpoint
	hooks
	perSession func(out mcp.Outbox) hooks
}

func (e *endpoint) NewSession(out mcp.Outbox) mcp.Session {
	h := e.hooks
	if e.perSession != nil {
		h = e.perSession(out)
	}
	var wrapped mcp.Outbox = out
	if h.send != nil {
		wrapped = outboxFunc(func(ctx context.Context, msg *mcp.Message) error { return h.send(ctx, msg, out) })
	}
	return &session{inner: e.inner.NewSession(wrapped), h: h}
}

type session struct {
	inner mcp.Session
	h     hooks
}

func (s *session) Handle(ctx context.Context, msg *mcp.Message, r mcp.Replier) {
	if r != nil && s.h.reply != nil {
		r = replier{inner: r, reply: s.h.reply}
	}
	if s.h.handle != nil {
		s.h.handle(ctx, msg, r, func(m *mcp.Message, r mcp.Replier) { s.inner.Handle(ctx, m, r) })
		return
	}
	s.inner.Handle(ctx, msg, r)
}

func (s *session) Close() {
	s.inner.Close()
	if s.h.close != nil {
		s.h.close()
	}
}

// replier passes each reply through reply. It keeps the transport's
// ability to close the answer's connection (mcp.ConnectionCloser), which a
// tool may use.
type replier struct {
	inner mcp.Replier
	reply func(ctx context.Context, msg *mcp.Message, final bool, next mcp.Replier) error
}

func (r replier) Reply(ctx context.Context, msg *mcp.Message, final bool) error {
	return r.reply(ctx, msg, final, r.inner)
}

func (r replier) CloseConnection() {
	if cc, ok := r.inner.(mcp.ConnectionCloser); ok {
		cc.CloseConnection()
	}
}

type outboxFunc func(ctx context.Context, msg *mcp.Message) error

func (f outboxFunc) Send(ctx context.Context, msg *mcp.Message) error { return f(ctx, msg) }

// askID is the request id of the requests a decorator hands the server on
// its own; their answers go to the decorator, never to the client.
var askID = mcp.StringID("tasksim-plant")

// ask hands the server a request of the decorator's own through next and
// returns its answer, nil if none came before next returned: the reference
// server answers tasks/get, tasks/cancel and tasks/result with lastSeqNr
// before Handle returns.
func ask(next func(*mcp.Message, mcp.Replier), method string, params any) *mcp.Message {
	msg, err := mcp.NewRequest(askID, method, params)
	if err != nil {
		return nil
	}
	var c captured
	next(msg, &c)
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.final
}

// captured is a Replier that keeps the final answer.
type captured struct {
	mu    sync.Mutex
	final *mcp.Message
}

func (c *captured) Reply(_ context.Context, msg *mcp.Message, final bool) error {
	if final {
		c.mu.Lock()
		c.final = msg
		c.mu.Unlock()
	}
	return nil
}

// taskParams are the params of tasks/get, tasks/cancel and tasks/result.
type taskParams struct {
	TaskID    string          `json:"taskId"`
	LastSeqNr json.RawMessage `json:"lastSeqNr,omitempty"`
}

// paramsOf decodes msg's task params; zero when they are none.
func paramsOf(msg *mcp.Message) taskParams {
	var p taskParams
	_ = json.Unmarshal(msg.Params, &p)
	return p
}

// withParams returns a copy of msg with params as its params.
func withParams(msg *mcp.Message, params map[string]json.RawMessage) *mcp.Message {
	return withObject(msg, params, func(m *mcp.Message, raw json.RawMessage) { m.Params = raw })
}

// withResult returns a copy of msg with res as its result.
func withResult(msg *mcp.Message, res map[string]json.RawMessage) *mcp.Message {
	return withObject(msg, res, func(m *mcp.Message, raw json.RawMessage) { m.Result = raw })
}

// withObject returns a copy of msg with obj, encoded, set by set; msg
// itself if obj cannot be encoded.
func withObject(msg *mcp.Message, obj map[string]json.RawMessage, set func(*mcp.Message, json.RawMessage)) *mcp.Message {
	raw, err := json.Marshal(obj)
	if err != nil {
		return msg
	}
	out := *msg
	set(&out, raw)
	return &out
}

// onRequests passes every request or notification of method the client
// sends through edit before the server sees it.
func onRequests(inner mcp.Endpoint, method string, edit func(*mcp.Message) *mcp.Message) mcp.Endpoint {
	return &endpoint{inner: inner, hooks: hooks{
		handle: func(ctx context.Context, msg *mcp.Message, r mcp.Replier, next func(*mcp.Message, mcp.Replier)) {
			if msg.Method == method {
				msg = edit(msg)
			}
			next(msg, r)
		},
	}}
}

// keepStateless returns decorated, which wraps inner, still serving the
// stateless era (2026-07-28) when inner serves it. The endpoint decorators
// plant bugs of the 2025-11-25 session era, through NewSession; a
// transport finds the stateless era by type assertion
// (mcp.StatelessEndpoint), so without this a planted server would quietly
// serve sessions only, whatever its revisions. A stateless request reaches
// inner unplanted (docs/cli.md, --bug).
func keepStateless(inner, decorated mcp.Endpoint) mcp.Endpoint {
	se, ok := inner.(mcp.StatelessEndpoint)
	if !ok {
		return decorated
	}
	if _, ok := decorated.(mcp.StatelessEndpoint); ok {
		return decorated
	}
	return statelessBeside{Endpoint: decorated, stateless: se}
}

// statelessBeside serves sessions through Endpoint (decorated) and the
// stateless era through stateless (not).
type statelessBeside struct {
	mcp.Endpoint
	stateless mcp.StatelessEndpoint
}

func (e statelessBeside) Revisions() []mcp.Revision { return e.stateless.Revisions() }

func (e statelessBeside) HandleStateless(ctx context.Context, msg *mcp.Message, r mcp.Replier) {
	e.stateless.HandleStateless(ctx, msg, r)
}

// ParamHeaders implements rev20260728.ToolHeaders: the unplanted server's
// x-mcp-header arguments, whose Mcp-Param headers the transport checks.
func (e statelessBeside) ParamHeaders(tool string) []rev.ParamHeader {
	if th, ok := e.stateless.(rev.ToolHeaders); ok {
		return th.ParamHeaders(tool)
	}
	return nil
}
