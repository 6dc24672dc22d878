package stdio

import (
	"context"
	"slices"
	"sync"

	"github.com/tasksim/tasksim/mcp"
	rev "github.com/tasksim/tasksim/mcp/rev20260728"
)

// statelessRoute hands the messages of the stateless era (2026-07-28) to
// an endpoint that serves it, beside the process's one session. Over stdio
// there are no routing headers to check; the endpoint checks the rest.
type statelessRoute struct {
	ep mcp.StatelessEndpoint // nil: the endpoint serves the session era only
	// all says the endpoint serves no session era: every message is
	// stateless, initialize included (it gets the version error).
	all bool
	// running are the stateless requests not yet answered, by id.
	running *running
}

func newStatelessRoute(ep mcp.Endpoint) statelessRoute {
	se, ok := ep.(mcp.StatelessEndpoint)
	if !ok {
		return statelessRoute{}
	}
	return statelessRoute{ep: se, all: !slices.ContainsFunc(se.Revisions(), mcp.Revision.HasSessions),
		running: &running{byID: map[mcp.ID]*runningReq{}}}
}

// running tracks the stateless requests being answered, so that
// notifications/cancelled can reach them: over stdio there is no
// per-request stream to close, and the client MUST send it instead
// (2026-07-28 Cancellation, "Transport-Specific Cancellation").
type running struct {
	mu   sync.Mutex
	byID map[mcp.ID]*runningReq
}

type runningReq struct {
	cancel context.CancelFunc
	listen bool // a subscriptions/listen, open until cancelled
}

// start returns the context of the stateless request id, a child of ctx,
// and the func that ends its tracking once it is answered. Request ids
// MUST NOT collide with the sender's outstanding ones (2026-07-28 Base
// Protocol, "Requests"); a request that reuses one replaces it as the one
// a cancellation names.
func (r *running) start(ctx context.Context, msg *mcp.Message) (context.Context, func()) {
	id := msg.ID
	ctx, cancel := context.WithCancel(ctx)
	req := &runningReq{cancel: cancel, listen: msg.Method == rev.MethodSubscriptionsListen}
	r.mu.Lock()
	r.byID[id] = req
	r.mu.Unlock()
	return ctx, func() {
		r.mu.Lock()
		if r.byID[id] == req {
			delete(r.byID, id)
		}
		r.mu.Unlock()
		cancel()
	}
}

// endListens cancels every open subscriptions/listen: the client closed
// its side of the pipe, and a subscription ends when the underlying
// transport closes (2026-07-28 Subscriptions, "Cancellation"). Other
// requests are still answered.
func (r *running) endListens() {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, req := range r.byID {
		if req.listen {
			req.cancel()
		}
	}
}

// cancel ends the stateless request that msg, a notifications/cancelled,
// names, and reports whether one was running. The endpoint then stops it
// and sends no response (2026-07-28 Cancellation, "Behavior
// Requirements").
func (r *running) cancel(msg *mcp.Message) bool {
	var p mcp.CancelledParams
	if err := mcp.DecodeParams(msg.Params, &p); err != nil || p.RequestID.IsZero() {
		return false
	}
	r.mu.Lock()
	req := r.byID[p.RequestID]
	r.mu.Unlock()
	if req == nil {
		return false
	}
	req.cancel()
	return true
}

// takes reports whether msg is of the stateless era: a request whose
// params carry the per-request _meta (2026-07-28 Versioning, "Backward
// Compatibility with Initialization-Based Versions": "A request carrying
// modern per-request _meta is served statelessly"). An initialize without
// it scopes the session era to the process; one with it is a request of a
// revision that has no initialize, and gets -32601. Notifications stay
// with the session, but for a notifications/cancelled that names a
// running stateless request (cancels).
func (s statelessRoute) takes(msg *mcp.Message) bool {
	switch {
	case s.ep == nil:
		return false
	case s.all:
		return true
	}
	return msg.Kind() == mcp.KindRequest && rev.HasRequestMeta(msg.Params)
}

// cancels reports whether msg is a notifications/cancelled for a running
// stateless request, and if so cancels it. The eras share the pipe's id
// space, so a cancellation that names a stateless request is that
// request's, never the session's.
func (s statelessRoute) cancels(msg *mcp.Message) bool {
	return s.ep != nil && msg.Kind() == mcp.KindNotification && msg.Method == mcp.NotificationCancelled && s.running.cancel(msg)
}
