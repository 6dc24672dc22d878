package server

import (
	"context"
	"sync"

	"github.com/tasksim/tasksim/internal/ratelimit"
	"github.com/tasksim/tasksim/mcp"
)

// session is one client's conversation. It implements mcp.Session.
type session struct {
	srv    *Server
	out    mcp.Outbox
	ctx    context.Context // ends when the session closes
	cancel context.CancelFunc

	mu          sync.Mutex
	caps        mcp.ClientCapabilities
	initialized bool
	protocol    string
	logLevel    mcp.LoggingLevel // set by logging/setLevel
	// inflight holds the cancel functions of requests still being worked
	// on, for notifications/cancelled.
	inflight map[mcp.ID]context.CancelFunc
	closed   bool
	// ops is the bucket of MaxTaskOpsPerSecond.
	ops ratelimit.Bucket
}

// Handle implements mcp.Session.
func (ss *session) Handle(ctx context.Context, msg *mcp.Message, r mcp.Replier) {
	switch msg.Kind() {
	case mcp.KindRequest:
		ss.request(msg, r)
	case mcp.KindNotification:
		ss.notification(msg)
	}
	// Responses: the reference server sends no requests, so there is
	// nothing to match them to; they are dropped.
}

func (ss *session) request(msg *mcp.Message, r mcp.Replier) {
	switch msg.Method {
	case mcp.MethodToolsCall, mcp.MethodTasksGet, mcp.MethodTasksResult, mcp.MethodTasksList, mcp.MethodTasksCancel:
		if !ss.takeTaskOp() {
			replyError(ss.ctx, r, msg.ID, mcp.Errorf(mcp.CodeInternalError,
				"rate limited: more than %d task operations a second in this session, its limit; retry later", ss.srv.opts.MaxTaskOpsPerSecond))
			return
		}
	}
	switch msg.Method {
	case mcp.MethodInitialize:
		ss.initialize(msg, r)
	case mcp.MethodPing:
		reply(ss.ctx, r, msg.ID, struct{}{})
	case mcp.MethodToolsList:
		var p mcp.ListToolsParams
		if err := mcp.DecodeParams(msg.Params, &p); err != nil {
			replyError(ss.ctx, r, msg.ID, err)
			return
		}
		if p.Cursor != "" {
			replyError(ss.ctx, r, msg.ID, mcp.Errorf(mcp.CodeInvalidParams, "invalid cursor: tools/list has a single page"))
			return
		}
		reply(ss.ctx, r, msg.ID, mcp.ListToolsResult{Tools: ss.srv.Tools()})
	case mcp.MethodToolsCall:
		ss.toolsCall(msg, r)
	case mcp.MethodTasksGet:
		ss.tasksGet(msg, r)
	case mcp.MethodTasksResult:
		ss.tasksResult(msg, r)
	case mcp.MethodTasksList:
		ss.tasksList(msg, r)
	case mcp.MethodTasksCancel:
		ss.tasksCancel(msg, r)
	case mcp.MethodLoggingSetLevel:
		ss.setLevel(msg, r)
	default:
		replyError(ss.ctx, r, msg.ID, mcp.Errorf(mcp.CodeMethodNotFound, "Method not found: %s", msg.Method))
	}
}

func (ss *session) initialize(msg *mcp.Message, r mcp.Replier) {
	var p mcp.InitializeParams
	if err := mcp.DecodeParams(msg.Params, &p); err != nil {
		replyError(ss.ctx, r, msg.ID, err)
		return
	}
	if p.ProtocolVersion == "" {
		replyError(ss.ctx, r, msg.ID, mcp.Errorf(mcp.CodeInvalidParams, "invalid params: protocolVersion is required"))
		return
	}
	version := mcp.NegotiateProtocolVersion(p.ProtocolVersion)
	ss.mu.Lock()
	ss.caps = p.Capabilities
	ss.protocol = version
	ss.mu.Unlock()
	reply(ss.ctx, r, msg.ID, mcp.InitializeResult{
		ProtocolVersion: version,
		Capabilities:    ss.srv.Capabilities(),
		ServerInfo:      mcp.Implementation{Name: ss.srv.opts.Name, Version: ss.srv.opts.Version},
		Instructions:    "tasksim reference server: MCP Tasks with SEP-1905 response modes and SEP-2679 partial notifications.",
	})
}

func (ss *session) notification(msg *mcp.Message) {
	switch msg.Method {
	case mcp.NotificationInitialized:
		ss.mu.Lock()
		ss.initialized = true
		ss.mu.Unlock()
	case mcp.NotificationCancelled:
		var p mcp.CancelledParams
		if mcp.DecodeParams(msg.Params, &p) != nil || p.RequestID.IsZero() {
			return
		}
		ss.mu.Lock()
		cancel := ss.inflight[p.RequestID]
		ss.mu.Unlock()
		if cancel != nil {
			cancel()
		}
	}
}

// takeTaskOp takes one task operation from the session's bucket, which
// holds up to MaxTaskOpsPerSecond and refills at that rate on the
// server's clock.
func (ss *session) takeTaskOp() bool {
	if ss.srv.opts.MaxTaskOpsPerSecond <= 0 {
		return true
	}
	now := ss.srv.opts.Clock.Now()
	ss.mu.Lock()
	defer ss.mu.Unlock()
	return ss.ops.Take(now)
}

// clientWantsPartials reports whether the client declared
// tasks.streaming.partial (SEP-2679 §2.3, rule 1).
func (ss *session) clientWantsPartials() bool {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	return ss.caps.Tasks.PartialStreaming()
}

// track registers a request's cancel function until done is called.
func (ss *session) track(id mcp.ID) (context.Context, func()) {
	ctx, cancel := context.WithCancel(ss.ctx)
	ss.mu.Lock()
	ss.inflight[id] = cancel
	ss.mu.Unlock()
	return ctx, func() {
		ss.mu.Lock()
		delete(ss.inflight, id)
		ss.mu.Unlock()
		cancel()
	}
}

// Close implements mcp.Session. The session's tasks stop and are deleted:
// nobody else may see them (2025-11-25 Tasks, "Task Isolation").
func (ss *session) Close() {
	ss.mu.Lock()
	if ss.closed {
		ss.mu.Unlock()
		return
	}
	ss.closed = true
	ss.mu.Unlock()
	ss.cancel()
	for _, t := range ss.srv.store.removeSession(ss) {
		t.stop()
	}
	ss.srv.forget(ss)
}

// reply sends a final successful response.
func reply(ctx context.Context, r mcp.Replier, id mcp.ID, result any) {
	msg, err := mcp.NewResult(id, result)
	if err != nil {
		msg = mcp.NewError(id, mcp.Errorf(mcp.CodeInternalError, "internal error: %v", err))
	}
	_ = r.Reply(ctx, msg, true)
}

// replyError sends a final error response. A non-*mcp.Error becomes -32603.
func replyError(ctx context.Context, r mcp.Replier, id mcp.ID, err error) {
	e, ok := err.(*mcp.Error)
	if !ok {
		e = mcp.Errorf(mcp.CodeInternalError, "internal error: %v", err)
	}
	_ = r.Reply(ctx, mcp.NewError(id, e), true)
}
