package faults

import "math/rand/v2"

var dropPartialKind = Kind{
	Name:    "drop-partial",
	Summary: "a notifications/tasks/partial (SEP-2679) is lost",
	Places:  []string{PlaceHTTP, PlaceStdio, PlaceConn},
	Draw:    weight(4), // it addresses few messages: partials
	New:     func(*Params) (Fault, error) { return dropPartial{}, nil },
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
