package client

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tasksim/tasksim/clock"
	"github.com/tasksim/tasksim/mcp"
)

// Bounds on the client's own writes, on its clock.
const (
	// serverRequestTimeout bounds the answer to a request from the server.
	serverRequestTimeout = 10 * time.Second
	// cancelNoticeTimeout bounds the write of notifications/cancelled.
	cancelNoticeTimeout = 5 * time.Second
)

// withTimeout is context.WithTimeout on c: on a simulated clock the
// context ends when simulated time passes d.
func withTimeout(parent context.Context, c clock.Clock, d time.Duration) (context.Context, context.CancelFunc) {
	if _, ok := c.(clock.System); ok {
		return context.WithTimeout(parent, d)
	}
	ctx, cancel := context.WithCancel(parent)
	t := c.AfterFunc(d, cancel)
	return ctx, func() {
		t.Stop()
		cancel()
	}
}

// Connect opens a connection with t and runs the initialization: the
// initialize request, then notifications/initialized. ctx bounds the
// handshake; the session lives until Close. A connection that says it
// speaks a revision without sessions (mcp.RevisionOfConn: 2026-07-28) is
// an error matching ErrRevisionMismatch.
func (c *Client) Connect(ctx context.Context, t mcp.Transport) (*Session, error) {
	conn, err := t.Connect(ctx)
	if err != nil {
		return nil, err
	}
	if err := checkRevision(conn, mcp.Revision.HasSessions, "it has no sessions: use ConnectStateless"); err != nil {
		conn.Close()
		return nil, err
	}
	s := &Session{
		client:  c,
		opts:    c.opts,
		conn:    conn,
		waiters: map[mcp.ID]*inbox[*mcp.Message]{},
		tasks:   map[string]*inbox[taskNote]{},
		pending: map[string][]taskNote{},
		ended:   map[string]bool{},
		calls:   map[mcp.ID]*recorder{},
		done:    make(chan struct{}),
	}
	if obs, ok := mcp.ConnAs[mcp.RequestObserver](conn); ok {
		obs.ObserveRequests(s.observeHTTP)
	}
	go s.readLoop()
	if err := s.Reinitialize(ctx); err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

// Session is one connection to a server, after initialization. Its
// methods may be called from several goroutines at once.
type Session struct {
	client *Client
	opts   Options
	conn   mcp.Conn
	nextID atomic.Int64

	mu      sync.Mutex
	init    mcp.InitializeResult
	waiters map[mcp.ID]*inbox[*mcp.Message]
	// tasks holds the notification inboxes of tasks a call follows;
	// pending the notifications of task ids nobody follows yet (a
	// server may announce a task before the response that creates it).
	tasks        map[string]*inbox[taskNote]
	pending      map[string][]taskNote
	pendingOrder []string
	// ended remembers tasks whose call is over, so that their late
	// notifications are dropped rather than kept.
	ended      map[string]bool
	endedOrder []string
	// calls attributes request ids to the timeline of the call that sent
	// them, for the transport's HTTP events.
	calls  map[mcp.ID]*recorder
	err    error // why the session ended
	closed bool
	done   chan struct{} // closed when the reader stops
	// notices counts the notifications/cancelled still being sent; Close
	// waits for them. Add only under mu while not closed.
	notices sync.WaitGroup
}

// Reinitialize runs the initialization again on the same connection: a
// new initialize request and notifications/initialized. Over Streamable
// HTTP this starts a new session, as the client MUST after a 404 to its
// session id (2025-11-25 Transports, "Session Management";
// mcp.ErrSessionGone).
func (s *Session) Reinitialize(ctx context.Context) error {
	params := mcp.InitializeParams{
		ProtocolVersion: s.opts.ProtocolVersion,
		Capabilities:    s.client.Capabilities(),
		ClientInfo:      mcp.Implementation{Name: s.opts.Name, Version: s.opts.Version},
	}
	var res mcp.InitializeResult
	if err := s.call(ctx, nil, mcp.MethodInitialize, params, &res); err != nil {
		return err
	}
	if !mcp.IsSupportedProtocolVersion(res.ProtocolVersion) {
		return fmt.Errorf("initialize: the server answered protocol version %q, which this client does not speak (it asked for %s)", res.ProtocolVersion, s.opts.ProtocolVersion)
	}
	s.mu.Lock()
	s.init = res
	s.mu.Unlock()
	return s.notify(ctx, mcp.NotificationInitialized, nil)
}

// InitializeResult returns the server's answer to initialize.
func (s *Session) InitializeResult() mcp.InitializeResult {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.init
}

// Conn returns the session's connection, for its optional interfaces
// (mcp.StatsReporter).
func (s *Session) Conn() mcp.Conn { return s.conn }

// Err returns why the session ended, or nil while it runs.
func (s *Session) Err() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.err
}

