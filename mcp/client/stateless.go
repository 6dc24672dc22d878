package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/tasksim/tasksim/mcp"
	rev "github.com/tasksim/tasksim/mcp/rev20260728"
	"github.com/tasksim/tasksim/mcp/rev20260728/tasks"
)

// The stateless era (2026-07-28): no initialize and no session. Every
// request carries the protocol version and the client's capabilities in
// its own _meta (2026-07-28 Overview, "Per-request protocol fields"); a
// request whose answer was lost with its stream is re-issued with a new id
// (changelog item 9). Stateless holds the connection; CallTool
// (stateless_call.go) follows one tool call through its multi round-trip
// input and its task.
//
//	Conn.Read ─▶ reader ─┬─ response, by id ─────────▶ the request waiting for it
//	                     ├─ *mcp.StreamError, by id ─▶ that request: re-issued with a new id
//	                     ├─ request from the server ─▶ -32601 (input travels in results here)
//	                     └─ notification ─┬─────────▶ Options.OnNotification
//	                                      └─ of a listen, by subscription id ─▶ its listenBox
//
// A call that follows its task by push (StatelessCallOptions.Listen,
// stateless_listen.go) holds one more long-lived request,
// subscriptions/listen, whose notifications carry the listen's id as their
// subscription id (2026-07-28 Subscriptions, "Receiving Notifications");
// the reader hands them to that call's box.

// ErrInvalidResult matches the error of a result the client cannot read:
// an unknown resultType (one the revision and the extensions the request
// declared do not define, 2026-07-28 Overview, "ResultType": invalid), or
// a result whose shape its resultType does not allow.
var ErrInvalidResult = errors.New("invalid result")

// DefaultMaxReissues is how many times a request whose stream broke before
// its answer is re-issued when Options.MaxReissues is 0.
const DefaultMaxReissues = 3

// Stateless is a connection to a server in the stateless era. Its methods
// may be called from several goroutines at once.
type Stateless struct {
	client *Client
	opts   Options
	conn   mcp.Conn
	nextID atomic.Int64
	// overHTTP: closing a request's stream cancels it (the transport does
	// when the request's ctx ends); otherwise the client sends
	// notifications/cancelled (2026-07-28 cancellation: stdio only).
	overHTTP bool

	mu      sync.Mutex
	waiters map[mcp.ID]chan statelessAnswer
	boxes   map[mcp.ID]*listenBox // open listens, by request id
	err     error
	closed  bool
	done    chan struct{}
}

// statelessAnswer is what the reader hands a waiting request: its
// response, or the loss of its stream.
type statelessAnswer struct {
	msg  *mcp.Message
	lost *mcp.StreamError
}

// ConnectStateless opens a connection with t for the stateless era. It
// sends nothing: there is no handshake (use Discover to ask the server
// what it speaks). Over Streamable HTTP, t must speak the stateless
// revision (streamhttp.ClientTransport.Revision): a connection that says
// it speaks another (mcp.RevisionOfConn) is an error matching
// ErrRevisionMismatch.
func (c *Client) ConnectStateless(ctx context.Context, t mcp.Transport) (*Stateless, error) {
	conn, err := t.Connect(ctx)
	if err != nil {
		return nil, err
	}
	if err := checkRevision(conn, mcp.Revision.IsStateless, "it is not stateless: use Connect, or set streamhttp.ClientTransport.Revision"); err != nil {
		conn.Close()
		return nil, err
	}
	s := &Stateless{client: c, opts: c.opts, conn: conn, waiters: map[mcp.ID]chan statelessAnswer{}, boxes: map[mcp.ID]*listenBox{}, done: make(chan struct{})}
	_, s.overHTTP = mcp.ConnAs[mcp.RequestObserver](conn)
	go s.readLoop()
	return s, nil
}

// Conn returns the connection, for its optional interfaces.
func (s *Stateless) Conn() mcp.Conn { return s.conn }

// Close closes the connection; whatever still waits fails with ErrClosed.
func (s *Stateless) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	s.mu.Unlock()
	s.fail(ErrClosed)
	err := s.conn.Close()
	<-s.done
	return err
}

