package faults

import (
	"fmt"
	"time"

	"github.com/tasksim/tasksim/traces"
)

// Verb is what a fault does to a message.
type Verb uint8

// Verbs. A place that cannot carry one out on a message (a status code on
// an SSE event) never gets it: faults check where they apply.
const (
	// Pass delivers the message unchanged.
	Pass Verb = iota
	// Drop does not deliver the message; the stream goes on.
	Drop
	// Duplicate delivers the message twice.
	Duplicate
	// Delay holds the message for Action.Delay, then delivers it.
	Delay
	// Hold keeps the message back and delivers it after the next message
	// of its stream (or when the stream ends): the two swap places.
	Hold
	// CutBefore ends the stream (its connection) before the message, which
	// is not delivered.
	CutBefore
	// CutMid ends the stream in the middle of the message: part of its
	// bytes reach the peer.
	CutMid
	// CutAfter delivers the message, then ends the stream.
	CutAfter
	// Stall stops the stream at the message without closing it: neither it
	// nor anything after it is delivered until the peer gives up.
	Stall
	// Status answers an HTTP request with Action.Status without sending it
	// on to the server.
	Status
	// Rewrite delivers Action.Raw in place of the message.
	Rewrite
	// Restart makes the server lose its state before the message is
	// delivered (in-process reference server only).
	Restart
	// Advance moves the simulated clock forward by Action.Delay before the
	// message is delivered (simulations only).
	Advance
)

var verbNames = [...]string{"pass", "drop", "duplicate", "delay", "hold", "cut-before", "cut-mid", "cut-after", "stall", "status", "rewrite", "restart", "advance"}

func (v Verb) String() string {
	if int(v) < len(verbNames) {
		return verbNames[v]
	}
	return fmt.Sprintf("verb-%d", v)
}

// traceVerbs are the trace format's names for the verbs.
var traceVerbs = [...]traces.Verb{
	Pass: traces.VerbPass, Drop: traces.VerbDrop, Duplicate: traces.VerbDuplicate, Delay: traces.VerbDelay,
	Hold: traces.VerbHold, CutBefore: traces.VerbCutBefore, CutMid: traces.VerbCutMid, CutAfter: traces.VerbCutAfter,
	Stall: traces.VerbStall, Status: traces.VerbStatus, Rewrite: traces.VerbRewrite, Restart: traces.VerbRestart,
	Advance: traces.VerbAdvance,
}

// Trace returns the verb as a trace's fault records carry it.
func (v Verb) Trace() traces.Verb {
	if int(v) < len(traceVerbs) {
		return traceVerbs[v]
	}
	return traces.VerbNone
}

// Action is what to do with one message.
type Action struct {
	Verb   Verb
	Delay  time.Duration // Delay, Advance
	Status int           // Status
	Raw    []byte        // Rewrite: the message in its place; Status: the JSON body of the answer (nil: a text one)
	// Header and Value, for a Rewrite at the HTTP place, set one header
	// of a request to Value (the body stays unless Raw is given).
	Header, Value string
}

// String says what the action does, for trace fault records: "dropped",
// "delayed 200ms", "answered 503".
func (a Action) String() string {
	switch a.Verb {
	case Pass:
		return "passed"
	case Drop:
		return "dropped"
	case Duplicate:
		return "duplicated"
	case Delay:
		return "delayed " + a.Delay.String()
	case Hold:
		return "held back past the next message"
	case CutBefore:
		return "stream cut before it"
	case CutMid:
		return "stream cut in the middle of it"
	case CutAfter:
		return "stream cut after it"
	case Stall:
		return "stream stalled at it"
	case Status:
		if a.Raw != nil {
			return fmt.Sprintf("answered %d %s without reaching the server", a.Status, a.Raw)
		}
		return fmt.Sprintf("answered %d without reaching the server", a.Status)
	case Rewrite:
		if a.Header != "" && a.Raw == nil {
			return "header " + a.Header + " rewritten to " + a.Value
		}
		return "rewritten"
	case Restart:
		return "server restarted before it"
	case Advance:
		return "clock advanced " + a.Delay.String() + " before it"
	}
	return a.Verb.String()
}
