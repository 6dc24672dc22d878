package plant

import (
	"context"
	"encoding/json"
	"slices"

	"github.com/tasksim/tasksim/mcp"
)

// Planted bugs of what a task's result and its response mode are
// (SEP-1905).

// ReversedMerge merges a task's segments in reverse order where the
// result comes whole (tasks/result, and an immediate response): the
// content is the segments last first (S1905-MERGE: "Sort segments by
// seqNr in ascending order", tasks/result Operation). A result of one
// segment reads the same either way.
func ReversedMerge(inner mcp.Endpoint) mcp.Endpoint {
	return &endpoint{inner: inner, hooks: hooks{
		handle: func(ctx context.Context, msg *mcp.Message, r mcp.Replier, next func(*mcp.Message, mcp.Replier)) {
			whole := msg.Method == mcp.MethodToolsCall || (msg.Method == mcp.MethodTasksResult && len(paramsOf(msg).LastSeqNr) == 0)
			if !whole || r == nil {
				next(msg, r)
				return
			}
			next(msg, replier{inner: r, reply: func(ctx context.Context, m *mcp.Message, final bool, out mcp.Replier) error {
				if id := mergedResultTask(m); id != "" && final {
					// More than one segment: some come after seqNr 1.
					more := ask(next, mcp.MethodTasksResult, map[string]any{"taskId": id, "lastSeqNr": 1})
					var after struct {
						Segments []json.RawMessage `json:"partial-content"`
					}
					if res := decodeObject(m.Result); more != nil && json.Unmarshal(more.Result, &after) == nil && len(after.Segments) > 0 && res != nil {
						var content []json.RawMessage
						if json.Unmarshal(res["content"], &content) == nil {
							slices.Reverse(content)
							res["content"], _ = json.Marshal(content)
							m = withResult(m, res)
						}
					}
				}
				return out.Reply(ctx, m, final)
			}})
		},
	}}
}

// ImmediateWorking answers a call negotiated as immediate with its result
// and its task still working: the task the server made to track the call
// says working though the result is there (S1905-IMMEDIATE: the task of
// an immediate response is already completed, Case 1).
func ImmediateWorking(inner mcp.Endpoint) mcp.Endpoint {
	return &endpoint{inner: inner, hooks: hooks{
		handle: func(ctx context.Context, msg *mcp.Message, r mcp.Replier, next func(*mcp.Message, mcp.Replier)) {
			if msg.Method != mcp.MethodToolsCall || r == nil {
				next(msg, r)
				return
			}
			next(msg, replier{inner: r, reply: func(ctx context.Context, m *mcp.Message, final bool, out mcp.Replier) error {
				if id := mergedResultTask(m); id != "" && final {
					got := ask(next, mcp.MethodTasksGet, map[string]string{"taskId": id})
					res := decodeObject(m.Result)
					if task := decodeObject(resultOf(got)); task != nil && res != nil {
						task["status"] = json.RawMessage(`"working"`)
						res["task"], _ = json.Marshal(task)
						m = withResult(m, res)
					}
				}
				return out.Reply(ctx, m, final)
			}})
		},
	}}
}

// FailedWithoutError ends the stream of a failed task without isError: the
// response with isComplete: true says isError: false (S1905-COMPLETE:
// "isError: true" marks a failed stream, Streaming Behavior).
func FailedWithoutError(inner mcp.Endpoint) mcp.Endpoint {
	return callReplies(inner, func(ctx context.Context, msg *mcp.Message, final bool, next mcp.Replier) error {
		if isSegmentResponse(msg) {
			if res := decodeObject(msg.Result); res != nil && string(res["isComplete"]) == "true" && string(res["isError"]) == "true" {
				res["isError"] = json.RawMessage("false")
				msg = withResult(msg, res)
			}
		}
		return next.Reply(ctx, msg, final)
	})
}

// IgnoreModes answers every task-augmented call in task mode, whatever
// its task.responseModes, and without the fallback warning: it reads the
// call as if it offered no mode (S1905-MODE-SELECT: the server picks
// among the modes both support, in order; a fallback is announced).
func IgnoreModes(inner mcp.Endpoint) mcp.Endpoint {
	return onRequests(inner, mcp.MethodToolsCall, func(msg *mcp.Message) *mcp.Message {
		params := decodeObject(msg.Params)
		task := decodeObject(params["task"])
		if task == nil || task["responseModes"] == nil {
			return msg
		}
		delete(task, "responseModes")
		params["task"], _ = json.Marshal(task)
		return withParams(msg, params)
	})
}

// mergedResultTask returns the task whose whole result m is (content with
// the related-task meta, neither segments nor a task), "" when m is
// anything else.
func mergedResultTask(m *mcp.Message) string {
	if m == nil || m.Result == nil {
		return ""
	}
	res := decodeObject(m.Result)
	if res == nil || res["content"] == nil || res[fieldPartialContent] != nil || res["task"] != nil {
		return ""
	}
	return relatedTask(res["_meta"])
}

// relatedTask is the task a _meta's related-task names, "" if none.
func relatedTask(meta json.RawMessage) string {
	var rt struct {
		TaskID string `json:"taskId"`
	}
	_ = json.Unmarshal(decodeObject(meta)[mcp.MetaRelatedTask], &rt)
	return rt.TaskID
}

// resultOf is m's result, nil without one.
func resultOf(m *mcp.Message) json.RawMessage {
	if m == nil {
		return nil
	}
	return m.Result
}
