package plant

import (
	"bytes"
	"context"
	"encoding/json"
	"sync"

	"github.com/tasksim/tasksim/mcp"
)

// RepeatSeqNr sends every non-final SEP-1905 streaming response twice on
// its stream: each segment's seqNr repeats (S1905-SEQNR: "seqNr values
// are unique and monotonically increasing"; "Never send the same seqNr
// through multiple mechanisms"). Nothing is lost: a replay after
// Last-Event-ID carries both copies, and no other rule fails.
func RepeatSeqNr(inner mcp.Endpoint) mcp.Endpoint {
	return &endpoint{inner: inner, hooks: hooks{
		reply: func(ctx context.Context, msg *mcp.Message, final bool, next mcp.Replier) error {
			if err := next.Reply(ctx, msg, final); err != nil || final || msg == nil || !isSegmentResponse(msg) {
				return err
			}
			return next.Reply(ctx, msg, false)
		},
	}}
}

// isSegmentResponse reports whether msg is a response carrying SEP-1905
// partial-content.
func isSegmentResponse(msg *mcp.Message) bool {
	return msg.Kind() == mcp.KindResponse && bytes.Contains(msg.Result, []byte(`"partial-content"`))
}

// NoIsComplete never sends isComplete: true on a SEP-1905 stream: the
// response that ends the stream says isComplete: false, though the task
// completes (S1905-COMPLETE: "The task status MUST remain working until
// isComplete: true is sent"; the Server Implementation Guide's "Set
// isComplete: true in the final streaming response"). Answers to
// tasks/result are left as they are: only the call's stream lacks it.
func NoIsComplete(inner mcp.Endpoint) mcp.Endpoint {
	return callReplies(inner, func(ctx context.Context, msg *mcp.Message, final bool, next mcp.Replier) error {
		if isSegmentResponse(msg) {
			if res := decodeObject(msg.Result); res != nil && string(res["isComplete"]) == "true" {
				res["isComplete"] = json.RawMessage("false")
				msg = withResult(msg, res)
			}
		}
		return next.Reply(ctx, msg, final)
	})
}

// CompleteEarly says the task is completed before its stream is: just
// before the response with isComplete: true that carries the last
// segments, it sends notifications/tasks/status completed on the same
// stream (S1905-COMPLETE: "The task status MUST remain working until
// isComplete: true is sent"). One stream carries both, so its order is the
// server's, whoever recorded it.
func CompleteEarly(inner mcp.Endpoint) mcp.Endpoint {
	return callReplies(inner, func(ctx context.Context, msg *mcp.Message, final bool, next mcp.Replier) error {
		if n := earlyCompleted(msg); n != nil {
			if err := next.Reply(ctx, n, false); err != nil {
				return err
			}
		}
		return next.Reply(ctx, msg, final)
	})
}

// earlyCompleted returns the status notification CompleteEarly sends
// before msg, or nil when msg is not a final streaming response of a
// completed task.
func earlyCompleted(msg *mcp.Message) *mcp.Message {
	if !isSegmentResponse(msg) {
		return nil
	}
	res := decodeObject(msg.Result)
	if res == nil || string(res["isComplete"]) != "true" {
		return nil
	}
	task := decodeObject(res["task"])
	if task == nil || string(task["status"]) != `"completed"` {
		return nil
	}
	// Not byte for byte the notification the server sends after the
	// stream, which would be the same message on two streams
	// (HTTP-NO-BROADCAST's).
	task["statusMessage"] = json.RawMessage(`"completed before the last segment"`)
	n, err := mcp.NewNotification(mcp.NotificationTaskStatus, task)
	if err != nil {
		return nil
	}
	return n
}

// LastModeOnly ignores the order SEP-1905 gives the modes a client
// offers: of a tools/call's task.responseModes it keeps only the last, so
// that [streaming, task] is answered in task mode where both sides
// support streaming (S1905-MODE-SELECT: "If there are multiple supported
// modes, the server MUST prioritize them in the following order:
// immediate, streaming, task").
func LastModeOnly(inner mcp.Endpoint) mcp.Endpoint {
	return onRequests(inner, mcp.MethodToolsCall, lastModeOnly)
}

func lastModeOnly(msg *mcp.Message) *mcp.Message {
	params := decodeObject(msg.Params)
	task := decodeObject(params["task"])
	var modes []json.RawMessage
	if task == nil || json.Unmarshal(task["responseModes"], &modes) != nil || len(modes) < 2 {
		return msg
	}
	task["responseModes"], _ = json.Marshal(modes[len(modes)-1:])
	params["task"], _ = json.Marshal(task)
	return withParams(msg, params)
}

// callReplies decorates the replier of every tools/call with reply.
func callReplies(inner mcp.Endpoint, reply func(ctx context.Context, msg *mcp.Message, final bool, next mcp.Replier) error) mcp.Endpoint {
	return &endpoint{inner: inner, hooks: hooks{
		handle: func(ctx context.Context, msg *mcp.Message, r mcp.Replier, next func(*mcp.Message, mcp.Replier)) {
			if msg.Method == mcp.MethodToolsCall && r != nil {
				r = replier{inner: r, reply: func(ctx context.Context, m *mcp.Message, final bool, next mcp.Replier) error {
					if m == nil {
						return next.Reply(ctx, m, final)
					}
					return reply(ctx, m, final, next)
				}}
			}
			next(msg, r)
		},
	}}
}

