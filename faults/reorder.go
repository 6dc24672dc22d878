package faults

import "math/rand/v2"

var reorderKind = Kind{
	Name:    "reorder",
	Summary: "a message is held back and delivered after the next message of its stream: the two swap places",
	Places:  []string{PlaceHTTP, PlaceStdio, PlaceConn},
	New:     func(*Params) (Fault, error) { return reorder{}, nil },
}

type reorder struct{}

func (reorder) Act(m *Msg, _ *rand.Rand) (Action, bool) {
	if m.Stream == StreamRequest {
		return Action{}, false // an HTTP request is no message of a stream
	}
	return Action{Verb: Hold}, true
}
