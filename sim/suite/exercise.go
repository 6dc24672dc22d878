package suite

import (
	"sync/atomic"

	"github.com/tasksim/tasksim/check"
)

// Exercise is one thing a scenario exists to make happen — a gap made, a
// stream cut, a duplicate sent — checked after the run against what the
// fault actually did (a misbehaving writer's counts, a fault layer's
// records in the trace). A scenario whose exercise did not happen tested
// nothing: it is SKIP with the reason, never PASS.
type Exercise struct {
	// What says what must happen, e.g. "a segment event dropped".
	What string
	// Happened reports, after the run, whether it did, and if not why
	// not, e.g. "the client did not negotiate SEP-1905 streaming: no
	// segment to drop".
	Happened func() (ok bool, whyNot string)
}

// missedExercise returns why the first exercise of xs that did not
// happen did not; "" when all did.
func missedExercise(xs []Exercise) string {
	for _, x := range xs {
		if ok, why := x.Happened(); !ok {
			if why == "" {
				why = x.What + " did not happen"
			}
			return why
		}
	}
	return ""
}

// skipUnexercised makes r, a scenario that ran but whose exercise did not
// happen, SKIP with why: its rules that passed say nothing and are SKIP
// too. A rule that failed on evidence keeps its FAIL, and so does the
// scenario: a breach seen is a breach, whatever else did not happen.
func skipUnexercised(r *ScenarioResult, why string) {
	failed := false
	for i := range r.Rules {
		o := &r.Rules[i]
		if o.Status == check.Fail {
			failed = true
			continue
		}
		o.Status, o.Why, o.Checked, o.Findings = check.Skip, "scenario skipped: "+why, 0, nil
	}
	if failed {
		r.Status = check.Fail
		return
	}
	r.Status, r.Why = check.Skip, why
}

// misbehaviorActs counts what the scripted server's misbehaviour did and
// what it had to act on, over HTTP (misbehavingWriter) and over stdio
// (scriptedLines).
type misbehaviorActs struct {
	// segmentEvents: events (lines) of answers carrying segments;
	// sseAnswers: POST answers that came as SSE streams (stdio: none).
	segmentEvents, sseAnswers atomic.Int64
	dropped, duplicated, cut  atomic.Int64
}

// exercises are what mb must do for its scenario to mean anything, each
// checked against acts: a drop, a duplicate, a cut.
func (mb Misbehavior) exercises(acts *misbehaviorActs) []Exercise {
	noSegments := func(verb string) string {
		return "the client did not negotiate SEP-1905 streaming: no segment to " + verb
	}
	var xs []Exercise
	if mb.DropSeqNr > 0 {
		xs = append(xs, Exercise{What: "a segment event dropped", Happened: func() (bool, string) {
			switch {
			case acts.dropped.Load() > 0:
				return true, ""
			case acts.segmentEvents.Load() == 0:
				return false, noSegments("drop")
			}
			return false, "no event carried the segment to drop"
		}})
	}
	if mb.Duplicate {
		xs = append(xs, Exercise{What: "a segment event sent twice", Happened: func() (bool, string) {
			if acts.duplicated.Load() > 0 {
				return true, ""
			}
			return false, noSegments("duplicate")
		}})
	}
	if mb.CutAfter > 0 {
		xs = append(xs, Exercise{What: "the answer's stream cut", Happened: func() (bool, string) {
			switch {
			case acts.cut.Load() > 0:
				return true, ""
			case acts.sseAnswers.Load() == 0:
				return false, "no answer to the client came as an SSE stream: nothing to cut"
			}
			return false, "no answer's stream carried enough events to cut"
		}})
	}
	return xs
}
