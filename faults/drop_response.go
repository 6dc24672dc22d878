package faults

import "math/rand/v2"

var dropResponseKind = Kind{
	Name:    "drop-response",
	Summary: "a JSON-RPC response is lost: the stream or body goes on (or ends) without it",
	Places:  []string{PlaceHTTP, PlaceStdio, PlaceConn},
	Draw:    weight(2), // responses only
	New:     func(*Params) (Fault, error) { return dropResponse{}, nil },
}

type dropResponse struct{}

func (dropResponse) Act(m *Msg, _ *rand.Rand) (Action, bool) {
	if m.RPC != nil && m.RPC.Type == "response" {
		return Action{Verb: Drop}, true
	}
	return Action{}, false
}
