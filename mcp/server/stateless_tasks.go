package server

import (
	"context"
	"fmt"

	"github.com/tasksim/tasksim/mcp"
	rev "github.com/tasksim/tasksim/mcp/rev20260728"
	"github.com/tasksim/tasksim/mcp/rev20260728/tasks"
)

// The tasks extension io.modelcontextprotocol/tasks in the stateless era:
// which tools/call becomes a task, the durable create, and tasks/get,
// tasks/update and tasks/cancel (ext-tasks 2026-07-28, "Tasks").

// TaskPolicy says which stateless tools/call requests that declare the
// tasks extension the server answers with a task (Tasks, "Capability
// Negotiation": the server alone decides, per request). A tool that
// requires a task runs as one under every policy; called without the
// extension declared it is refused with -32021, since the server cannot
// serve it without a task.
type TaskPolicy uint8

const (
	// TasksByTool, the default, follows each tool's 2025-11-25
	// execution.taskSupport: "required" and "optional" tools run as tasks,
	// the others plainly.
	TasksByTool TaskPolicy = iota
	// TasksRequired runs only the tools that require a task as tasks.
	TasksRequired
	// TasksAll runs every tool as a task.
	TasksAll
)

// String returns the policy's name in `tasksim serve --tasks`.
func (p TaskPolicy) String() string {
	switch p {
	case TasksRequired:
		return "required"
	case TasksAll:
		return "all"
	}
	return "tool"
}

// ParseTaskPolicy reads a policy's name: tool, required or all.
func ParseTaskPolicy(s string) (TaskPolicy, error) {
	for _, p := range []TaskPolicy{TasksByTool, TasksRequired, TasksAll} {
		if p.String() == s {
			return p, nil
		}
	}
	return 0, fmt.Errorf("unknown task policy %q (want tool, required or all)", s)
}

// runsAsTask decides whether a stateless tools/call of tool becomes a
// task: never without the extension declared on the request itself (Tasks,
// "Capability Negotiation": regardless of prior declarations), and then by
// Options.StatelessTasks. A tool that requires a task, called without the
// extension, is -32021 naming it.
func (s *Server) runsAsTask(tool *Tool, declared bool) (bool, *mcp.Error) {
	support := mcp.TaskSupportForbidden
	if tool.Execution != nil && tool.Execution.TaskSupport != "" {
		support = tool.Execution.TaskSupport
	}
	switch {
	case support == mcp.TaskSupportRequired:
		if !declared {
			return false, tasks.MissingCapability()
		}
		return true, nil
	case !declared:
		return false, nil
	case s.opts.StatelessTasks == TasksAll:
		return true, nil
	}
	return support == mcp.TaskSupportOptional && s.opts.StatelessTasks == TasksByTool, nil
}

// noProgress drops a task's progress: progress notifications are not
// supported on tasks in this extension (Tasks, "Task Status
// Notifications").
func noProgress(context.Context, mcp.ProgressParams) error { return nil }

// createTask stores a task for the call, starts its tool and answers with
// the CreateTaskResult. The task is on the board before the answer is
// written, so a tasks/get for its id resolves as soon as the client can
// read it (Tasks, "Task Creation": durable create).
func (s *Server) createTask(ctx context.Context, id mcp.ID, run RunFunc, size int64, caps *rev.ClientCapabilities, in input, r mcp.Replier) {
	o := &s.opts
	taskID, err := s.ids.next()
	if err != nil {
		replyError(ctx, r, id, err)
		return
	}
	if !s.budget.reserve(nil, size) {
		replyError(ctx, r, id, mcp.Errorf(mcp.CodeInternalError,
			"server busy: a result of %d bytes does not fit the memory budget of stateless requests (%d bytes)", size, o.MaxSessionBytes))
		return
	}
	now := o.Clock.Now()
	runCtx, cancel := context.WithCancel(s.board.ctx)
	t := &statelessTask{
		board: s.board, id: taskID, createdAt: now, ttl: o.DefaultTTL, pollInterval: o.PollInterval,
		cancelRun: cancel, caps: caps, status: mcp.StatusWorking, updatedAt: now, charged: size,
	}
	if err := s.board.add(t, o.MaxTasksPerSession, o.MaxTasks); err != nil {
		cancel()
		s.budget.release(nil, size)
		replyError(ctx, r, id, err)
		return
	}
	t.mu.Lock()
	t.expiry = o.Clock.AfterFunc(t.ttl, t.expire)
	created := &tasks.CreateTaskResult{ResultType: tasks.ResultTypeTask, Meta: s.resultMeta(), Task: t.detailLocked().Task}
	t.mu.Unlock()
	go func() { t.finish(s.runTool(runCtx, nil, taskID, size, run, nil, noProgress, in, t.ask)) }()
	reply(ctx, r, id, created)
}

