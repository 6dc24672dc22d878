package suite

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/tasksim/tasksim/mcp"
	"github.com/tasksim/tasksim/mcp/client"
)

// Base 2025-11-25 Tasks scenarios: lifecycle, ttl, isolation, ids,
// invalid params.

func scenarioLifecycle(e *Env) error {
	tc, s, err := e.setup(needs{task: true}, &client.Options{NoModes: true})
	if err != nil {
		return err
	}
	res, err := s.CallTool(e.Ctx, client.CallOptions{Name: tc.name, Args: tc.argsFor(3, 20, -1), Mode: client.ModeTask})
	if err != nil {
		return fmt.Errorf("task call: %w", err)
	}
	if res.TaskID == "" {
		return fmt.Errorf("tool %s called as a task answered without a task", tc.name)
	}
	id := res.TaskID
	e.Expect("TASK-RESULT", res.Complete, "the task's result did not arrive")
	got, err := s.GetTask(e.Ctx, id)
	if err != nil {
		return fmt.Errorf("tasks/get: %w", err)
	}
	e.Expect("TASK-STATUS-TRANSITION", got.Status.IsTerminal(), "tasks/get after tasks/result says %s, want a terminal status", got.Status)
	again, err := s.TaskResult(e.Ctx, id, 0)
	if err != nil {
		return fmt.Errorf("tasks/result: %w", err)
	}
	e.Expect("TASK-RESULT", text(again.Content) == text(res.Content), "a second tasks/result differs from the first: %s vs %s", text(again.Content), text(res.Content))
	if e.probe.init.Capabilities.Tasks != nil && e.probe.init.Capabilities.Tasks.List != nil {
		list, err := s.ListTasks(e.Ctx)
		if err != nil {
			return fmt.Errorf("tasks/list: %w", err)
		}
		if !slices.ContainsFunc(list, func(t mcp.Task) bool { return t.TaskID == id }) {
			return fmt.Errorf("tasks/list does not list task %s of this session", id)
		}
	}
	// tasks/cancel only to a server that declares it (2025-11-25 Tasks,
	// Capabilities: tasks.cancel); without it the cancel steps are left
	// out, and TASK-CANCEL-TERMINAL is judged on no answer of its.
	methods := []string{mcp.MethodTasksGet, mcp.MethodTasksResult}
	if declaresCancel(e) {
		m, err := s.Request(e.Ctx, mcp.MethodTasksCancel, mcp.CancelTaskParams{TaskID: id})
		if err != nil {
			return err
		}
		e.expectInvalidParams("TASK-CANCEL-TERMINAL", m, "tasks/cancel of a terminal task")
		methods = append(methods, mcp.MethodTasksCancel)
	}
	for _, method := range methods {
		m, err := s.Request(e.Ctx, method, mcp.GetTaskParams{TaskID: e.unknownTaskID()})
		if err != nil {
			return err
		}
		e.expectInvalidParams("TASK-NOT-FOUND", m, method+" of an unknown task id")
	}
	return e.cancelWorking(s)
}

// declaresCancel reports whether the server declares tasks.cancel.
func declaresCancel(e *Env) bool {
	return e.probe.init.Capabilities.Tasks != nil && e.probe.init.Capabilities.Tasks.Cancel != nil
}

