package sim

import (
	"io"
	"net/http"
	"sync"

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

func newNode(c *clock.Sim, taskIDs, sessionIDs io.Reader, bugs Bugs) *node {
	n := &node{clock: c, taskIDs: taskIDs, sess: sessionIDs, bugs: bugs}
	n.make()
	return n
}

// make starts a fresh server, with the planted bugs. n.mu must be held
// once n is shared.
func (n *node) make() {
	n.srv = server.New(n.bugs.ServerOptions(&server.Options{Clock: n.clock, Rand: n.taskIDs}))
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
