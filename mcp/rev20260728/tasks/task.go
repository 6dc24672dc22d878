package tasks

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/tasksim/tasksim/mcp"
	rev "github.com/tasksim/tasksim/mcp/rev20260728"
)

// Status is a task's status. The extension keeps the five statuses and the
// lifecycle of 2025-11-25 (Tasks, "Task Status": working and
// input_required move to each other or to a terminal status, and a
// terminal status never changes), so it is package mcp's type: a dual-era
// server can keep one store for both eras.
type Status = mcp.TaskStatus

// The statuses.
const (
	Working       = mcp.StatusWorking
	InputRequired = mcp.StatusInputRequired
	Completed     = mcp.StatusCompleted
	Failed        = mcp.StatusFailed
	Cancelled     = mcp.StatusCancelled
)

// Task is the state of a task (Tasks, "Tasks"). TTLMs is a pointer
// because null means unlimited and the member is required; both it and
// PollIntervalMs are integer milliseconds and MAY change over the task's
// life. The 2025-11-25 names ttl and pollInterval are gone.
type Task struct {
	TaskID        string `json:"taskId"`
	Status        Status `json:"status"`
	StatusMessage string `json:"statusMessage,omitempty"`
	// CreatedAt and LastUpdatedAt are ISO 8601 timestamps.
	CreatedAt      string `json:"createdAt"`
	LastUpdatedAt  string `json:"lastUpdatedAt"`
	TTLMs          *int64 `json:"ttlMs"`
	PollIntervalMs *int64 `json:"pollIntervalMs,omitempty"`
}

// Validate checks the members every Task needs: an id, a known status, two
// timestamps, a ttlMs that is null or positive and a positive
// pollIntervalMs when present.
func (t *Task) Validate() error {
	switch {
	case t.TaskID == "":
		return errors.New("task: taskId is empty")
	case !t.Status.IsValid():
		return fmt.Errorf("task %s: unknown status %q", t.TaskID, t.Status)
	case t.CreatedAt == "" || t.LastUpdatedAt == "":
		return fmt.Errorf("task %s: createdAt and lastUpdatedAt are required", t.TaskID)
	case t.TTLMs != nil && *t.TTLMs <= 0:
		return fmt.Errorf("task %s: ttlMs must be null or positive, not %d", t.TaskID, *t.TTLMs)
	case t.PollIntervalMs != nil && *t.PollIntervalMs <= 0:
		return fmt.Errorf("task %s: pollIntervalMs must be positive, not %d", t.TaskID, *t.PollIntervalMs)
	}
	return nil
}

// PollInterval returns the interval the server suggests between polls,
// which clients SHOULD honour and which MAY change with every answer
// (Tasks, "Task Polling"), or fallback when the task suggests none.
func (t *Task) PollInterval(fallback time.Duration) time.Duration {
	if t.PollIntervalMs == nil || *t.PollIntervalMs <= 0 {
		return fallback
	}
	return time.Duration(*t.PollIntervalMs) * time.Millisecond
}

// Deadline returns createdAt plus ttlMs, after which a client MAY consider
// the task unusable and the server MAY fail and delete it (Tasks, "Task
// Polling"). ok is false for an unlimited ttl; an unreadable createdAt is
// an error.
func (t *Task) Deadline() (deadline time.Time, ok bool, err error) {
	if t.TTLMs == nil {
		return time.Time{}, false, nil
	}
	created, err := mcp.ParseTime(t.CreatedAt)
	if err != nil {
		return time.Time{}, false, fmt.Errorf("task %s: createdAt: %w", t.TaskID, err)
	}
	return created.Add(time.Duration(*t.TTLMs) * time.Millisecond), true, nil
}

// DetailedTask is a Task with the payload of its status inlined: the
// outstanding inputRequests of an input_required task, the result of a
// completed one and the JSON-RPC error of a failed one. tasks/get answers
// with it and notifications/tasks carries it (Tasks, "Task Status").
type DetailedTask struct {
	Task
	InputRequests rev.InputRequests `json:"inputRequests,omitempty"`
	// Result is what the request would have returned, e.g. a
	// CallToolResult, including one with isError true.
	Result json.RawMessage `json:"result,omitempty"`
	Error  *mcp.Error      `json:"error,omitempty"`
}

