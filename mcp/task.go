package mcp

import (
	"encoding/json"
	"time"
)

// TaskStatus is the state of a task (2025-11-25 Tasks, "Task Status").
type TaskStatus string

// Task statuses.
const (
	StatusWorking       TaskStatus = "working"
	StatusInputRequired TaskStatus = "input_required"
	StatusCompleted     TaskStatus = "completed"
	StatusFailed        TaskStatus = "failed"
	StatusCancelled     TaskStatus = "cancelled"
)

// IsTerminal reports whether no transition may leave s.
func (s TaskStatus) IsTerminal() bool {
	return s == StatusCompleted || s == StatusFailed || s == StatusCancelled
}

// IsValid reports whether s is one of the five statuses.
func (s TaskStatus) IsValid() bool {
	switch s {
	case StatusWorking, StatusInputRequired, StatusCompleted, StatusFailed, StatusCancelled:
		return true
	}
	return false
}

// CanTransition reports whether a task may move from one status to another
// (2025-11-25 Tasks, "Task Status Lifecycle"): from working to any other
// status, from input_required to any other status, and never out of a
// terminal status. Staying in the same non-terminal status is allowed (an
// update of the status message).
func CanTransition(from, to TaskStatus) bool {
	if !from.IsValid() || !to.IsValid() || from.IsTerminal() {
		return false
	}
	return true
}

// Task is the state of a task as the wire carries it (2025-11-25 Tasks,
// "Data Types"). TTL is a pointer because the spec sends null for an
// unlimited lifetime and requires the member to be present.
type Task struct {
	TaskID        string     `json:"taskId"`
	Status        TaskStatus `json:"status"`
	StatusMessage string     `json:"statusMessage,omitempty"`
	CreatedAt     string     `json:"createdAt"`
	LastUpdatedAt string     `json:"lastUpdatedAt"`
	TTL           *int64     `json:"ttl"`
	PollInterval  *int64     `json:"pollInterval,omitempty"`
}

// TimeFormat is the ISO 8601 form tasksim writes task timestamps in.
const TimeFormat = "2006-01-02T15:04:05.000Z07:00"

// FormatTime writes t as an ISO 8601 UTC timestamp with milliseconds.
func FormatTime(t time.Time) string { return t.UTC().Format(TimeFormat) }

// ParseTime reads an ISO 8601 timestamp as RFC 3339 allows it.
func ParseTime(s string) (time.Time, error) { return time.Parse(time.RFC3339Nano, s) }

// TaskParams is the "task" member of a task-augmented request's params:
// the requested ttl (2025-11-25 Tasks, "Task Parameters") and the response
// modes the client accepts (SEP-1905, "Capability Negotiation").
type TaskParams struct {
	TTL           *int64         `json:"ttl,omitempty"`
	ResponseModes []ResponseMode `json:"responseModes,omitempty"`
}

// CreateTaskResult answers a task-augmented request in task mode.
type CreateTaskResult struct {
	Task Task `json:"task"`
	Meta Meta `json:"_meta,omitempty"`
}

// GetTaskParams are the params of tasks/get.
type GetTaskParams struct {
	TaskID string `json:"taskId"`
}

// GetTaskResult is the result of tasks/get and tasks/cancel: the task itself.
type GetTaskResult = Task

// TaskResultParams are the params of tasks/result. LastSeqNr is raw so that
// a non-numeric value can be told apart from an absent one (SEP-1905,
// "Resuming Streaming": invalid values get -32602).
type TaskResultParams struct {
	TaskID    string          `json:"taskId"`
	LastSeqNr json.RawMessage `json:"lastSeqNr,omitempty"`
}

// ListTasksParams are the params of tasks/list.
type ListTasksParams struct {
	Cursor string `json:"cursor,omitempty"`
}

// ListTasksResult is the result of tasks/list.
type ListTasksResult struct {
	Tasks      []Task `json:"tasks"`
	NextCursor string `json:"nextCursor,omitempty"`
}

// CancelTaskParams are the params of tasks/cancel.
type CancelTaskParams struct {
	TaskID string `json:"taskId"`
}

// TaskStatusParams are the params of notifications/tasks/status: the full
// task.
type TaskStatusParams struct {
	Task
	Meta Meta `json:"_meta,omitempty"`
}

// TaskPartialParams are the params of notifications/tasks/partial
// (SEP-2679 §1.2).
type TaskPartialParams struct {
	TaskID  string         `json:"taskId"`
	Content []ContentBlock `json:"content"`
	Seq     int64          `json:"seq"`
	Meta    Meta           `json:"_meta,omitempty"`
}

// RelatedTask is the value of the related-task meta key.
type RelatedTask struct {
	TaskID string `json:"taskId"`
}
