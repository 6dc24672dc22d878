package faults

import (
	"math/rand/v2"

	"github.com/tasksim/tasksim/traces"
)

var dropSSEEventKind = Kind{
	Name:    "drop-sse-event",
	Summary: "an SSE event is not delivered; the stream goes on (in-process: a message from the server is lost as its event would be)",
	Places:  []string{PlaceHTTP, PlaceConn},
	Draw:    weight(1.5), // messages from the server only
	New:     func(*Params) (Fault, error) { return dropSSEEvent{}, nil },
}

type dropSSEEvent struct{}

func (dropSSEEvent) Act(m *Msg, _ *rand.Rand) (Action, bool) {
	if m.SSE || m.Place == PlaceConn && m.Dir == traces.DirServerToClient {
		return Action{Verb: Drop}, true
	}
	return Action{}, false
}
