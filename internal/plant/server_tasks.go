package plant

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/tasksim/tasksim/mcp"
	"github.com/tasksim/tasksim/mcp/server"
)

// Planted bugs of the base Tasks protocol (2025-11-25 Tasks), each named
// after what the server does wrong and breaking the rule in its comment.

// SequentialIDs gives out task ids task-1, task-2, … (TASK-ID-ENTROPY:
// "receivers MUST generate cryptographically secure task IDs",
// 2025-11-25 Tasks › Security Considerations). It sets the server's id
// source (server.Options.TaskIDs); each server counts from 1.
func SequentialIDs(o *server.Options) {
	var n atomic.Int64
	o.TaskIDs = func() (string, error) { return fmt.Sprintf("task-%d", n.Add(1)), nil }
}

// SharedTasks lets any session reach any task by its id
// (server.ScopeServer): TASK-ISOLATION (2025-11-25 Tasks › Security
// Considerations › Task Isolation and Access Control).
func SharedTasks(o *server.Options) { o.TaskScope = server.ScopeServer }

// CancelTerminal answers tasks/cancel of a task already in a terminal
// status with the task, as if it had been cancelled, instead of -32602
// (TASK-CANCEL-TERMINAL: "Receivers MUST reject cancellation requests for
// tasks already in a terminal status with error code -32602").
func CancelTerminal(inner mcp.Endpoint) mcp.Endpoint {
	return &endpoint{inner: inner, hooks: hooks{
		handle: func(ctx context.Context, msg *mcp.Message, r mcp.Replier, next func(*mcp.Message, mcp.Replier)) {
			if msg.Method == mcp.MethodTasksCancel && r != nil {
				r = replier{inner: r, reply: func(ctx context.Context, m *mcp.Message, final bool, out mcp.Replier) error {
					if m != nil && m.Error != nil && m.Error.Code == mcp.CodeInvalidParams {
						// The task exists (tasks/get finds it): it was terminal.
						if got := ask(next, mcp.MethodTasksGet, map[string]string{"taskId": paramsOf(msg).TaskID}); got != nil && got.Result != nil {
							m = &mcp.Message{ID: m.ID, Result: got.Result}
						}
					}
					return out.Reply(ctx, m, final)
				}}
			}
			next(msg, r)
		},
	}}
}

// ReopenTerminal reports a completed task as working in tasks/get
// (TASK-STATUS-TRANSITION: a terminal status never changes, 2025-11-25
// Tasks › Task Status Lifecycle).
func ReopenTerminal(inner mcp.Endpoint) mcp.Endpoint {
	return onAnswers(inner, mcp.MethodTasksGet, func(msg, m *mcp.Message) *mcp.Message {
		if res := decodeObject(m.Result); res != nil && string(res["status"]) == `"completed"` {
			res["status"] = json.RawMessage(`"working"`)
			return withResult(m, res)
		}
		return m
	})
}

// NoRelatedTask leaves the _meta, and with it the related-task meta, out
// of the result tasks/result returns (TASK-RESULT: "tasks/result MUST
// include the io.modelcontextprotocol/related-task metadata", 2025-11-25
// Tasks › Result Retrieval).
func NoRelatedTask(inner mcp.Endpoint) mcp.Endpoint {
	return onAnswers(inner, mcp.MethodTasksResult, func(msg, m *mcp.Message) *mcp.Message {
		if len(paramsOf(msg).LastSeqNr) > 0 {
			return m // a resume: SEP-1905's, not the base result
		}
		if res := decodeObject(m.Result); res != nil && res["_meta"] != nil {
			delete(res, "_meta")
			return withResult(m, res)
		}
		return m
	})
}

// NoCreatedAt leaves createdAt out of every task the server sends, in
// results and in status notifications (TASK-FIELDS: createdAt is a
// required field of Task, 2025-11-25 Tasks › Data Types).
func NoCreatedAt(inner mcp.Endpoint) mcp.Endpoint {
	drop := func(o map[string]json.RawMessage) bool {
		if o["taskId"] == nil || o["status"] == nil || o["createdAt"] == nil {
			return false
		}
		delete(o, "createdAt")
		return true
	}
	return &endpoint{inner: inner, hooks: hooks{
		reply: func(ctx context.Context, msg *mcp.Message, final bool, next mcp.Replier) error {
			if msg != nil && msg.Result != nil {
				if raw, ok := editObjects(msg.Result, drop); ok {
					c := *msg
					c.Result = raw
					msg = &c
				}
			}
			return next.Reply(ctx, msg, final)
		},
		send: func(ctx context.Context, msg *mcp.Message, self mcp.Outbox) error {
			if raw, ok := editObjects(msg.Params, drop); ok {
				c := *msg
				c.Params = raw
				msg = &c
			}
			return self.Send(ctx, msg)
		},
	}}
}

