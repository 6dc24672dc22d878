package client

import (
	"context"
	"encoding/json"
	"strconv"

	"github.com/tasksim/tasksim/mcp"
)

// maxPages bounds the pages ListTools and ListTasks follow, against a
// server whose cursors never end.
const maxPages = 1000

// Ping sends ping and waits for the answer.
func (s *Session) Ping(ctx context.Context) error {
	return s.call(ctx, nil, mcp.MethodPing, struct{}{}, nil)
}

// ListTools returns every tool, following nextCursor.
func (s *Session) ListTools(ctx context.Context) ([]mcp.Tool, error) {
	var all []mcp.Tool
	cursor := ""
	for range maxPages {
		var res mcp.ListToolsResult
		if err := s.call(ctx, nil, mcp.MethodToolsList, mcp.ListToolsParams{Cursor: cursor}, &res); err != nil {
			return all, err
		}
		all = append(all, res.Tools...)
		if res.NextCursor == "" {
			break
		}
		cursor = res.NextCursor
	}
	return all, nil
}

// GetTask sends tasks/get. An unknown or expired task is a *TaskError.
func (s *Session) GetTask(ctx context.Context, taskID string) (*mcp.Task, error) {
	return s.getTask(ctx, nil, taskID)
}

func (s *Session) getTask(ctx context.Context, rec *recorder, taskID string) (*mcp.Task, error) {
	var t mcp.Task
	err := s.call(ctx, rec, mcp.MethodTasksGet, mcp.GetTaskParams{TaskID: taskID}, &t)
	if te := taskError(mcp.MethodTasksGet, taskID, err, false); te != nil {
		return nil, te
	}
	if err != nil {
		return nil, err
	}
	return &t, nil
}

// TaskResult sends tasks/result. With lastSeqNr 0 it asks for the
// canonical result, which the server holds back until the task is
// terminal (2025-11-25 Tasks, "Result Retrieval"); with lastSeqNr >= 1 it
// resumes a SEP-1905 stream and gets the segments after it at once
// ("Resuming Streaming"). The answer is decoded in whichever shape it
// has. A JSON-RPC error of the underlying request comes back as the
// *mcp.Error; an unknown or expired task as a *TaskError.
func (s *Session) TaskResult(ctx context.Context, taskID string, lastSeqNr int64) (*mcp.ToolCallResponse, error) {
	return s.taskResult(ctx, nil, taskID, lastSeqNr)
}

func (s *Session) taskResult(ctx context.Context, rec *recorder, taskID string, lastSeqNr int64) (*mcp.ToolCallResponse, error) {
	p := mcp.TaskResultParams{TaskID: taskID}
	if lastSeqNr > 0 {
		p.LastSeqNr = json.RawMessage(strconv.FormatInt(lastSeqNr, 10))
	}
	var r mcp.ToolCallResponse
	err := s.call(ctx, rec, mcp.MethodTasksResult, p, &r)
	if te := taskError(mcp.MethodTasksResult, taskID, err, false); te != nil {
		return nil, te
	}
	if err != nil {
		return nil, err
	}
	return &r, nil
}

// ListTasks returns every task of the session, following nextCursor.
func (s *Session) ListTasks(ctx context.Context) ([]mcp.Task, error) {
	var all []mcp.Task
	cursor := ""
	for range maxPages {
		var res mcp.ListTasksResult
		if err := s.call(ctx, nil, mcp.MethodTasksList, mcp.ListTasksParams{Cursor: cursor}, &res); err != nil {
			return all, err
		}
		all = append(all, res.Tasks...)
		if res.NextCursor == "" {
			break
		}
		cursor = res.NextCursor
	}
	return all, nil
}

// CancelTask sends tasks/cancel and returns the task as the server left
// it. Cancelling a terminal or unknown task is a *TaskError (-32602,
// 2025-11-25 Tasks, "Task Cancellation").
func (s *Session) CancelTask(ctx context.Context, taskID string) (*mcp.Task, error) {
	return s.cancelTask(ctx, nil, taskID)
}

func (s *Session) cancelTask(ctx context.Context, rec *recorder, taskID string) (*mcp.Task, error) {
	var t mcp.Task
	err := s.call(ctx, rec, mcp.MethodTasksCancel, mcp.CancelTaskParams{TaskID: taskID}, &t)
	if te := taskError(mcp.MethodTasksCancel, taskID, err, false); te != nil {
		return nil, te
	}
	if err != nil {
		return nil, err
	}
	return &t, nil
}

// Request sends any request and returns its one answer as it came, a
// JSON-RPC error answer included (Message.Error). It is for callers that
// probe a server with requests the typed methods would not send, such as a
// tasks/result with a lastSeqNr that is not a positive number.
func (s *Session) Request(ctx context.Context, method string, params any) (*mcp.Message, error) {
	return s.request(ctx, nil, method, params)
}
