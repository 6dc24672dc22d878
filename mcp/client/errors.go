package client

import (
	"errors"
	"fmt"
	"strings"

	"github.com/tasksim/tasksim/mcp"
)

var (
	// ErrClosed is returned after Session.Close.
	ErrClosed = mcp.ErrClosed
	// ErrTaskNotFound matches a *TaskError: the server does not know the
	// task (any -32602 answer to tasks/get, tasks/result or tasks/cancel).
	ErrTaskNotFound = errors.New("task not found")
	// ErrTaskExpired matches a *TaskError for a task whose ttl elapsed
	// (2025-11-25 Tasks, "TTL and Resource Management": it may be deleted
	// whatever its status).
	ErrTaskExpired = errors.New("task expired")
	// ErrCancelled ends a call that CallOptions.CancelAfter cancelled
	// before there was a task to cancel: a plain call, cancelled with
	// notifications/cancelled. A cancelled task ends the call without it
	// (its status says cancelled).
	ErrCancelled = errors.New("cancelled by the client")
	// ErrRevisionMismatch is matched by the error of Connect given a
	// connection that speaks a revision without sessions, and of
	// ConnectStateless given one that speaks a revision with them
	// (mcp.RevisionOfConn).
	ErrRevisionMismatch = errors.New("the connection speaks another protocol revision")
)

// checkRevision fails, with ErrRevisionMismatch, when conn says it speaks
// a revision that ok refuses; a connection that says none may carry
// either era.
func checkRevision(conn mcp.Conn, ok func(mcp.Revision) bool, use string) error {
	if r := mcp.RevisionOfConn(conn); r != "" && !ok(r) {
		return fmt.Errorf("client: %w: %s (%s)", ErrRevisionMismatch, r, use)
	}
	return nil
}

// TaskError is a -32602 answer to a request about a task: an unknown,
// deleted or expired task (2025-11-25 Tasks, "Protocol Errors"). During a
// call it ends the call with an incomplete result (SEP-1905, "TTL
// Expiration During Streaming": the client MUST treat the streaming as
// incomplete).
type TaskError struct {
	TaskID string
	// Method is the request that failed: tasks/get, tasks/result or
	// tasks/cancel.
	Method string
	// Expired is set when the server said so, or the task's ttl had
	// elapsed by the client's clock.
	Expired bool
	Err     *mcp.Error
}

func (e *TaskError) Error() string {
	what := "not found"
	if e.Expired {
		what = "expired"
	}
	return fmt.Sprintf("%s %s: task %s: %s (%d)", e.Method, e.TaskID, what, e.Err.Message, e.Err.Code)
}

// Is makes errors.Is match ErrTaskNotFound, and ErrTaskExpired when the
// task expired.
func (e *TaskError) Is(target error) bool {
	return target == ErrTaskNotFound || target == ErrTaskExpired && e.Expired
}

func (e *TaskError) Unwrap() error { return e.Err }

// taskError wraps a -32602 answer about a task, or returns nil for any
// other error.
func taskError(method, taskID string, err error, ttlElapsed bool) *TaskError {
	var rpc *mcp.Error
	if !errors.As(err, &rpc) || rpc.Code != mcp.CodeInvalidParams {
		return nil
	}
	expired := ttlElapsed || strings.Contains(strings.ToLower(rpc.Message), "expired")
	return &TaskError{TaskID: taskID, Method: method, Expired: expired, Err: rpc}
}