// cancelWorking is task-lifecycle's last step: a working task, cancelled,
// ends cancelled and stays so (2025-11-25 Tasks, Task Cancellation). The
// task is the slow tool's, cancelled as soon as its CreateTaskResult
// came: no timer decides whether it is still working. A step the target
// gives nothing to act on is left out with the reason (Env.LeaveOut),
// never passed.
func (e *Env) cancelWorking(s *client.Session) error {
	const step = "cancel a working task"
	if !declaresCancel(e) {
		e.LeaveOut("tasks/cancel of a terminal, an unknown and a working task", "the server does not declare tasks.cancel")
		return nil
	}
	slow, err := e.needSlow("a working task to cancel")
	var skip *skipError
	if errors.As(err, &skip) {
		e.LeaveOut(step, skip.why)
		return nil
	}
	created, err := e.createTask(s, slow, slow.argsFor(cancelChunks, 50, -1))
	if err != nil {
		return fmt.Errorf("task call to cancel: %w", err)
	}
	if created.Status.IsTerminal() {
		e.LeaveOut(step, fmt.Sprintf("the task of tool %s was %s when created: nothing working to cancel (give --slow-args a longer {{durationMs}})", slow.name, created.Status))
		return nil
	}
	m, err := s.Request(e.Ctx, mcp.MethodTasksCancel, mcp.CancelTaskParams{TaskID: created.TaskID})
	if err != nil {
		return err
	}
	if errorCode(m) == mcp.CodeInvalidParams {
		// Refused as terminal: the task ended between its answer and the
		// cancel, which a quick tool may do. Not a breach; nothing shown.
		e.LeaveOut(step, fmt.Sprintf("the task of tool %s ended before tasks/cancel reached it (%s): give --slow-args a longer {{durationMs}}", slow.name, describeAnswer(m)))
		return nil
	}
	var got mcp.Task
	if m.Error != nil || json.Unmarshal(m.Result, &got) != nil {
		return fmt.Errorf("tasks/cancel of working task %s answered %s", created.TaskID, describeAnswer(m))
	}
	// The receiver MUST move the task to cancelled before it answers.
	e.Expect("TASK-CANCEL-TERMINAL", got.Status == mcp.StatusCancelled, "tasks/cancel of working task %s answered status %s, want cancelled", created.TaskID, got.Status)
	// It MUST stay cancelled, or be gone: receivers MAY delete cancelled
	// tasks at any time, even at once, so not found is a right answer too.
	m, err = s.Request(e.Ctx, mcp.MethodTasksGet, mcp.GetTaskParams{TaskID: created.TaskID})
	if err != nil {
		return err
	}
	if errorCode(m) == mcp.CodeInvalidParams {
		return nil
	}
	got = mcp.Task{}
	if m.Error != nil || json.Unmarshal(m.Result, &got) != nil {
		return fmt.Errorf("tasks/get of cancelled task %s answered %s", created.TaskID, describeAnswer(m))
	}
	e.Expect("TASK-CANCEL-TERMINAL", got.Status == mcp.StatusCancelled, "cancelled task %s reads %s afterwards", created.TaskID, got.Status)
	return nil
}

func scenarioTTL(e *Env) error {
	tc, s, err := e.setup(needs{task: true}, &client.Options{NoModes: true})
	if err != nil {
		return err
	}
	res, err := s.CallTool(e.Ctx, client.CallOptions{Name: tc.name, Args: tc.argsFor(1, 0, -1), Mode: client.ModeTask, TTL: 300 * time.Millisecond})
	answered := time.Now() // the task was created before this
	switch {
	case err != nil && isNotFound(err) && res != nil && res.TaskID != "":
		// The task outlived its ttl before its result was fetched (a
		// tool slower than 300ms): the expiry is already there to see.
		return e.expectGone(s, res.TaskID)
	case err != nil:
		return fmt.Errorf("task call with ttl 300ms: %w", err)
	case res.Task == nil || res.Task.TTL == nil:
		return e.Skip("the task shows no ttl to wait for (TASK-FIELDS judges that)")
	}
	ttl := time.Duration(*res.Task.TTL) * time.Millisecond
	if ttl > 3*time.Second {
		return e.Skip("the server keeps tasks %s at least (asked 300ms); the suite waits 3s at most", ttl)
	}
	created, err := mcp.ParseTime(res.Task.CreatedAt)
	if err != nil {
		return fmt.Errorf("createdAt %q: %w", res.Task.CreatedAt, err)
	}
	// Wait the ttl from the task's creation as the server sees it, and a
	// margin for clocks and the server's sweep. createdAt may be given to
	// the second only (mcp-go does), up to a second before the task's
	// creation: the wait then runs from the answer, which came after it.
	end := created.Add(ttl)
	if end.Before(answered.Add(ttl)) {
		end = answered.Add(ttl)
	}
	if err := e.wait(time.Until(end) + 500*time.Millisecond); err != nil {
		return err
	}
	return e.expectGone(s, res.TaskID)
}

// expectGone asserts that a task past its ttl, once deleted, is not
// found. A receiver MAY delete a task after its ttl (Tasks › Behavior
// Requirements › TTL and Resource Management), so one that still answers
// with the task breaks nothing: the scenario is then SKIP.
func (e *Env) expectGone(s *client.Session, taskID string) error {
	for _, method := range []string{mcp.MethodTasksGet, mcp.MethodTasksResult} {
		m, err := s.Request(e.Ctx, method, mcp.GetTaskParams{TaskID: taskID})
		if err != nil {
			return err
		}
		if m.Error == nil {
			return e.Skip("the server still answers %s of task %s past its ttl: it keeps tasks longer, which the spec allows (MAY delete)", method, taskID)
		}
		e.expectInvalidParams("TASK-NOT-FOUND", m, method+" of a task past its ttl")
	}
	return nil
}

