package faults

import (
	"math/rand/v2"
	"strconv"

	"github.com/tasksim/tasksim/traces"
)

var serverRestartKind = Kind{
	Name:    "server-restart",
	Summary: "the reference server loses its in-memory state (sessions, tasks) just before a message from the client reaches it (in-process runs)",
	Places:  []string{PlaceHTTP, PlaceConn},
	// Its point is the sessions lost with the state.
	Revisions: rev20251125,
	NotOn:     "its point is the loss of the sessions, and 2026-07-28 has none",
	Draw: func(r *rand.Rand, _ []string) Drawn {
		// It acts on client messages, one at a time, at most count times.
		return Drawn{Params: []string{"count=" + strconv.Itoa(1+r.IntN(3))}, Weight: 3}
	},
	New: func(*Params) (Fault, error) { return serverRestart{}, nil },
}

type serverRestart struct{}

func (serverRestart) Act(m *Msg, _ *rand.Rand) (Action, bool) {
	if m.Dir != traces.DirClientToServer {
		return Action{}, false
	}
	return Action{Verb: Restart}, true
}