// Capabilities returns what the client declares in every request's
// _meta: elicitation (the input a multi round-trip request or a task may
// ask for is answered by the caller) and, unless noTasks, the tasks
// extension (Tasks, "Capability Negotiation").
func (c *Client) statelessCapabilities(noTasks bool) *rev.ClientCapabilities {
	caps := rev.ClientCapabilities{Elicitation: json.RawMessage(`{"form":{}}`)}
	if !noTasks {
		caps = caps.WithExtension(tasks.ExtensionID)
	}
	return &caps
}

// meta returns the _meta of a request (2026-07-28 Overview, "Per-request
// protocol fields").
func (s *Stateless) meta(noTasks bool) *rev.RequestMeta {
	return &rev.RequestMeta{
		ProtocolVersion:    rev.ProtocolVersion,
		ClientInfo:         &mcp.Implementation{Name: s.opts.Name, Version: s.opts.Version},
		ClientCapabilities: s.client.statelessCapabilities(noTasks),
	}
}

// Discover asks the server for its versions and capabilities
// (2026-07-28 server/discover). The result is checked; a server that
// does not speak the revision answers with an error.
func (s *Stateless) Discover(ctx context.Context) (*rev.DiscoverResult, error) {
	m, err := s.request(ctx, nil, rev.MethodServerDiscover, rev.DiscoverParams{Meta: s.meta(true)}, nil)
	if err != nil {
		return nil, err
	}
	var res rev.DiscoverResult
	if err := decodeResult(rev.MethodServerDiscover, m, &res); err != nil {
		return nil, err
	}
	if err := res.Validate(); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInvalidResult, err)
	}
	return &res, nil
}

// SupportsRevision reports whether a discover result lists the stateless
// revision.
func SupportsRevision(d *rev.DiscoverResult) bool {
	return d != nil && slices.Contains(d.SupportedVersions, rev.ProtocolVersion)
}

func (s *Stateless) readLoop() {
	defer close(s.done)
	for {
		m, err := s.conn.Read(context.Background())
		if err != nil {
			var lost *mcp.StreamError
			if errors.As(err, &lost) {
				s.hand(lost.ID, statelessAnswer{lost: lost})
				continue
			}
			s.fail(fmt.Errorf("connection: %w", err))
			return
		}
		switch m.Kind() {
		case mcp.KindResponse:
			s.hand(m.ID, statelessAnswer{msg: m})
		case mcp.KindRequest:
			// This revision has no server-to-client requests outside of
			// results (2026-07-28 Multi Round-Trip Requests).
			reply := mcp.NewError(m.ID, mcp.Errorf(mcp.CodeMethodNotFound, "Method not found: %s", m.Method))
			go func() {
				ctx, cancel := withTimeout(context.Background(), s.opts.Clock, serverRequestTimeout)
				defer cancel()
				_ = s.conn.Write(ctx, reply)
			}()
		case mcp.KindNotification:
			s.route(m)
			if s.opts.OnNotification != nil {
				s.opts.OnNotification(m)
			}
		}
	}
}

// hand gives an answer to the request waiting for id; one nobody waits
// for (a request given up) is dropped.
func (s *Stateless) hand(id mcp.ID, a statelessAnswer) {
	s.mu.Lock()
	w, ok := s.waiters[id]
	delete(s.waiters, id)
	s.mu.Unlock()
	if ok {
		w <- a // buffered, one answer per id
	}
}

// fail ends every waiting request with err, and every later one.
func (s *Stateless) fail(err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err == nil {
		s.err = err
	}
	for id, w := range s.waiters {
		close(w)
		delete(s.waiters, id)
	}
}

// request sends a request and waits for its answer. When the stream
// carrying the answer breaks first, the request is re-issued with a new
// id (2026-07-28 changelog item 9: a broken stream loses the request; the
// client re-issues it as a new request with a new id), at most
// MaxReissues times, each on rec as EventReissued and told to note (which
// may be nil). When ctx ends first,
// the request is cancelled: over HTTP its stream is closed, otherwise
// notifications/cancelled is sent.
func (s *Stateless) request(ctx context.Context, rec *recorder, method string, params any, note func(Reissue)) (*mcp.Message, error) {
	limit := s.opts.MaxReissues
	if limit == 0 {
		limit = DefaultMaxReissues
	}
	var prev mcp.ID
	for tries := 0; ; tries++ {
		id := mcp.IntID(s.nextID.Add(1))
		if !prev.IsZero() {
			rec.add(Event{Kind: EventReissued, Method: method, RequestID: id,
				Detail: fmt.Sprintf("re-issued request %s as %s: its stream broke before the answer", prev, id)})
			if note != nil {
				note(Reissue{Method: method, Old: prev, New: id})
			}
		}
		a, err := s.roundTrip(ctx, rec, id, method, params)
		if err != nil {
			return nil, err
		}
		if a.lost == nil {
			return a.msg, nil
		}
		rec.add(Event{Kind: EventStreamLost, Method: method, RequestID: id, Err: a.lost})
		if tries >= limit {
			return nil, fmt.Errorf("%s: %w (re-issued %d times)", method, a.lost, tries)
		}
		prev = id
	}
}