// maxKnownTasks bounds the task ids NotFoundInternal remembers.
const maxKnownTasks = 100_000

// NotFoundInternal answers a task id the server never gave out with
// -32603 instead of -32602 (TASK-NOT-FOUND: "Invalid or nonexistent
// taskId" is -32602, 2025-11-25 Tasks › Error Handling). Another
// session's task and an expired one are still "not found" -32602: the
// decorator knows the ids the server sent, in any session, until that
// session closes.
func NotFoundInternal(inner mcp.Endpoint) mcp.Endpoint {
	var mu sync.Mutex
	known := map[string]bool{}
	isKnown := func(id string) bool {
		mu.Lock()
		defer mu.Unlock()
		return known[id]
	}
	return &endpoint{inner: inner, perSession: func(mcp.Outbox) hooks {
		var mine []string
		note := func(raw json.RawMessage) {
			ms := taskIDRe.FindAllSubmatch(raw, -1)
			if len(ms) == 0 {
				return
			}
			mu.Lock()
			defer mu.Unlock()
			for _, m := range ms {
				id := string(m[1])
				if !known[id] && len(known) < maxKnownTasks {
					known[id] = true
					mine = append(mine, id)
				}
			}
		}
		return hooks{
			handle: func(ctx context.Context, msg *mcp.Message, r mcp.Replier, next func(*mcp.Message, mcp.Replier)) {
				switch msg.Method {
				case mcp.MethodTasksGet, mcp.MethodTasksResult, mcp.MethodTasksCancel:
					if r != nil {
						id := paramsOf(msg).TaskID
						r = replier{inner: r, reply: func(ctx context.Context, m *mcp.Message, final bool, out mcp.Replier) error {
							if m != nil && m.Error != nil && m.Error.Code == mcp.CodeInvalidParams && m.Error.Message == "Failed to retrieve task: Task not found" && !isKnown(id) {
								m = mcp.NewError(m.ID, mcp.Errorf(mcp.CodeInternalError, "task lookup failed"))
							}
							return out.Reply(ctx, m, final)
						}}
					}
				}
				next(msg, r)
			},
			reply: func(ctx context.Context, msg *mcp.Message, final bool, next mcp.Replier) error {
				if msg != nil {
					note(msg.Result)
				}
				return next.Reply(ctx, msg, final)
			},
			send: func(ctx context.Context, msg *mcp.Message, self mcp.Outbox) error {
				note(msg.Params)
				return self.Send(ctx, msg)
			},
			close: func() {
				// The session's tasks are deleted with it.
				mu.Lock()
				defer mu.Unlock()
				for _, id := range mine {
					delete(known, id)
				}
			},
		}
	}}
}

// onAnswers passes each answer to a request of method through edit, with
// the request; a nil answer (none) passes as it is.
func onAnswers(inner mcp.Endpoint, method string, edit func(req, answer *mcp.Message) *mcp.Message) mcp.Endpoint {
	return &endpoint{inner: inner, hooks: hooks{
		handle: func(ctx context.Context, msg *mcp.Message, r mcp.Replier, next func(*mcp.Message, mcp.Replier)) {
			if msg.Method == method && r != nil {
				req := msg
				r = replier{inner: r, reply: func(ctx context.Context, m *mcp.Message, final bool, out mcp.Replier) error {
					if m != nil && m.Result != nil {
						m = edit(req, m)
					}
					return out.Reply(ctx, m, final)
				}}
			}
			next(msg, r)
		},
	}}
}

// editObjects applies f to every JSON object in raw, inner ones first, and
// returns raw encoded again and true where f changed something; raw as it
// is and false where it changed nothing.
func editObjects(raw json.RawMessage, f func(map[string]json.RawMessage) bool) (json.RawMessage, bool) {
	var obj map[string]json.RawMessage
	if json.Unmarshal(raw, &obj) == nil && obj != nil {
		changed := false
		for k, v := range obj {
			if nv, ok := editObjects(v, f); ok {
				obj[k], changed = nv, true
			}
		}
		if f(obj) {
			changed = true
		}
		return remarshal(raw, obj, changed)
	}
	var arr []json.RawMessage
	if json.Unmarshal(raw, &arr) == nil && arr != nil {
		changed := false
		for i, v := range arr {
			if nv, ok := editObjects(v, f); ok {
				arr[i], changed = nv, true
			}
		}
		return remarshal(raw, arr, changed)
	}
	return raw, false
}

func remarshal(raw json.RawMessage, v any, changed bool) (json.RawMessage, bool) {
	if !changed {
		return raw, false
	}
	out, err := json.Marshal(v)
	if err != nil {
		return raw, false
	}
	return out, true
}
