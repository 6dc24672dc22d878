package faults

// A push delivered twice carries the same DetailedTask twice: a client
// must take it as the same state, and never regress from a terminal one
// (Tasks, "Task Status Notifications").
var duplicateTaskNotificationKind = Kind{
	Name:      "duplicate-task-notification",
	Summary:   "a notifications/tasks on a listen stream is delivered twice",
	Places:    []string{PlaceHTTP, PlaceStdio, PlaceConn},
	Revisions: rev20260728,
	NotOn:     "notifications/tasks is 2026-07-28's push; 2025-11-25 sends notifications/tasks/status",
	Draw:      weight(4), // it addresses few messages: pushes
	New:       func(*Params) (Fault, error) { return taskNotification{verb: Duplicate}, nil },
}