func scenarioIsolation(e *Env) error {
	tc, a, err := e.setup(needs{task: true}, &client.Options{NoModes: true})
	if err != nil {
		return err
	}
	b, err := e.Connect(&client.Options{NoModes: true})
	if err != nil {
		return err
	}
	res, err := a.CallTool(e.Ctx, client.CallOptions{Name: tc.name, Args: tc.argsFor(1, 0, -1), Mode: client.ModeTask})
	if err != nil {
		return fmt.Errorf("task call: %w", err)
	}
	if res.TaskID == "" {
		// Another session's errors about no task prove no isolation.
		return fmt.Errorf("tool %s called as a task answered without a task: no task to isolate", tc.name)
	}
	for _, method := range []string{mcp.MethodTasksGet, mcp.MethodTasksResult, mcp.MethodTasksCancel} {
		m, err := b.Request(e.Ctx, method, mcp.GetTaskParams{TaskID: res.TaskID})
		if err != nil {
			return err
		}
		e.Expect("TASK-ISOLATION", m.Error != nil, "%s in another session answered %s for task %s", method, describeAnswer(m), res.TaskID)
	}
	if e.probe.init.Capabilities.Tasks != nil && e.probe.init.Capabilities.Tasks.List != nil {
		list, err := b.ListTasks(e.Ctx)
		if err != nil {
			return fmt.Errorf("tasks/list: %w", err)
		}
		e.Expect("TASK-ISOLATION", !slices.ContainsFunc(list, func(t mcp.Task) bool { return t.TaskID == res.TaskID }),
			"tasks/list of another session lists task %s", res.TaskID)
	}
	return nil
}

func scenarioIDEntropy(e *Env) error {
	tc, s, err := e.setup(needs{task: true}, &client.Options{NoModes: true})
	if err != nil {
		return err
	}
	// Only the ids matter: the tasks are created and left to work, so a
	// slow tool does not make the scenario wait for six results.
	seen := map[string]bool{}
	for i := 0; i < 6; i++ {
		created, err := e.createTask(s, tc, tc.argsFor(1, 0, -1))
		if err != nil {
			return fmt.Errorf("task call %d: %w", i+1, err)
		}
		id := created.TaskID
		e.Expect("TASK-ID-ENTROPY", !seen[id], "task id %s given out twice", id)
		seen[id] = true
	}
	return nil
}

func scenarioInvalidParams(e *Env) error {
	tc, s, err := e.setup(needs{modes: []mcp.ResponseMode{mcp.ModeStreaming}}, nil)
	if err != nil {
		return err
	}
	res, err := s.CallTool(e.Ctx, client.CallOptions{Name: tc.name, Args: tc.argsFor(2, 10, -1), Mode: client.ModeStreaming})
	if err != nil {
		return fmt.Errorf("streaming call: %w", err)
	}
	if res.TaskID == "" {
		return e.Skip("the streaming call made no task: nothing to ask tasks/result about")
	}
	for _, bad := range []any{0, -1, "abc", 1.5} {
		m, err := s.Request(e.Ctx, mcp.MethodTasksResult, map[string]any{"taskId": res.TaskID, "lastSeqNr": bad})
		if err != nil {
			return err
		}
		e.expectInvalidParams("S1905-LASTSEQNR-INVALID", m, fmt.Sprintf("tasks/result with lastSeqNr %v", bad))
	}
	m, err := s.Request(e.Ctx, mcp.MethodTasksGet, map[string]any{})
	if err != nil {
		return err
	}
	e.expectInvalidParams("TASK-NOT-FOUND", m, "tasks/get without taskId")
	return nil
}

// createTask calls tc as a task, without SEP-1905 response modes, and
// returns the task of its CreateTaskResult; the task is left to work.
func (e *Env) createTask(s *client.Session, tc toolChoice, args any) (*mcp.Task, error) {
	raw, err := json.Marshal(args)
	if err != nil {
		return nil, err
	}
	m, err := s.Request(e.Ctx, mcp.MethodToolsCall, mcp.CallToolParams{Name: tc.name, Arguments: raw, Task: &mcp.TaskParams{}})
	if err != nil {
		return nil, err
	}
	var created mcp.CreateTaskResult
	if m.Error != nil || json.Unmarshal(m.Result, &created) != nil || created.Task.TaskID == "" {
		return nil, fmt.Errorf("the task-augmented call of %s was answered with %s, not a task", tc.name, describeAnswer(m))
	}
	return &created.Task, nil
}

// isNotFound reports a task error the client classified as not found or
// expired.
func isNotFound(err error) bool {
	return errors.Is(err, client.ErrTaskNotFound) || errors.Is(err, client.ErrTaskExpired)
}
