package faults

import (
	"math/rand/v2"

	"github.com/tasksim/tasksim/mcp/rev20260728/tasks"
)

// notifications/tasks are pushes on a subscriptions/listen stream,
// unsequenced and never replayed: a client must survive one lost and
// fall back on tasks/get (Tasks, "Task Status Notifications").
var dropTaskNotificationKind = Kind{
	Name:      "drop-task-notification",
	Summary:   "a notifications/tasks on a listen stream is lost; the stream goes on",
	Places:    []string{PlaceHTTP, PlaceStdio, PlaceConn},
	Revisions: rev20260728,
	NotOn:     "notifications/tasks is 2026-07-28's push; 2025-11-25 sends notifications/tasks/status",
	Draw:      weight(4), // it addresses few messages: pushes
	New:       func(*Params) (Fault, error) { return taskNotification{verb: Drop}, nil },
}

// taskNotification does verb to every notifications/tasks of 2026-07-28.
type taskNotification struct{ verb Verb }

func (f taskNotification) Act(m *Msg, _ *rand.Rand) (Action, bool) {
	if of20260728(m) && m.RPC.Method == tasks.NotificationStatus {
		return Action{Verb: f.verb}, true
	}
	return Action{}, false
}