// Validate checks the Task and that the payload matches the status
// (Tasks, "Task Status", "Task Execution Errors"): input_required carries
// a non-empty inputRequests, completed a result and no error, failed an
// error and no result, working and cancelled neither; no other status
// carries inputRequests.
func (d *DetailedTask) Validate() error {
	if err := d.Task.Validate(); err != nil {
		return err
	}
	hasResult, hasError, hasInput := len(d.Result) > 0, d.Error != nil, len(d.InputRequests) > 0
	want := func(result, errObj, input bool) error {
		if hasResult != result || hasError != errObj || hasInput != input {
			return fmt.Errorf("task %s: a %s task carries result=%v error=%v inputRequests=%v; want %v, %v, %v",
				d.TaskID, d.Status, hasResult, hasError, hasInput, result, errObj, input)
		}
		return nil
	}
	switch d.Status {
	case InputRequired:
		return want(false, false, true)
	case Completed:
		return want(true, false, false)
	case Failed:
		return want(false, true, false)
	}
	return want(false, false, false)
}

// CreateTaskResult answers a request the server chose to run as a task:
// the Task's members flat in the result, resultType "task", no result,
// error or inputRequests (Tasks, "Task Creation"). The server MUST NOT
// send it before a tasks/get for TaskID would resolve.
type CreateTaskResult struct {
	ResultType rev.ResultType  `json:"resultType"`
	Meta       *rev.ResultMeta `json:"_meta,omitempty"`
	Task
}

// Validate checks resultType "task" and the Task.
func (r *CreateTaskResult) Validate() error {
	if r.ResultType != ResultTypeTask {
		return fmt.Errorf("CreateTaskResult: resultType is %q, not %q", r.ResultType, ResultTypeTask)
	}
	return r.Task.Validate()
}

// GetTaskParams are the params of tasks/get. Meta is required by the core
// on every request (2026-07-28 Overview, "Per-request protocol fields")
// although the extension's examples leave it out.
type GetTaskParams struct {
	Meta   *rev.RequestMeta `json:"_meta,omitempty"`
	TaskID string           `json:"taskId"`
}

// GetTaskResult is the result of tasks/get: the DetailedTask, with
// resultType "complete" because it is the method's standard result (Tasks,
// "Task Polling", "Response").
type GetTaskResult struct {
	ResultType rev.ResultType  `json:"resultType"`
	Meta       *rev.ResultMeta `json:"_meta,omitempty"`
	DetailedTask
}

// Validate checks resultType "complete" and the DetailedTask.
func (r *GetTaskResult) Validate() error {
	if r.ResultType != rev.ResultComplete {
		return fmt.Errorf("tasks/get result: resultType is %q, not %q", r.ResultType, rev.ResultComplete)
	}
	return r.DetailedTask.Validate()
}

// UpdateTaskParams are the params of tasks/update: answers to outstanding
// inputRequests, by key (Tasks, "Task Update Requests"). The server
// ignores keys that are not outstanding and may take a subset.
type UpdateTaskParams struct {
	Meta           *rev.RequestMeta   `json:"_meta,omitempty"`
	TaskID         string             `json:"taskId"`
	InputResponses rev.InputResponses `json:"inputResponses"`
}

// CancelTaskParams are the params of tasks/cancel (Tasks, "Task
// Cancellation").
type CancelTaskParams struct {
	Meta   *rev.RequestMeta `json:"_meta,omitempty"`
	TaskID string           `json:"taskId"`
}

// Ack is the result of tasks/update and tasks/cancel: empty, resultType
// "complete", no task members; it acknowledges and is eventually
// consistent (Tasks, "Task Update Requests", "Task Cancellation").
type Ack = rev.EmptyResult

// StatusParams are the params of notifications/tasks: the DetailedTask
// tasks/get would have returned at that moment (Tasks, "Task Status
// Notifications"; the extension's schema.ts has DetailedTask where its
// prose says Task). On a listen stream _meta carries the subscription id
// (2026-07-28 Subscriptions, "Receiving Notifications").
type StatusParams struct {
	Meta *rev.NotificationMeta `json:"_meta,omitempty"`
	DetailedTask
}
