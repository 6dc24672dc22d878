package harness

import (
	"context"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/tasksim/tasksim/recorder"
)

// ServeLoopback serves h on a free loopback port. stop ends the requests
// still open (their context ends, cause recorder.ErrStopped), closes the
// server and returns once every handler has returned: a handler of the
// recording proxy records what passed up to its last moment (an SSE
// event's hand-over, the exchange's end), and a trace closed after stop
// holds all of it.
func ServeLoopback(h http.Handler, connState func(net.Conn, http.ConnState)) (base string, stop func(), err error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, err
	}
	baseCtx, cancel := context.WithCancelCause(context.Background())
	var running handlers
	hs := &http.Server{
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if !running.enter() {
				return // stop began: the connection is being closed
			}
			defer running.leave()
			h.ServeHTTP(w, r)
		}),
		ReadHeaderTimeout: 10 * time.Second,
		ConnState:         connState,
		BaseContext:       func(net.Listener) context.Context { return baseCtx },
	}
	done := make(chan struct{})
	go func() { defer close(done); hs.Serve(ln) }()
	return "http://" + ln.Addr().String(), func() {
		cancel(recorder.ErrStopped)
		hs.Close()
		<-done
		running.wait()
	}, nil
}

// handlers counts the handlers of a server that are running, so that its
// stop can wait for them.
type handlers struct {
	mu      sync.Mutex
	stopped bool
	wg      sync.WaitGroup
}

// enter counts a handler in; false once wait was called.
func (h *handlers) enter() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.stopped {
		return false
	}
	h.wg.Add(1)
	return true
}

func (h *handlers) leave() { h.wg.Done() }

// wait lets no handler in any more and waits for those running.
func (h *handlers) wait() {
	h.mu.Lock()
	h.stopped = true
	h.mu.Unlock()
	h.wg.Wait()
}
