package faults

import (
	"testing"
	"time"

	"github.com/tasksim/tasksim/traces"
)

// Every verb has its own name in the trace format, the same as its own.
func TestVerbsInTraces(t *testing.T) {
	seen := map[traces.Verb]bool{}
	for v := Pass; v <= Advance; v++ {
		tv := v.Trace()
		if tv == traces.VerbNone || seen[tv] || tv.String() != v.String() {
			t.Errorf("%s -> %q", v, tv)
		}
		seen[tv] = true
	}
	if Verb(200).Trace() != traces.VerbNone {
		t.Error("an unknown verb has a trace name")
	}
}

// A fault record says what the fault did in typed fields, not only in
// its action text.
func TestTraceFaultTyped(t *testing.T) {
	for _, tc := range []struct {
		a      Action
		verb   traces.Verb
		delay  time.Duration
		status int
	}{
		{Action{Verb: Delay, Delay: 200 * time.Millisecond}, traces.VerbDelay, 200 * time.Millisecond, 0},
		{Action{Verb: Advance, Delay: 5 * time.Second}, traces.VerbAdvance, 5 * time.Second, 0},
		{Action{Verb: Status, Status: 503}, traces.VerbStatus, 0, 503},
		{Action{Verb: CutAfter}, traces.VerbCutAfter, 0, 0},
		{Action{Verb: Drop}, traces.VerbDrop, 0, 0},
	} {
		f := Applied{Name: "x", Action: tc.a}.TraceFault()
		if f.Verb != tc.verb || f.Delay != tc.delay || f.Status != tc.status || f.Action != tc.a.String() {
			t.Errorf("%s: %+v", tc.a, f)
		}
	}
}
