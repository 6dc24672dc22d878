package faults

import (
	"math"
	"math/rand/v2"
	"slices"
)

var disconnectKind = Kind{
	Name:    "disconnect",
	Summary: "a stream (its connection) is cut: after its N-th message, in the middle of a message, or before it",
	Params: []ParamDoc{
		{Key: "after", Default: "", Doc: "cut after the stream's N-th message (same as nth=N,at=after)", Excludes: []string{"nth", "at"}},
		{Key: "at", Default: "after", Doc: "before | mid | after the selected message"},
	},
	Places: []string{PlaceHTTP, PlaceStdio, PlaceConn},
	Draw: func(r *rand.Rand, places []string) Drawn {
		// Responses or requests only; a cut acts once.
		at := "at=" + []string{"before", "mid", "after"}[r.IntN(3)]
		if slices.Contains(places, PlaceHTTP) && r.IntN(2) == 0 {
			// One POST's SSE stream cut while the connection lives, at
			// the HTTP place: the client resumes it (GET, Last-Event-ID).
			// It addresses the events of POST streams only.
			return Drawn{Params: []string{"stream=post", at}, Weight: 4}
		}
		return Drawn{Params: []string{at}, Weight: 2}
	},
	New: func(p *Params) (Fault, error) {
		f := disconnect{after: int(p.Int("after", 0, 1, math.MaxInt32))}
		switch p.Choice("at", "after", "before", "mid", "after") {
		case "before":
			f.verb = CutBefore
		case "mid":
			f.verb = CutMid
		default:
			f.verb = CutAfter
		}
		return f, nil
	},
}

type disconnect struct {
	after int
	verb  Verb
}

func (f disconnect) Act(m *Msg, _ *rand.Rand) (Action, bool) {
	if f.after > 0 && m.N != f.after {
		return Action{}, false
	}
	if m.Stream == StreamRequest && f.verb != CutBefore {
		// An HTTP request is cut before it reaches the server, or not at all.
		return Action{Verb: CutBefore}, true
	}
	return Action{Verb: f.verb}, true
}
