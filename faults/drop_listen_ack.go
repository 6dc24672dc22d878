package faults

import (
	"math/rand/v2"

	rev "github.com/tasksim/tasksim/mcp/rev20260728"
)

// The first message on a subscriptions/listen stream MUST be its
// acknowledgement, carrying the agreed subset of the filter (2026-07-28
// "Subscriptions"): without it a client does not know what it will be
// told.
var dropListenAckKind = Kind{
	Name:      "drop-listen-ack",
	Summary:   "the notifications/subscriptions/acknowledged that opens a listen stream is lost; the stream goes on",
	Places:    []string{PlaceHTTP, PlaceStdio, PlaceConn},
	Revisions: rev20260728,
	NotOn:     "subscriptions/listen is 2026-07-28's; 2025-11-25 has none",
	Draw:      weight(4), // one per listen
	New:       func(*Params) (Fault, error) { return dropListenAck{}, nil },
}

type dropListenAck struct{}

func (dropListenAck) Act(m *Msg, _ *rand.Rand) (Action, bool) {
	if of20260728(m) && m.RPC.Method == rev.NotificationSubscriptionsAcknowledged {
		return Action{Verb: Drop}, true
	}
	return Action{}, false
}
