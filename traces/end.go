package traces

import (
	"strconv"
	"strings"
	"time"
)

// End says how a body, a stream or a connection ended: the typed meaning
// of a body-end, conn-close or conn-error record (format version 3). The
// record's Note keeps the details for a human; nothing reads meaning back
// out of it.
type End uint8

// Ends. The numbers are part of the file format: never reuse one.
const (
	// EndNone: the record is not an end, or (an end written without one)
	// how it ended is unknown.
	EndNone End = 0
	// EndEOF: it ended at its end (a body read to EOF, a connection
	// closed cleanly, a child that exited 0).
	EndEOF End = 1
	// EndClient: the client cut it (went away, stopped reading, sent
	// its body too slowly).
	EndClient End = 2
	// EndServer: the server cut it (the upstream's body broke, a child
	// that failed or was killed).
	EndServer End = 3
	// EndStopped: the recorder cut it because it was stopping (SIGINT,
	// SIGTERM, shutdown): neither end chose to.
	EndStopped End = 4
	// EndError: it broke otherwise (on the way, or an error the recorder
	// cannot put on either end).
	EndError End = 5
)

var endNames = [...]string{"", "eof", "client", "server", "stopped", "error"}

func (e End) String() string {
	if int(e) < len(endNames) {
		return endNames[e]
	}
	return "end-" + itoa(int(e))
}

// ParseEnd returns the end named s (as String writes it, "" for none).
func ParseEnd(s string) (End, bool) {
	for i, n := range endNames {
		if n == s {
			return End(i), true
		}
	}
	if rest, ok := strings.CutPrefix(s, "end-"); ok {
		if n, err := strconv.ParseUint(rest, 10, 8); err == nil {
			return End(n), true
		}
	}
	return 0, false
}

// IsEnd reports whether records of kind k say how something ended (and
// carry an End).
func (k Kind) IsEnd() bool {
	return k == KindBodyEnd || k == KindConnClose || k == KindConnError
}

// Verb is what a fault did to the message it acted on (format version
// 3): the typed form of Fault.Action. The numbers are part of the file
// format: never reuse one.
type Verb uint8

// Verbs, as the fault layer (package faults) carries them out.
const (
	VerbNone      Verb = 0  // unknown (a fault written without one)
	VerbPass      Verb = 1  // delivered unchanged
	VerbDrop      Verb = 2  // not delivered; the stream went on
	VerbDuplicate Verb = 3  // delivered twice
	VerbDelay     Verb = 4  // held for Fault.Delay, then delivered
	VerbHold      Verb = 5  // delivered after the next message of its stream (reordered)
	VerbCutBefore Verb = 6  // the stream was cut before it; not delivered
	VerbCutMid    Verb = 7  // the stream was cut in its middle
	VerbCutAfter  Verb = 8  // delivered, then the stream was cut
	VerbStall     Verb = 9  // the stream stopped at it without closing
	VerbStatus    Verb = 10 // the request was answered Fault.Status by the fault layer
	VerbRewrite   Verb = 11 // delivered rewritten
	VerbRestart   Verb = 12 // the server lost its state before it
	VerbAdvance   Verb = 13 // the simulated clock moved Fault.Delay before it
)

var verbNames = [...]string{"", "pass", "drop", "duplicate", "delay", "hold", "cut-before", "cut-mid", "cut-after",
	"stall", "status", "rewrite", "restart", "advance"}

func (v Verb) String() string {
	if int(v) < len(verbNames) {
		return verbNames[v]
	}
	return "verb-" + itoa(int(v))
}

// ParseVerb returns the verb named s (as String writes it, "" for none).
func ParseVerb(s string) (Verb, bool) {
	for i, n := range verbNames {
		if n == s {
			return Verb(i), true
		}
	}
	if rest, ok := strings.CutPrefix(s, "verb-"); ok {
		if n, err := strconv.ParseUint(rest, 10, 8); err == nil {
			return Verb(n), true
		}
	}
	return 0, false
}

// Cuts reports whether the verb ends the stream it acted on.
func (v Verb) Cuts() bool { return v == VerbCutBefore || v == VerbCutMid || v == VerbCutAfter }

// Length is how long a fault holds its stream back: the delay of a delay
// or a clock advance; 0 otherwise.
func (f *Fault) Length() time.Duration {
	if f == nil || f.Verb != VerbDelay && f.Verb != VerbAdvance {
		return 0
	}
	return f.Delay
}