// statelessTaskOf finds the task a tasks/* request names: -32021 when the
// request did not declare the extension (Tasks, "Capability Negotiation"),
// -32602 when it names no task the server holds.
func (s *Server) statelessTaskOf(msg *mcp.Message, meta rev.RequestMeta) (*statelessTask, error) {
	if !tasks.Declared(meta.ClientCapabilities) {
		return nil, tasks.MissingCapability()
	}
	var p tasks.GetTaskParams
	if err := mcp.DecodeParams(msg.Params, &p); err != nil {
		return nil, err
	}
	if p.TaskID == "" {
		return nil, mcp.Errorf(mcp.CodeInvalidParams, "invalid params: taskId is required")
	}
	t, err := s.board.lookup(p.TaskID)
	if err != nil { // a nil *mcp.Error must not become a non-nil error
		return nil, err
	}
	return t, nil
}

// tasksGetStateless answers tasks/get with the task's DetailedTask and
// resultType "complete" (Tasks, "Task Polling").
func (s *Server) tasksGetStateless(ctx context.Context, msg *mcp.Message, meta rev.RequestMeta, r mcp.Replier) {
	t, err := s.statelessTaskOf(msg, meta)
	if err != nil {
		replyError(ctx, r, msg.ID, err)
		return
	}
	t.mu.Lock()
	d := t.detailLocked()
	t.mu.Unlock()
	reply(ctx, r, msg.ID, &tasks.GetTaskResult{ResultType: rev.ResultComplete, Meta: s.resultMeta(), DetailedTask: d})
}

// tasksUpdateStateless hands the answers of tasks/update to the task and
// acknowledges with the empty result; the task's new status shows on the
// next tasks/get (Tasks, "Task Update Requests": the ack is eventually
// consistent). Answers to keys not outstanding are ignored (input.go).
func (s *Server) tasksUpdateStateless(ctx context.Context, msg *mcp.Message, meta rev.RequestMeta, r mcp.Replier) {
	t, err := s.statelessTaskOf(msg, meta)
	if err != nil {
		replyError(ctx, r, msg.ID, err)
		return
	}
	var p tasks.UpdateTaskParams
	if err := mcp.DecodeParams(msg.Params, &p); err != nil {
		replyError(ctx, r, msg.ID, err)
		return
	}
	if p.InputResponses == nil {
		replyError(ctx, r, msg.ID, mcp.Errorf(mcp.CodeInvalidParams, "invalid params: inputResponses is required"))
		return
	}
	t.update(p.InputResponses)
	s.ack(ctx, msg.ID, r)
}

// tasksCancelStateless acknowledges tasks/cancel and cancels a running
// task; a terminal one gets the same ack (Tasks, "Task Cancellation":
// cooperative; -32602 is for unknown ids only).
func (s *Server) tasksCancelStateless(ctx context.Context, msg *mcp.Message, meta rev.RequestMeta, r mcp.Replier) {
	t, err := s.statelessTaskOf(msg, meta)
	if err != nil {
		replyError(ctx, r, msg.ID, err)
		return
	}
	t.cancel()
	s.ack(ctx, msg.ID, r)
}

// ack sends the empty result of tasks/update and tasks/cancel.
func (s *Server) ack(ctx context.Context, id mcp.ID, r mcp.Replier) {
	reply(ctx, r, id, &tasks.Ack{ResultType: rev.ResultComplete, Meta: s.resultMeta()})
}
