package server

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/tasksim/tasksim/mcp"
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
}

// start runs the tool on a goroutine of its own, under ctx.
func (pc *plainRun) start(ctx context.Context) {
	var emitted []mcp.ContentBlock
	var held int64 // bytes of emitted, charged to the owner's budget
	b := pc.srv.budget
	c := &Call{
		clock: pc.srv.opts.Clock,
		conn:  pc.r,
		emit: func(_ context.Context, blocks []mcp.ContentBlock) error {
			n := blocksBytes(blocks)
			if held+n > pc.srv.opts.MaxTaskBytes || !b.reserve(pc.owner, n) {
				return ErrBudget
			}
			held += n
			emitted = append(emitted, blocks...)
			return nil
		},
		progress: pc.progress,
	}
	go func() {
		defer pc.done()
		defer func() { b.release(pc.owner, held) }()
		res, err := pc.run(ctx, c)
		if pc.cancelled() {
			// A cancelled request gets no response; the answer is ended
			// without one.
			_ = pc.r.Reply(pc.replyCtx, nil, true)
			return
		}
		var rpcErr *mcp.Error
		if errors.As(err, &rpcErr) {
			replyError(pc.replyCtx, pc.r, pc.id, rpcErr)
			return
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
		reply(pc.replyCtx, pc.r, pc.id, pc.result(out))
	}()
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
