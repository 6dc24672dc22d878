package httplimit

import (
	"context"
	"net"
	"net/http"
	"sync"
)

// Server is the http.Server of Limits.Server. Its Shutdown closes at once
// the connections that have not begun a request: net/http's Shutdown
// waits five seconds for such a connection before it counts it idle, and
// an HTTP client may dial one it then never uses (it raced a connection
// that came free first). Five seconds is all of a stopping command's
// budget (refserver's child is killed then), so a client that merely
// dialled must not hold a stop that long.
type Server struct {
	*http.Server

	mu       sync.Mutex
	fresh    map[net.Conn]struct{} // connections in http.StateNew
	stopping bool                  // Shutdown has begun: a new connection is closed
	hook     func(net.Conn, http.ConnState)
}

func newServer(hs *http.Server) *Server {
	s := &Server{Server: hs, fresh: make(map[net.Conn]struct{})}
	hs.ConnState = s.connState
	return s
}

// SetConnState sets a hook called on every change of a connection's
// state, as http.Server.ConnState is (that field is Server's own). Set it
// before serving.
func (s *Server) SetConnState(hook func(net.Conn, http.ConnState)) {
	s.mu.Lock()
	s.hook = hook
	s.mu.Unlock()
}

func (s *Server) connState(c net.Conn, st http.ConnState) {
	s.mu.Lock()
	closeNow := false
	if st == http.StateNew {
		s.fresh[c] = struct{}{}
		closeNow = s.stopping
	} else {
		delete(s.fresh, c)
	}
	hook := s.hook
	s.mu.Unlock()
	if hook != nil {
		hook(c, st)
	}
	if closeNow {
		s.closeIfFresh(c)
	}
}

// Shutdown is http.Server.Shutdown, but closes the connections that have
// not begun a request first: they carry nothing to finish. A connection
// accepted while it runs is closed as it is seen.
func (s *Server) Shutdown(ctx context.Context) error {
	s.mu.Lock()
	s.stopping = true
	fresh := make([]net.Conn, 0, len(s.fresh))
	for c := range s.fresh {
		fresh = append(fresh, c)
	}
	s.mu.Unlock()
	for _, c := range fresh {
		s.closeIfFresh(c)
	}
	return s.Server.Shutdown(ctx)
}

// closeIfFresh closes c if no request has begun on it (a request moves
// it to http.StateActive).
func (s *Server) closeIfFresh(c net.Conn) {
	s.mu.Lock()
	_, ok := s.fresh[c]
	delete(s.fresh, c)
	s.mu.Unlock()
	if ok {
		_ = c.Close()
	}
}
