package faults

import "math/rand/v2"

var duplicateSeqNrKind = Kind{
	Name:    "duplicate-seqnr",
	Summary: "a message carrying SEP-1905 segments (seqNr) or a SEP-2679 partial (seq) is delivered twice",
	// 2026-07-28 results carry no segments, and it sends no partials.
	Revisions: rev20251125,
	NotOn:     "it duplicates a SEP-1905 segment (seqNr) or a SEP-2679 partial (seq), which 2026-07-28 does not send",
	Places:    []string{PlaceHTTP, PlaceStdio, PlaceConn},
	Draw:      weight(4), // it addresses few messages: segments
	New:       func(*Params) (Fault, error) { return duplicateSeqNr{}, nil },
}

type duplicateSeqNr struct{}

func (duplicateSeqNr) Act(m *Msg, _ *rand.Rand) (Action, bool) {
	if m.RPC != nil && (len(m.RPC.SeqNrs) > 0 || m.RPC.HasSeq) {
		return Action{Verb: Duplicate}, true
	}
	return Action{}, false
}
