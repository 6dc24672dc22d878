package sim

import (
	"context"
	"io"
	"math/rand/v2"
	"net/http"
	"slices"
	"sync"
	"time"

	"github.com/tasksim/tasksim/clock"
	"github.com/tasksim/tasksim/mcp"
	"github.com/tasksim/tasksim/mcp/server"
	"github.com/tasksim/tasksim/mcp/streamhttp"
)

// node is the reference server of a run, which a server-restart fault
// replaces with a fresh one that knows no session and no task, as a
// restarted process would. It serves both transports: as an http.Handler
// (Streamable HTTP) and as an mcp.Endpoint (stdio).
type node struct {
	clock         *clock.Sim
	taskIDs, sess io.Reader
	bugs          Bugs
	serves        serves

	mu    sync.Mutex
	conns []mcp.Conn // stdio connections, which a restart ends
	srv   *server.Server
	h     *streamhttp.Handler
	// ep and served are the server as stdio serves it and the
	// handler as HTTP serves it: srv and h with the planted bugs.
	ep       mcp.Endpoint
	served   http.Handler
	restarts int
	closed   bool
}

// serves is what the server of a run serves besides its defaults: the
// revisions (nil: both), the pollIntervalMs it suggests (0: its
// default) and its requestState key.
type serves struct {
	revisions    []mcp.Revision
	pollInterval time.Duration
	// stateKeys is the source of the key that seals the requestState of
	// a multi round-trip request: seeded, so that a seed's run
	// writes the same requestState, hence the same trace, every time.
	stateKeys io.Reader
}

// nodeServes is what the server of a run of schedule s serves.
func nodeServes(s Schedule) serves {
	w := s.Workload
	sv := serves{stateKeys: rand.NewChaCha8(seedKey(s.Seed, 3))}
	if w.Server == ServerStateless {
		sv.revisions = []mcp.Revision{mcp.Revision20260728}
	}
	sv.pollInterval = time.Duration(w.PollIntervalMs) * time.Millisecond
	return sv
}

func newNode(c *clock.Sim, taskIDs, sessionIDs io.Reader, bugs Bugs, sv serves) *node {
	n := &node{clock: c, taskIDs: taskIDs, sess: sessionIDs, bugs: bugs, serves: sv}
	n.make()
	return n
}

// make starts a fresh server, with the planted bugs. n.mu must be held
// once n is shared.
func (n *node) make() {
	n.srv = server.New(n.bugs.ServerOptions(&server.Options{Clock: n.clock, Rand: n.taskIDs, StateRand: n.serves.stateKeys, Revisions: n.serves.revisions, PollInterval: n.serves.pollInterval}))
	n.h = streamhttp.NewHandler(n.bugs.HTTP(n.srv), &streamhttp.Options{Clock: n.clock, Rand: n.sess})
	n.ep, n.served = n.bugs.Stdio(n.srv), n.bugs.WrapHandler(n.h)
}

// restart ends the server and starts a fresh one.
func (n *node) restart() {
	n.mu.Lock()
	if n.closed {
		n.mu.Unlock()
		return
	}
	oldSrv, oldH := n.srv, n.h
	n.make()
	n.restarts++
	conns := n.conns
	n.conns = nil
	n.mu.Unlock()
	// Over stdio the server is the process at the other end of the pipes:
	// when it restarts, they close, before anything more of it comes out.
	for _, c := range conns {
		c.Close()
	}
	oldH.Close()
	oldSrv.Close()
}

// stdio notes a client's stdio connection to the server.
func (n *node) stdio(c mcp.Conn) mcp.Conn {
	n.mu.Lock()
	n.conns = append(n.conns, c)
	n.mu.Unlock()
	return c
}

func (n *node) close() {
	n.mu.Lock()
	n.closed = true
	srv, h := n.srv, n.h
	n.mu.Unlock()
	h.Close()
	srv.Close()
}

// ServeHTTP implements http.Handler with the current server.
func (n *node) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	n.mu.Lock()
	h := n.served
	n.mu.Unlock()
	h.ServeHTTP(w, r)
}

// NewSession implements mcp.Endpoint with the current server.
func (n *node) NewSession(out mcp.Outbox) mcp.Session {
	n.mu.Lock()
	ep := n.ep
	n.mu.Unlock()
	return ep.NewSession(out)
}

// Revisions implements mcp.StatelessEndpoint: the revisions the run's
// server serves, which a restart does not change. Over stdio the
// transport finds by it that the node serves 2026-07-28 requests
// (HandleStateless) beside sessions, as the server it stands for does.
func (n *node) Revisions() []mcp.Revision {
	if len(n.serves.revisions) == 0 {
		return mcp.Revisions()
	}
	return slices.Clone(n.serves.revisions)
}

// HandleStateless implements mcp.StatelessEndpoint with the current
// server.
func (n *node) HandleStateless(ctx context.Context, msg *mcp.Message, r mcp.Replier) {
	n.mu.Lock()
	ep := n.ep
	n.mu.Unlock()
	se, ok := ep.(mcp.StatelessEndpoint)
	if !ok {
		if r != nil {
			_ = r.Reply(ctx, mcp.NewError(msg.ID, mcp.Errorf(mcp.CodeInternalError, "the server serves no stateless revision")), true)
		}
		return
	}
	se.HandleStateless(ctx, msg, r)
}
