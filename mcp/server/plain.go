package server

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/tasksim/tasksim/mcp"
	rev "github.com/tasksim/tasksim/mcp/rev20260728"
)

// plainRun is a tools/call run without a task, answered with its result on
// the request's own answer: the same in a 2025-11-25 session and in a
// stateless request, but for whom its bytes are charged to, what ends it
// and the shape of its result.
type plainRun struct {
	srv *Server
	// owner is the session the call's bytes are charged to; nil charges
	// the stateless requests, which share one budget of MaxSessionBytes.
	owner *session
	id    mcp.ID
	run   RunFunc
	token json.RawMessage // the request's progressToken, or nil
	r     mcp.Replier
	// replyCtx is the context of the final reply.
	replyCtx context.Context
	// cancelled says, once the tool returned, that the request was
	// cancelled: the answer then ends without a response.
	cancelled func() bool
	// result shapes the final result of the revision.
	result func(*mcp.CallToolResult) any
	// done is called once the answer is sent.
	done func()
	// in is the client's input of a stateless call (input.go).
	in input
}

// start runs the tool on a goroutine of its own, under ctx, and answers
// with its outcome.
func (pc *plainRun) start(ctx context.Context) {
	go func() {
		defer pc.done()
		out, rpcErr := pc.srv.runTool(ctx, pc.owner, "", 0, pc.run, pc.r, pc.progress, pc.in, nil)
		if pc.cancelled() {
			// A cancelled request gets no response; the answer is ended
			// without one.
			_ = pc.r.Reply(pc.replyCtx, nil, true)
			return
		}
		if rpcErr != nil {
			replyError(pc.replyCtx, pc.r, pc.id, rpcErr)
			return
		}
		reply(pc.replyCtx, pc.r, pc.id, pc.result(out))
	}()
}

// runTool runs run under ctx and returns what the call ends with: its
// result (everything emitted, then the content returned; a non-JSON-RPC
// error as a tool execution error) or its JSON-RPC error. The first
// reserved bytes emitted are covered by what the caller charged already
// (a task's reservation for the bytes its arguments ask for); the rest
// are charged to owner's budget (nil: the stateless requests') while the
// tool runs and released when it returns. taskID is the task the call
// runs as ("" for none). conn is the answer whose
// connection Call.CloseConnection ends, if any; in the client's input of
// a stateless call and ask, when set, how its task asks for more
// (input.go).
func (s *Server) runTool(ctx context.Context, owner *session, taskID string, reserved int64, run RunFunc, conn mcp.Replier,
	progress func(context.Context, mcp.ProgressParams) error, in input,
	ask func(context.Context, []rev.InputRequest) ([]json.RawMessage, error)) (*mcp.CallToolResult, *mcp.Error) {
	var emitted []mcp.ContentBlock
	var used int64 // bytes of emitted
	var held int64 // bytes of emitted beyond reserved, charged to the owner's budget
	b := s.budget
	c := &Call{
		clock:  s.opts.Clock,
		taskID: taskID,
		conn:   conn,
		emit: func(_ context.Context, blocks []mcp.ContentBlock) error {
			n := blocksBytes(blocks)
			if used+n > s.opts.MaxTaskBytes {
				return ErrBudget
			}
			if extra := used + n - reserved - held; extra > 0 {
				if !b.reserve(owner, extra) {
					return ErrBudget
				}
				held += extra
			}
			used += n
			emitted = append(emitted, blocks...)
			return nil
		},
		progress: progress,
		answers:  in.answers,
		ask:      ask,
	}
	defer func() { b.release(owner, held) }()
	res, err := run(ctx, c)
	var rpcErr *mcp.Error
	if errors.As(err, &rpcErr) {
		return nil, rpcErr
	}
	out := &mcp.CallToolResult{Content: emitted}
	if res != nil {
		out.Content = append(out.Content, res.Content...)
		out.StructuredContent = res.StructuredContent
		out.IsError = res.IsError
		out.Meta = res.Meta
	}
	if err != nil {
		out.IsError = true
		out.Content = append(out.Content, mcp.TextBlock(err.Error()))
	}
	if out.Content == nil {
		out.Content = []mcp.ContentBlock{}
	}
	return out, nil
}

// progress sends notifications/progress on the answer when the request
// asked for progress.
func (pc *plainRun) progress(ctx context.Context, p mcp.ProgressParams) error {
	if pc.token == nil {
		return nil
	}
	p.ProgressToken = pc.token
	n, err := mcp.NewNotification(mcp.NotificationProgress, p)
	if err != nil {
		return err
	}
	return pc.r.Reply(ctx, n, false)
}