// decodeObject decodes a JSON object, nil when raw is none.
func decodeObject(raw json.RawMessage) map[string]json.RawMessage {
	var m map[string]json.RawMessage
	if json.Unmarshal(raw, &m) != nil {
		return nil
	}
	return m
}

// LateStatus is no bug: a legal variant of a correct server, for tests
// that a verdict holds on it. Its task status moves to completed a while
// after the response with isComplete: true, as SEP-1905 allows ("The task
// status MUST remain working until isComplete: true is sent, after which
// it MUST transition to completed": after, not with). The response with
// isComplete: true carries no task; until the client next asks tasks/get
// of the task, which is answered working, tasks/result with lastSeqNr
// says isComplete: false and the completed status notification waits.
// Then the status is completed.
func LateStatus(inner mcp.Endpoint) mcp.Endpoint {
	l := &lateStatus{late: map[string][]func(){}}
	return &endpoint{inner: inner, hooks: hooks{handle: l.handle, send: l.send}}
}

// lateStatus is LateStatus's state: the tasks whose status has not moved
// to completed yet.
type lateStatus struct {
	mu   sync.Mutex
	late map[string][]func() // task id -> the held notifications, sent once the status moved
}

// moved sends the notifications held for task id: its status moved.
func (l *lateStatus) moved(id string) {
	l.mu.Lock()
	held, ok := l.late[id]
	delete(l.late, id)
	l.mu.Unlock()
	if ok {
		for _, send := range held {
			send()
		}
	}
}

func (l *lateStatus) isLate(id string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	_, ok := l.late[id]
	return ok
}

func (l *lateStatus) handle(ctx context.Context, msg *mcp.Message, r mcp.Replier, next func(*mcp.Message, mcp.Replier)) {
	if r == nil {
		next(msg, r)
		return
	}
	id := jsonString(decodeObject(msg.Params)["taskId"])
	switch {
	case msg.Method == mcp.MethodToolsCall:
		r = replier{inner: r, reply: l.withoutTask}
	case msg.Method == mcp.MethodTasksGet && l.isLate(id):
		r = replier{inner: r, reply: func(ctx context.Context, m *mcp.Message, final bool, next mcp.Replier) error {
			return l.stillWorking(ctx, id, m, final, next)
		}}
	case msg.Method == mcp.MethodTasksResult && l.isLate(id) && len(decodeObject(msg.Params)["lastSeqNr"]) > 0:
		r = replier{inner: r, reply: notComplete}
	}
	next(msg, r)
}

// withoutTask takes the completed task out of the tools/call response
// with isComplete: true, and marks the task late.
func (l *lateStatus) withoutTask(ctx context.Context, m *mcp.Message, final bool, next mcp.Replier) error {
	if m == nil || !isSegmentResponse(m) {
		return next.Reply(ctx, m, final)
	}
	res := decodeObject(m.Result)
	task := decodeObject(res["task"])
	if res == nil || string(res["isComplete"]) != "true" || task == nil || string(task["status"]) != `"completed"` {
		return next.Reply(ctx, m, final)
	}
	l.mu.Lock()
	l.late[jsonString(task["taskId"])] = nil
	l.mu.Unlock()
	delete(res, "task")
	return next.Reply(ctx, withResult(m, res), final)
}

// stillWorking answers tasks/get of late task id with working, once; then
// the status moves.
func (l *lateStatus) stillWorking(ctx context.Context, id string, m *mcp.Message, final bool, next mcp.Replier) error {
	if res := decodeObject(m.Result); res != nil && string(res["status"]) == `"completed"` {
		res["status"] = json.RawMessage(`"working"`)
		m = withResult(m, res)
	}
	err := next.Reply(ctx, m, final)
	l.moved(id)
	return err
}

// notComplete answers tasks/result of a late task with isComplete: false
// and no content.
func notComplete(ctx context.Context, m *mcp.Message, final bool, next mcp.Replier) error {
	if res := decodeObject(m.Result); res != nil && string(res["isComplete"]) == "true" {
		res["isComplete"] = json.RawMessage("false")
		delete(res, "content")
		m = withResult(m, res)
	}
	return next.Reply(ctx, m, final)
}

// send holds a status notification of a late task until its status moves.
func (l *lateStatus) send(ctx context.Context, msg *mcp.Message, self mcp.Outbox) error {
	if msg.Method == mcp.NotificationTaskStatus {
		id := jsonString(decodeObject(msg.Params)["taskId"])
		l.mu.Lock()
		if held, ok := l.late[id]; ok {
			l.late[id] = append(held, func() { _ = self.Send(context.WithoutCancel(ctx), msg) })
			l.mu.Unlock()
			return nil
		}
		l.mu.Unlock()
	}
	return self.Send(ctx, msg)
}

// jsonString decodes a JSON string, "" when raw is none.
func jsonString(raw json.RawMessage) string {
	var s string
	_ = json.Unmarshal(raw, &s)
	return s
}
