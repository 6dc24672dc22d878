package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tasksim/tasksim/clock"
	"github.com/tasksim/tasksim/mcp"
)

// Defaults of Options.
const (
	// DefaultPollInterval is the polling interval when neither the call
	// nor the task sets one.
	DefaultPollInterval = time.Second
	// DefaultMaxPending caps the notifications kept for one task id that no
	// call has claimed yet, and the number of such task ids.
	DefaultMaxPending = 1024
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

// Options configure a Client. The zero value (or nil) gives a client that
// declares everything: all three SEP-1905 response modes and SEP-2679
// partial notifications.
type Options struct {
	// Name and Version go into clientInfo; defaults "tasksim" and "dev".
	Name, Version string
	// ProtocolVersion is the revision asked for in initialize; default
	// mcp.LatestProtocolVersion.
	ProtocolVersion string
	// Modes are the SEP-1905 response modes declared in
	// tasks.responses.modes; nil means all three.
	Modes []mcp.ResponseMode
	// NoModes declares no tasks.responses and sends no responseModes:
	// a client without SEP-1905.
	NoModes bool
	// NoPartial leaves tasks.streaming.partial undeclared (SEP-2679 §2.2),
	// so a conforming server sends no partial notifications.
	NoPartial bool
	// DefaultPollInterval is used when neither the call nor the task sets
	// an interval; 0 means DefaultPollInterval.
	DefaultPollInterval time.Duration
	// MaxPending caps notifications buffered for task ids not claimed yet;
	// 0 means DefaultMaxPending.
	MaxPending int
	// OnNotification sees every notification, from the reader goroutine;
	// it must not block.
	OnNotification func(*mcp.Message)
	// Clock is the client's time: timelines, CallResult.Start and End,
	// the poll and cancel timers, the ttl check and the bounds on its own
	// writes. nil means the wall clock; a clock.Sim makes every wait of
	// the client move only when the simulation moves time.
	Clock clock.Clock
	// Bugs plants known bugs, for tests only (see Bugs); zero for any
	// other use.
	Bugs Bugs
}

// Bugs plants one known client bug, for tests only: the check suite's
// tests (sim) break the reference client one bug at a time and expect
// exactly the rule that names it to fail. Each field names its rule.
type Bugs struct {
	// NoDedup keeps segments received twice in the result (CLIENT-DEDUP).
	NoDedup bool
	// NoResume gives a lost stream up instead of resuming it with
	// tasks/result and lastSeqNr (CLIENT-RESUME); give the transport no
	// resumption either (streamhttp.ClientTransport.NoResume).
	NoResume bool
	// IgnorePollInterval polls tasks/get every 10ms whatever the task's
	// pollInterval (CLIENT-POLL-INTERVAL).
	IgnorePollInterval bool
}

func (o *Options) withDefaults() Options {
	var out Options
	if o != nil {
		out = *o
	}
	if out.Name == "" {
		out.Name = "tasksim"
	}
	if out.Version == "" {
		out.Version = "dev"
	}
	if out.ProtocolVersion == "" {
		out.ProtocolVersion = mcp.LatestProtocolVersion
	}
	if out.Modes == nil {
		out.Modes = mcp.AllModes
	}
	if out.NoModes {
		out.Modes = nil
	}
	if out.DefaultPollInterval <= 0 {
		out.DefaultPollInterval = DefaultPollInterval
	}
	if out.MaxPending <= 0 {
		out.MaxPending = DefaultMaxPending
	}
	out.Clock = clock.Or(out.Clock)
	return out
}

// Client is the reference client. It holds options; Connect opens
// sessions.
type Client struct {
	opts Options
}

// New returns a client. A nil opts gives every default.
func New(opts *Options) *Client { return &Client{opts: opts.withDefaults()} }

// Capabilities returns what the client declares in initialize: SEP-1905's
// tasks.responses.modes and SEP-2679's tasks.streaming.partial.
func (c *Client) Capabilities() mcp.ClientCapabilities {
	var tasks *mcp.TasksCapability
	if len(c.opts.Modes) > 0 {
		tasks = &mcp.TasksCapability{Responses: &mcp.ResponsesCapability{Modes: c.opts.Modes}}
	}
	if !c.opts.NoPartial {
		if tasks == nil {
			tasks = &mcp.TasksCapability{}
		}
		tasks.Streaming = &mcp.StreamingCapability{Partial: &mcp.Empty{}}
	}
	return mcp.ClientCapabilities{Tasks: tasks}
}

// Connect opens a connection with t and runs the initialization: the
// initialize request, then notifications/initialized. ctx bounds the
// handshake; the session lives until Close.
func (c *Client) Connect(ctx context.Context, t mcp.Transport) (*Session, error) {
	conn, err := t.Connect(ctx)
	if err != nil {
		return nil, err
	}
	s := &Session{
		client:  c,
		opts:    c.opts,
		conn:    conn,
		waiters: map[mcp.ID]*inbox[*mcp.Message]{},
		streams: map[mcp.ID]*call{},
		tasks:   map[string]*taskFollow{},
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
	// streams holds the tools/call ids whose answers stream (SEP-1905),
	// by call: the reader hands one a response directly when it can
	// (call.answerNow).
	streams map[mcp.ID]*call
	// tasks holds the notification inboxes of tasks a call follows;
	// pending the notifications of task ids nobody follows yet (a
	// server may announce a task before the response that creates it).
	tasks        map[string]*taskFollow
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

// readLoop hands every message to whoever waits for it, until the
// connection fails or closes.
func (s *Session) readLoop() {
	defer close(s.done)
	for {
		msg, err := s.conn.Read(context.Background())
		if err != nil {
			var se *mcp.StreamError
			if errors.As(err, &se) {
				s.mu.Lock()
				w := s.waiters[se.ID]
				s.mu.Unlock()
				if w != nil {
					w.fail(se)
				}
				continue
			}
			s.fail(fmt.Errorf("connection lost: %w", err))
			return
		}
		switch msg.Kind() {
		case mcp.KindResponse:
			s.mu.Lock()
			w, c := s.waiters[msg.ID], s.streams[msg.ID]
			s.mu.Unlock()
			if c != nil && c.answerNow(msg) {
				continue
			}
			if w != nil {
				w.push(msg)
			}
		case mcp.KindNotification:
			s.routeNotification(msg)
		case mcp.KindRequest:
			go s.answerServerRequest(msg)
		}
	}
}

// fail ends the session with err: every waiter and task inbox fails.
func (s *Session) fail(err error) {
	s.mu.Lock()
	if s.err == nil {
		s.err = err
	}
	err = s.err
	waiters, tasks := s.waiters, s.tasks
	s.waiters, s.tasks = map[mcp.ID]*inbox[*mcp.Message]{}, map[string]*taskFollow{}
	s.mu.Unlock()
	for _, w := range waiters {
		w.fail(err)
	}
	for _, t := range tasks {
		t.in.fail(err)
	}
}

// routeNotification passes task notifications to the call following the
// task, or keeps them until one does; progress goes to the request whose
// token it carries. A partial's params are decoded here, once, and handed
// to its call as they are.
func (s *Session) routeNotification(msg *mcp.Message) {
	if f := s.opts.OnNotification; f != nil {
		f(msg)
	}
	switch msg.Method {
	case mcp.NotificationTaskStatus, mcp.NotificationTaskPartial:
		var note taskNote
		var taskID string
		if msg.Method == mcp.NotificationTaskPartial {
			p := new(mcp.TaskPartialParams)
			// Not json.Unmarshal: it would check the JSON once more
			// before calling the method, which checks it itself.
			if p.UnmarshalJSON(msg.Params) == nil {
				note.partial, taskID = p, p.TaskID
			}
		}
		if note.partial == nil {
			var p struct {
				TaskID string `json:"taskId"`
			}
			if json.Unmarshal(msg.Params, &p) != nil {
				return
			}
			taskID = p.TaskID
		}
		if taskID == "" {
			return
		}
		note.msg = msg
		s.mu.Lock()
		t := s.tasks[taskID]
		if t == nil {
			if !s.ended[taskID] {
				s.keepPending(taskID, note)
			}
			s.mu.Unlock()
			return
		}
		s.mu.Unlock()
		if note.partial != nil && t.call.partialNow(note.partial) {
			return
		}
		t.in.push(note)
	case mcp.NotificationProgress:
		var p struct {
			ProgressToken json.RawMessage `json:"progressToken"`
		}
		if json.Unmarshal(msg.Params, &p) != nil {
			return
		}
		var id mcp.ID
		if id.UnmarshalJSON(p.ProgressToken) != nil {
			return
		}
		s.mu.Lock()
		w := s.waiters[id]
		s.mu.Unlock()
		if w != nil {
			w.push(msg)
		}
	}
}

// taskFollow is a call following its task's notifications: what the
// call's goroutine takes from in, and the call, to which the reader hands
// a partial directly when it can (call.partialNow).
type taskFollow struct {
	in   *inbox[taskNote]
	call *call
}

// keepPending buffers a notification for a task nobody follows yet, so
// that one arriving before the response creating the task is not lost.
// s.mu must be held.
func (s *Session) keepPending(taskID string, msg taskNote) {
	q, known := s.pending[taskID]
	if !known {
		if len(s.pendingOrder) >= s.opts.MaxPending {
			delete(s.pending, s.pendingOrder[0])
			s.pendingOrder = s.pendingOrder[1:]
		}
		s.pendingOrder = append(s.pendingOrder, taskID)
	}
	if len(q) < s.opts.MaxPending {
		s.pending[taskID] = append(q, msg)
	}
}

// followTask returns the inbox of a task's notifications for call c, with
// those that arrived before anyone followed it.
func (s *Session) followTask(taskID string, c *call) *inbox[taskNote] {
	s.mu.Lock()
	defer s.mu.Unlock()
	if t := s.tasks[taskID]; t != nil {
		return t.in
	}
	delete(s.ended, taskID)
	t := newInbox[taskNote]()
	if s.err != nil {
		t.fail(s.err)
		return t
	}
	for _, m := range s.pending[taskID] {
		t.push(m)
	}
	delete(s.pending, taskID)
	for i, id := range s.pendingOrder {
		if id == taskID {
			s.pendingOrder = append(s.pendingOrder[:i], s.pendingOrder[i+1:]...)
			break
		}
	}
	s.tasks[taskID] = &taskFollow{in: t, call: c}
	return t
}

func (s *Session) unfollowTask(taskID string, t *inbox[taskNote]) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if f := s.tasks[taskID]; f == nil || f.in != t {
		return
	}
	delete(s.tasks, taskID)
	if len(s.endedOrder) >= s.opts.MaxPending {
		delete(s.ended, s.endedOrder[0])
		s.endedOrder = s.endedOrder[1:]
	}
	s.ended[taskID] = true
	s.endedOrder = append(s.endedOrder, taskID)
}

// answerServerRequest answers a request from the server: ping with an
// empty result, anything else with -32601 (the client offers no sampling,
// elicitation or roots).
func (s *Session) answerServerRequest(msg *mcp.Message) {
	ctx, cancel := withTimeout(context.Background(), s.opts.Clock, serverRequestTimeout)
	defer cancel()
	var reply *mcp.Message
	if msg.Method == mcp.MethodPing {
		reply, _ = mcp.NewResult(msg.ID, struct{}{})
	} else {
		reply = mcp.NewError(msg.ID, mcp.Errorf(mcp.CodeMethodNotFound, "Method not found: %s", msg.Method))
	}
	_ = s.conn.Write(ctx, reply)
}

// observeHTTP puts the transport's HTTP requests on the timeline of the
// call whose request they carry.
func (s *Session) observeHTTP(info mcp.RequestInfo) {
	if info.RPCID.IsZero() {
		return
	}
	s.mu.Lock()
	rec := s.calls[info.RPCID]
	s.mu.Unlock()
	e := Event{Kind: EventHTTPRequest, Method: info.Method, RequestID: info.RPCID, HTTPStatus: info.Status,
		Bytes: info.BytesSent, LastEventID: info.LastEventID, Err: info.Err}
	if info.Resume {
		e.Detail = "resume " + info.RPCMethod
	} else {
		e.Detail = info.RPCMethod
	}
	rec.add(e)
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
	delete(s.streams, id)
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
