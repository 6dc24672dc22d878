package plant

import (
	"context"
	"encoding/json"
	"sync"

	"github.com/tasksim/tasksim/mcp"
)

// Planted bugs of SEP-2679 partial notifications
// (notifications/tasks/partial).

// SeqFromOne numbers a task's partial notifications from 1 (S2679-SEQ:
// "seq starts at 0 and increases by 1", §1.3 rule 4).
func SeqFromOne(inner mcp.Endpoint) mcp.Endpoint {
	return onPartials(inner, func(p map[string]json.RawMessage) {
		var seq int64
		if json.Unmarshal(p["seq"], &seq) == nil {
			p["seq"], _ = json.Marshal(seq + 1)
		}
	})
}

// EmptyPartial sends each task's first partial notification with empty
// content (S2679-CONTENT: content MUST NOT be empty, §1.3 rule 5).
func EmptyPartial(inner mcp.Endpoint) mcp.Endpoint {
	return onPartials(inner, func(p map[string]json.RawMessage) {
		if string(p["seq"]) == "0" {
			p["content"] = json.RawMessage("[]")
		}
	})
}

// onPartials passes the params of every partial notification through
// edit.
func onPartials(inner mcp.Endpoint, edit func(map[string]json.RawMessage)) mcp.Endpoint {
	return &endpoint{inner: inner, hooks: hooks{
		send: func(ctx context.Context, msg *mcp.Message, self mcp.Outbox) error {
			if msg.Method == mcp.NotificationTaskPartial {
				if p := decodeObject(msg.Params); p != nil {
					edit(p)
					msg = withParams(msg, p)
				}
			}
			return self.Send(ctx, msg)
		},
	}}
}

// PartialsUnasked sends partial notifications to every client, also one
// that did not declare tasks.streaming.partial (S2679-NEGOTIATION: only to
// a client that declared it, §2.3): the server reads every initialize as
// if it did.
func PartialsUnasked(inner mcp.Endpoint) mcp.Endpoint {
	return onRequests(inner, mcp.MethodInitialize, declarePartials)
}

// declarePartials returns initialize msg with
// capabilities.tasks.streaming.partial declared.
func declarePartials(msg *mcp.Message) *mcp.Message {
	params := decodeObject(msg.Params)
	if params == nil {
		return msg
	}
	caps := decodeObject(params["capabilities"])
	if caps == nil {
		caps = map[string]json.RawMessage{}
	}
	tasks := decodeObject(caps["tasks"])
	if tasks == nil {
		tasks = map[string]json.RawMessage{}
	}
	streaming := decodeObject(tasks["streaming"])
	if streaming == nil {
		streaming = map[string]json.RawMessage{}
	}
	streaming["partial"] = json.RawMessage("{}")
	tasks["streaming"], _ = json.Marshal(streaming)
	caps["tasks"], _ = json.Marshal(tasks)
	params["capabilities"], _ = json.Marshal(caps)
	return withParams(msg, params)
}

// PartialAfterTerminal sends one more partial notification ("late") after
// a task's tool ended and its terminal status notification went out
// (S2679-AFTER-TERMINAL: no partial after the terminal status, §1.3 rule
// 2). Tasks cancelled or expired get none, as their tool did not end on
// its own.
func PartialAfterTerminal(inner mcp.Endpoint) mcp.Endpoint {
	return &endpoint{inner: inner, perSession: func(mcp.Outbox) hooks {
		var mu sync.Mutex
		clientAsked, serverOffers := false, false
		next := map[string]int64{} // task id -> its next seq
		return hooks{
			handle: func(ctx context.Context, msg *mcp.Message, r mcp.Replier, nextHandle func(*mcp.Message, mcp.Replier)) {
				if msg.Method == mcp.MethodInitialize && r != nil {
					var p mcp.InitializeParams
					asked := json.Unmarshal(msg.Params, &p) == nil && p.Capabilities.Tasks.PartialStreaming()
					r = replier{inner: r, reply: func(ctx context.Context, m *mcp.Message, final bool, out mcp.Replier) error {
						var res mcp.InitializeResult
						if m != nil && json.Unmarshal(m.Result, &res) == nil {
							mu.Lock()
							clientAsked, serverOffers = asked, res.Capabilities.Tasks.PartialStreaming()
							mu.Unlock()
						}
						return out.Reply(ctx, m, final)
					}}
				}
				nextHandle(msg, r)
			},
			send: func(ctx context.Context, msg *mcp.Message, self mcp.Outbox) error {
				err := self.Send(ctx, msg)
				switch msg.Method {
				case mcp.NotificationTaskPartial:
					var p mcp.TaskPartialParams
					if json.Unmarshal(msg.Params, &p) == nil {
						mu.Lock()
						next[p.TaskID] = p.Seq + 1
						mu.Unlock()
					}
				case mcp.NotificationTaskStatus:
					var p mcp.TaskStatusParams
					if json.Unmarshal(msg.Params, &p) != nil || !endedOnItsOwn(p.Task) {
						return err
					}
					mu.Lock()
					seq, on := next[p.TaskID], clientAsked && serverOffers
					delete(next, p.TaskID)
					mu.Unlock()
					if !on {
						return err
					}
					if n, nerr := mcp.NewPartialNotification(mcp.TaskPartialParams{TaskID: p.TaskID, Content: []mcp.ContentBlock{mcp.TextBlock("late")}, Seq: seq}); nerr == nil {
						_ = self.Send(ctx, n)
					}
				}
				return err
			},
		}
	}}
}

// endedOnItsOwn reports whether t is terminal because its tool ended:
// completed, or failed other than by expiry.
func endedOnItsOwn(t mcp.Task) bool {
	return t.Status == mcp.StatusCompleted || (t.Status == mcp.StatusFailed && t.StatusMessage != "Task has expired")
}