// roundTrip sends one request with id and waits for its answer.
func (s *Stateless) roundTrip(ctx context.Context, rec *recorder, id mcp.ID, method string, params any) (statelessAnswer, error) {
	msg, err := mcp.NewRequest(id, method, params)
	if err != nil {
		return statelessAnswer{}, fmt.Errorf("%s: %w", method, err)
	}
	w := make(chan statelessAnswer, 1)
	s.mu.Lock()
	if s.err != nil {
		err := s.err
		s.mu.Unlock()
		return statelessAnswer{}, fmt.Errorf("%s: %w", method, err)
	}
	s.waiters[id] = w
	s.mu.Unlock()
	rec.add(Event{Kind: EventRequestSent, Method: method, RequestID: id})
	if err := s.conn.Write(ctx, msg); err != nil {
		s.drop(id)
		return statelessAnswer{}, fmt.Errorf("%s: %w", method, err)
	}
	select {
	case a, ok := <-w:
		if !ok {
			s.mu.Lock()
			err := s.err
			s.mu.Unlock()
			return statelessAnswer{}, fmt.Errorf("%s: %w", method, err)
		}
		if a.msg != nil {
			rec.add(Event{Kind: EventResponse, Method: method, RequestID: id, Err: errOrNil(a.msg.Error)})
		}
		return a, nil
	case <-ctx.Done():
		s.drop(id)
		if !s.overHTTP {
			s.cancelNotice(id)
		}
		return statelessAnswer{}, fmt.Errorf("%s: no answer: %w", method, ctx.Err())
	}
}

func errOrNil(e *mcp.Error) error {
	if e == nil {
		return nil
	}
	return e
}

func (s *Stateless) drop(id mcp.ID) {
	s.mu.Lock()
	delete(s.waiters, id)
	s.mu.Unlock()
}

// cancelNotice sends notifications/cancelled for id, bounded on the
// client's clock (2026-07-28: the stdio way of cancelling a request).
func (s *Stateless) cancelNotice(id mcp.ID) {
	msg, err := mcp.NewNotification(mcp.NotificationCancelled, mcp.CancelledParams{RequestID: id, Reason: "the client stopped waiting"})
	if err != nil {
		return
	}
	ctx, cancel := withTimeout(context.Background(), s.opts.Clock, cancelNoticeTimeout)
	defer cancel()
	_ = s.conn.Write(ctx, msg)
}

// maxToolPages bounds the pages ListTools follows.
const maxToolPages = 100

// ListTools lists the server's tools (tools/list in the stateless era),
// following nextCursor over at most maxToolPages pages. A tool whose
// x-mcp-header annotations break the rules is left out: over Streamable
// HTTP a client MUST exclude it, so that one malformed definition does not
// keep the others from use (2026-07-28 Streamable HTTP, "Schema
// Extension"); over stdio it could be kept, but a tool list should not
// depend on the transport.
func (s *Stateless) ListTools(ctx context.Context) ([]mcp.Tool, error) {
	var all []mcp.Tool
	cursor := ""
	for range maxToolPages {
		params := struct {
			Meta   *rev.RequestMeta `json:"_meta"`
			Cursor string           `json:"cursor,omitempty"`
		}{s.meta(true), cursor}
		m, err := s.request(ctx, nil, mcp.MethodToolsList, params, nil)
		if err != nil {
			return nil, err
		}
		var res rev.ListToolsResult
		if err := decodeResult(mcp.MethodToolsList, m, &res); err != nil {
			return nil, err
		}
		for _, t := range res.Tools {
			if _, err := rev.ParamHeaders(t.InputSchema); err == nil {
				all = append(all, t)
			}
		}
		if cursor = res.NextCursor; cursor == "" {
			return all, nil
		}
	}
	return all, fmt.Errorf("%s: more than %d pages", mcp.MethodToolsList, maxToolPages)
}
