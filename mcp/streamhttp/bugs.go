package streamhttp

import (
	"context"
	"encoding/json"

	"github.com/tasksim/tasksim/mcp"
)

// Bugs plants one known transport bug in a Handler, for tests only: the
// check suite's tests (sim) break the reference server one bug at a time
// and expect exactly the rule that names it to fail. Any other use leaves
// it zero. Each field names the rule it breaks.
type Bugs struct {
	// SharedEventIDs numbers the events of every POST stream as if they
	// were all stream 1 (HTTP-EVENT-ID-UNIQUE).
	SharedEventIDs bool
	// ReplayOtherStreams replays, after Last-Event-ID, the stored events
	// of the session's other POST streams too (HTTP-RESUME-SAME-STREAM).
	ReplayOtherStreams bool
	// ResumeSkipsOne resumes after Last-Event-ID one event too far: the
	// first event due is lost (HTTP-RESUME-COMPLETE).
	ResumeSkipsOne bool
	// MissingSession404 answers a request without a session id 404
	// instead of 400 (HTTP-SESSION).
	MissingSession404 bool
	// CancelOnDisconnect cancels the task of a POST stream whose
	// connection ends before its final message (TASK-SURVIVES-REQUEST).
	CancelOnDisconnect bool
	// Broadcast sends every message of the standalone stream on the open
	// POST streams too (HTTP-NO-BROADCAST).
	Broadcast bool
}

// taskOfReply returns the task id a reply's result names, if any.
func taskOfReply(data []byte) string {
	var m struct {
		Result struct {
			Task struct {
				TaskID string `json:"taskId"`
			} `json:"task"`
		} `json:"result"`
	}
	json.Unmarshal(data, &m)
	return m.Result.Task.TaskID
}

// cancelTask hands the session a tasks/cancel of taskID, as
// Bugs.CancelOnDisconnect does; its answer is discarded.
func (s *session) cancelTask(taskID string) {
	msg, err := mcp.NewRequest(mcp.StringID("tasksim-bug-cancel"), mcp.MethodTasksCancel, mcp.CancelTaskParams{TaskID: taskID})
	if err != nil {
		return
	}
	s.ms.Handle(s.ctx, msg, discardReplier{})
}

type discardReplier struct{}

func (discardReplier) Reply(context.Context, *mcp.Message, bool) error { return nil }

// otherStreamsEvents returns the stored events of every POST stream of s
// but st, as Bugs.ReplayOtherStreams replays them.
func (s *session) otherStreamsEvents(st *stream) []byte {
	s.mu.Lock()
	var others []*stream
	for _, o := range s.streams {
		if o != st {
			others = append(others, o)
		}
	}
	s.mu.Unlock()
	var out []byte
	for _, o := range others {
		o.mu.Lock()
		evs, _, _ := o.ring.since(o.ring.first, nil)
		for _, ev := range evs {
			out = append(out, ev...)
		}
		o.mu.Unlock()
	}
	return out
}

// broadcast appends data to every open POST stream, as Bugs.Broadcast
// does.
func (s *session) broadcast(data []byte) {
	s.mu.Lock()
	var open []*stream
	for _, o := range s.streams {
		if o != s.standalone {
			open = append(open, o)
		}
	}
	s.mu.Unlock()
	for _, o := range open {
		o.mu.Lock()
		done := o.done
		o.mu.Unlock()
		if !done {
			_ = o.appendMessage(data, false)
		}
	}
}
