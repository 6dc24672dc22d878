package server

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/tasksim/tasksim/clock"
	"github.com/tasksim/tasksim/mcp"
)

func (ss *session) toolsCall(msg *mcp.Message, r mcp.Replier) {
	p, tool, err := ss.srv.callTarget(msg.Params, mcp.Revision20251125)
	if err != nil {
		replyError(ss.ctx, r, msg.ID, err)
		return
	}
	// 2025-11-25 Tasks, "Tool-Level Negotiation": a task for a tool that
	// does not allow one, or none for a tool that requires one, is -32601.
	support := mcp.TaskSupportForbidden
	if tool.Execution != nil && tool.Execution.TaskSupport != "" {
		support = tool.Execution.TaskSupport
	}
	if p.Task != nil && support == mcp.TaskSupportForbidden {
		replyError(ss.ctx, r, msg.ID, mcp.Errorf(mcp.CodeMethodNotFound, "Tool %s does not support task-augmented calls", p.Name))
		return
	}
	if p.Task == nil && support == mcp.TaskSupportRequired {
		replyError(ss.ctx, r, msg.ID, mcp.Errorf(mcp.CodeMethodNotFound, "Tool %s requires a task-augmented call", p.Name))
		return
	}
	run, size, err := ss.srv.prepareRun(tool, p)
	if err != nil {
		replyError(ss.ctx, r, msg.ID, err)
		return
	}
	var token json.RawMessage
	if p.Meta != nil {
		token = p.Meta.ProgressToken
	}
	if p.Task == nil {
		ss.plainCall(msg.ID, run, token, r)
		return
	}
	ss.taskCall(msg.ID, tool, p.Task, run, token, size, r)
}

// callTarget reads the params of a tools/call of revision era and finds
// its tool: -32602 when the params are malformed or name no tool the
// server serves to that revision.
func (s *Server) callTarget(params json.RawMessage, era mcp.Revision) (*mcp.CallToolParams, *Tool, error) {
	var p mcp.CallToolParams
	if err := mcp.DecodeParams(params, &p); err != nil {
		return nil, nil, err
	}
	if p.Name == "" {
		return nil, nil, mcp.Errorf(mcp.CodeInvalidParams, "invalid params: name is required")
	}
	tool := s.tools[p.Name]
	if tool == nil || !tool.servedTo(era) {
		return nil, nil, mcp.Errorf(mcp.CodeInvalidParams, "Unknown tool: %s", p.Name)
	}
	return &p, tool, nil
}

// prepareRun checks a call's arguments with its tool and returns what runs
// it and the result bytes it asks for: -32602 when the tool refuses the
// arguments or they ask more than a task may hold.
func (s *Server) prepareRun(tool *Tool, p *mcp.CallToolParams) (RunFunc, int64, error) {
	run, err := tool.Prepare(p.Arguments)
	if err != nil {
		var e *mcp.Error
		if !errors.As(err, &e) {
			e = mcp.Errorf(mcp.CodeInvalidParams, "invalid arguments for %s: %v", p.Name, err)
		}
		return nil, 0, e
	}
	var size int64
	if tool.Size != nil {
		size = tool.Size(p.Arguments)
	}
	if limit := s.opts.MaxTaskBytes; size > limit {
		// Refused before anything runs or is stored: one call must not
		// hold more than a task may (docs/server.md, "Limits").
		return nil, 0, mcp.Errorf(mcp.CodeInvalidParams,
			"invalid arguments for %s: the result would hold %d bytes, over the server's limit of %d bytes per task", p.Name, size, limit)
	}
	return run, size, nil
}

// plainCall runs a call without a task and answers with its result.
// Progress notifications travel on the request's own answer.
func (ss *session) plainCall(id mcp.ID, run RunFunc, token json.RawMessage, r mcp.Replier) {
	ctx, done := ss.track(id)
	pc := &plainRun{
		srv: ss.srv, owner: ss, id: id, run: run, token: token, r: r, replyCtx: ss.ctx, done: done,
		// Cancelled by notifications/cancelled, not by the session's end.
		cancelled: func() bool { return ctx.Err() != nil && ss.ctx.Err() == nil },
		result:    func(res *mcp.CallToolResult) any { return res },
	}
	pc.start(ctx)
}

