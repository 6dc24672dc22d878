package faults

import (
	"math/rand/v2"

	"github.com/tasksim/tasksim/traces"
)

var stallKind = Kind{
	Name:    "stall",
	Summary: "a stream from the server goes silent at a message without closing: nothing more arrives until the client gives up",
	Places:  []string{PlaceHTTP, PlaceStdio, PlaceConn},
	Draw:    weight(2), // a stall acts once
	New:     func(*Params) (Fault, error) { return stall{}, nil },
}

type stall struct{}

func (stall) Act(m *Msg, _ *rand.Rand) (Action, bool) {
	if m.Dir != traces.DirServerToClient {
		return Action{}, false
	}
	return Action{Verb: Stall}, true
}