// Close closes the connection (over Streamable HTTP, with a DELETE of the
// session) and fails whatever still waits with ErrClosed. It first waits
// for the notifications/cancelled still being sent, each for at most 5 s.
func (s *Session) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	s.mu.Unlock()
	// A cancel still on its way goes out first: without it the server
	// runs on what the client gave up (each is bounded by
	// cancelNoticeTimeout).
	s.notices.Wait()
	s.fail(ErrClosed)
	err := s.conn.Close()
	<-s.done
	return err
}

// newID returns a fresh request id.
func (s *Session) newID() mcp.ID { return mcp.IntID(s.nextID.Add(1)) }

// register prepares to receive the answers to id; rec, if any, gets the
// HTTP events of the request.
func (s *Session) register(id mcp.ID, rec *recorder) (*inbox[*mcp.Message], error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err != nil {
		return nil, s.err
	}
	w := newInbox[*mcp.Message]()
	s.waiters[id] = w
	if rec != nil {
		s.calls[id] = rec
	}
	return w, nil
}

func (s *Session) unregister(id mcp.ID) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.waiters, id)
	delete(s.calls, id)
}

// send writes a request whose answers will arrive in the returned inbox;
// the caller unregisters id when done.
func (s *Session) send(ctx context.Context, rec *recorder, id mcp.ID, method string, params any) (*inbox[*mcp.Message], error) {
	msg, err := mcp.NewRequest(id, method, params)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", method, err)
	}
	w, err := s.register(id, rec)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", method, err)
	}
	rec.add(Event{Kind: EventRequestSent, Method: method, RequestID: id})
	if err := s.conn.Write(ctx, msg); err != nil {
		s.unregister(id)
		return nil, fmt.Errorf("%s: %w", method, err)
	}
	return w, nil
}

// request sends a request and waits for its one answer. When ctx ends
// first, the server is told with notifications/cancelled (2025-11-25
// Transports, "Sending Messages to the Server": disconnection is not
// cancellation, the client cancels explicitly).
func (s *Session) request(ctx context.Context, rec *recorder, method string, params any) (*mcp.Message, error) {
	id := s.newID()
	w, err := s.send(ctx, rec, id, method, params)
	if err != nil {
		return nil, err
	}
	defer s.unregister(id)
	for {
		m, err := w.next(ctx)
		if err != nil {
			if ctx.Err() != nil {
				s.cancelRequest(id, "the client stopped waiting")
				return nil, fmt.Errorf("%s: no answer: %w", method, ctx.Err())
			}
			return nil, fmt.Errorf("%s: %w", method, err)
		}
		if m.Kind() != mcp.KindResponse {
			continue // progress for a request that asked for none
		}
		e := Event{Kind: EventResponse, Method: method, RequestID: id}
		if m.Error != nil {
			e.Err = m.Error
		}
		rec.add(e)
		return m, nil
	}
}

// call sends a request and decodes its result into out; a JSON-RPC error
// answer is returned as the *mcp.Error, wrapped with the method.
func (s *Session) call(ctx context.Context, rec *recorder, method string, params, out any) error {
	m, err := s.request(ctx, rec, method, params)
	if err != nil {
		return err
	}
	return decodeResult(method, m, out)
}

func decodeResult(method string, m *mcp.Message, out any) error {
	if m.Error != nil {
		return fmt.Errorf("%s: %w", method, m.Error)
	}
	if out == nil {
		return nil
	}
	if err := json.Unmarshal(m.Result, out); err != nil {
		return fmt.Errorf("%s: malformed result: %w", method, err)
	}
	return nil
}

// notify sends a notification.
func (s *Session) notify(ctx context.Context, method string, params any) error {
	msg, err := mcp.NewNotification(method, params)
	if err != nil {
		return fmt.Errorf("%s: %w", method, err)
	}
	if err := s.conn.Write(ctx, msg); err != nil {
		return fmt.Errorf("%s: %w", method, err)
	}
	return nil
}

// cancelRequest tells the server the client no longer waits for id,
// unless the session is closing.
func (s *Session) cancelRequest(id mcp.ID, reason string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return
	}
	s.notices.Add(1)
	go func() {
		defer s.notices.Done()
		ctx, cancel := withTimeout(context.Background(), s.opts.Clock, cancelNoticeTimeout)
		defer cancel()
		_ = s.notify(ctx, mcp.NotificationCancelled, mcp.CancelledParams{RequestID: id, Reason: reason})
	}()
}
