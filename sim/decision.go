package sim

import (
	"slices"
	"strings"
	"time"

	"github.com/tasksim/tasksim/faults"
)

// decision is a fault decision with when and where it acted.
type decision struct {
	at      time.Time
	session int // -1: unknown
	verb    faults.Verb
	stream  string // the logical stream of the message acted on
}

// oneHTTPStream reports whether a decision's stream is one HTTP exchange
// of the HTTP place ("post:s1/7", "get:s1/2", "request:s1/id:3").
func oneHTTPStream(stream string) bool {
	kind, _, _ := strings.Cut(stream, ":")
	return kind == faults.StreamPost || kind == faults.StreamGet || kind == faults.StreamRequest
}

// faulted reports whether a fault may have changed a call of session sess
// that ended at end: one acted on the session before, or a restart or a
// clock jump acted anywhere before.
func faulted(ds []decision, sess int, end time.Time) bool {
	for _, d := range ds {
		if d.at.After(end) {
			continue
		}
		if d.session == sess || d.session < 0 || d.verb == faults.Restart || d.verb == faults.Advance {
			return true
		}
	}
	return false
}

// lostSession reports whether a fault cut or stalled the session's
// connection: then its tasks are out of reach (they belong to the
// session), and only a new session shows the server is alive. A cut of
// one HTTP stream at the HTTP place (a POST's, a GET's) leaves the
// connection, hence the session.
func lostSession(ds []decision, sess int) bool {
	for _, d := range ds {
		if d.session == sess && !oneHTTPStream(d.stream) {
			switch d.verb {
			case faults.Stall, faults.CutBefore, faults.CutMid, faults.CutAfter:
				return true
			}
		}
	}
	return false
}

// lostResponse reports whether a fault dropped a response (a message of
// a logical stream named by its id: SEP-1905's segments travel in
// responses to the call's request) of session sess before end, or held
// one back (reorder): held past the final isComplete response, a segment
// comes after the call ended, as unseen as a dropped one. Which message a
// held one is released after can depend on the order two HTTP streams of
// one instant are read in (docs/sim.md, "Determinism").
func lostResponse(ds []decision, sess int, end time.Time) bool {
	for _, d := range ds {
		if (d.verb == faults.Drop || d.verb == faults.Hold) && !d.at.After(end) && d.session == sess && strings.Contains(d.stream, "/id:") {
			return true
		}
	}
	return false
}

// isShortTail reports whether got is want without its last elements.
func isShortTail(got, want []string) bool {
	return len(got) < len(want) && slices.Equal(got, want[:len(got)])
}