// taskCall creates a task for a task-augmented call and answers in the
// response mode SEP-1905 negotiation picks.
func (ss *session) taskCall(id mcp.ID, tool *Tool, tp *mcp.TaskParams, run RunFunc, token json.RawMessage, size int64, r mcp.Replier) {
	o := &ss.srv.opts
	dec := mcp.DecideMode(tp.ResponseModes, o.Modes, true, tool.Incremental)
	t, runCtx, err := ss.newTask(tool, dec.Mode, tp, token, size)
	if err != nil {
		replyError(ss.ctx, r, id, err)
		return
	}
	defer t.firstAnswerSent()
	c := &Call{clock: o.Clock, taskID: t.id, emit: t.emit, progress: t.sendProgress}
	started := false
	start := func() {
		if started {
			return
		}
		started = true
		go func() {
			res, err := run(runCtx, c)
			t.finish(res, err)
		}()
	}

	mode := dec.Mode
	if dec.Negotiated == mcp.ModeImmediate || mode == mcp.ModeStreaming {
		var answered bool
		if mode, answered = ss.answerInWindow(t, id, tp, tool, dec, start, r); answered {
			return
		}
	}
	switch mode {
	case mcp.ModeStreaming:
		if ss.answerStreaming(t, id, r) {
			start()
		}
	default:
		if ss.answerTaskMode(t, id, dec, r) {
			start()
		}
	}
}

// newTask makes the task of a task-augmented call, in mode, and stores
// it, its bytes reserved; runCtx is the tool's, cancelled when the task
// ends. It fails, holding nothing, when the server cannot make an id or
// the budgets or the store are full.
func (ss *session) newTask(tool *Tool, mode mcp.ResponseMode, tp *mcp.TaskParams, token json.RawMessage, size int64) (*task, context.Context, error) {
	o := &ss.srv.opts
	now := o.Clock.Now()
	ttl := o.DefaultTTL
	if tp.TTL != nil && *tp.TTL > 0 {
		// Capped at MaxTTL in milliseconds, before any conversion can
		// overflow (2025-11-25 Tasks, "Resource Management": receivers
		// MAY override the requested ttl).
		ttl = mcp.Millis(*tp.TTL, o.MaxTTL)
	}
	taskID, err := ss.srv.ids.next()
	if err != nil {
		return nil, nil, err
	}
	runCtx, cancel := context.WithCancel(ss.ctx)
	t := &task{
		id:            taskID,
		owner:         ss,
		tool:          tool.Name,
		mode:          mode,
		createdAt:     now,
		ttl:           ttl,
		pollInterval:  o.PollInterval,
		partial:       !o.NoPartial && ss.clientWantsPartials(),
		progressToken: token,
		cancelRun:     cancel,
		done:          make(chan struct{}),
		firstEmit:     make(chan struct{}),
		status:        mcp.StatusWorking,
		updatedAt:     now,
		charged:       size,
	}
	// The bytes the arguments ask for are reserved up front, so that
	// calls that together would overrun the budgets are refused at once
	// rather than failing halfway.
	if !ss.srv.budget.reserve(ss, size) {
		cancel()
		return nil, nil, mcp.Errorf(mcp.CodeInternalError,
			"server busy: a result of %d bytes does not fit the memory budget (%d bytes per session, %d in all)", size, o.MaxSessionBytes, o.MaxServerBytes)
	}
	if err := ss.srv.store.add(t, o.MaxTasksPerSession, o.MaxTasks); err != nil {
		cancel()
		ss.srv.budget.release(ss, size)
		return nil, nil, err
	}
	t.mu.Lock()
	t.expiry = o.Clock.AfterFunc(ttl, t.expire)
	t.mu.Unlock()
	return t, runCtx, nil
}

