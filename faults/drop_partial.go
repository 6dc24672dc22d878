package faults

import "math/rand/v2"

var dropPartialKind = Kind{
	Name:    "drop-partial",
	Summary: "a notifications/tasks/partial (SEP-2679) is lost",
	Places:  []string{PlaceHTTP, PlaceStdio, PlaceConn},
	// 2026-07-28 has no partials: results are inlined in tasks/get.
	Revisions: rev20251125,
	NotOn:     "it drops a SEP-2679 partial notification, which 2026-07-28 does not send",
	Draw:      weight(4), // it addresses few messages: partials
	New:       func(*Params) (Fault, error) { return dropPartial{}, nil },
}

type dropPartial struct{}

// methodTaskPartial is SEP-2679's notification.
const methodTaskPartial = "notifications/tasks/partial"

func (dropPartial) Act(m *Msg, _ *rand.Rand) (Action, bool) {
	if m.RPC != nil && m.RPC.Method == methodTaskPartial {
		return Action{Verb: Drop}, true
	}
	return Action{}, false
}