// answerInWindow starts the tool and waits, at most the immediate window,
// to learn whether the result is complete at request time: the tool runs
// for at most the window; a first chunk means it is not. A complete
// result is answered here (answered: true). Otherwise it returns the mode
// to answer in: the one negotiated, or for immediate the mode it falls
// back to.
//
// The window is on the server's clock, so on a clock.Sim the decision
// follows simulated time; it is made before the tool starts, so it fires
// before a tool timer due at the same instant.
func (ss *session) answerInWindow(t *task, id mcp.ID, tp *mcp.TaskParams, tool *Tool, dec mcp.ModeDecision, start func(), r mcp.Replier) (mode mcp.ResponseMode, answered bool) {
	o := &ss.srv.opts
	window := clock.NewTimer(o.Clock, o.ImmediateWindow)
	start()
	select {
	case <-t.done:
	case <-t.firstEmit:
	case <-window.C():
	case <-ss.ctx.Done():
		window.Stop()
		return "", true
	}
	window.Stop()
	t.mu.Lock()
	complete := t.status.IsTerminal()
	t.mu.Unlock()
	switch {
	case complete && dec.Negotiated == mcp.ModeImmediate:
		// Case 1: the full result in content, the task (created for
		// tracking) already completed (SEP-1905, "Case 1").
		t.mu.Lock()
		res, rpcErr := t.resultLocked()
		t.mu.Unlock()
		if rpcErr != nil {
			replyError(ss.ctx, r, id, rpcErr)
			return "", true
		}
		reply(ss.ctx, r, id, res)
		return "", true
	case complete:
		// Streaming with everything ready: one response that is
		// also the last (SEP-1905 test scenario 3).
		t.mu.Lock()
		final := t.finalStreamResponseLocked(t.segmentsLocked())
		t.mu.Unlock()
		msg, _ := mcp.NewResult(id, final)
		_ = r.Reply(ss.ctx, msg, true)
		return "", true
	case dec.Negotiated == mcp.ModeImmediate:
		return mcp.DecideMode(tp.ResponseModes, o.Modes, false, tool.Incremental).Mode, false
	}
	return dec.Mode, false
}

// answerStreaming sends Case 3's first streaming response (initial
// response option 1: the task and the segments already there; later
// segments follow on the same answer with the same id; SEP-1905, "Case
// 3"), or the whole stream in one response if the task ended since the
// wait. It reports whether the tool is still to run.
func (ss *session) answerStreaming(t *task, id mcp.ID, r mcp.Replier) bool {
	t.mu.Lock()
	if t.status.IsTerminal() {
		// It ended since the wait: send it whole.
		final := t.finalStreamResponseLocked(t.segmentsLocked())
		t.mu.Unlock()
		msg, _ := mcp.NewResult(id, final)
		_ = r.Reply(ss.ctx, msg, true)
		return false
	}
	snap := t.snapshotLocked()
	initial := mcp.PartialResult{
		Task:           &snap,
		PartialContent: t.segmentsLocked(),
		Meta:           mcp.Meta{}.WithRelatedTask(t.id),
	}
	if initial.PartialContent == nil {
		initial.PartialContent = []mcp.Segment{}
	}
	t.stream, t.streamID = r, id
	msg, _ := mcp.NewResult(id, initial)
	_ = r.Reply(ss.ctx, msg, false)
	t.mu.Unlock()
	return true
}

// answerTaskMode answers with Case 2's CreateTaskResult; a fallback is
// announced in the meta and the status message (SEP-1905, "Capability
// Negotiation"). It reports whether the tool is still to run.
func (ss *session) answerTaskMode(t *task, id mcp.ID, dec mcp.ModeDecision, r mcp.Replier) bool {
	t.mu.Lock()
	if dec.Negotiated == mcp.ModeImmediate && t.status.IsTerminal() {
		// The tool, started for the immediate window, ended since:
		// the result is ready, so Case 1 after all. A CreateTaskResult
		// would show a task created in a terminal status ("Tasks MUST
		// begin in the working status", 2025-11-25 Tasks › Task Status
		// Lifecycle).
		res, rpcErr := t.resultLocked()
		t.mu.Unlock()
		if rpcErr != nil {
			replyError(ss.ctx, r, id, rpcErr)
			return false
		}
		reply(ss.ctx, r, id, res)
		return false
	}
	res := mcp.CreateTaskResult{Task: t.snapshotLocked()}
	if dec.Fallback {
		res.Meta = mcp.Meta{mcp.MetaFallbackMode: string(mcp.ModeTask)}
		res.Task.StatusMessage = "none of the requested response modes is supported; falling back to task mode"
	}
	t.mu.Unlock()
	reply(ss.ctx, r, id, res)
	return true
}
