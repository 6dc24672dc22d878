package traces

import (
	"strconv"
	"strings"
	"time"
)

// upgrade gives a record of format version 1 or 2 the typed fields of
// version 3, read once from the free text those versions kept them in:
// how an end record ended (Note), what a fault did (Action; for version 1,
// whose fault records are Note only, the fault itself), the position of a
// message in a batch and whether an SSE block without data was dispatched
// (Note). It is the only place that reads meaning out of that text, and it
// reads only what tasksim's recorders and fault layer wrote; it sets only
// fields that are zero.
func upgrade(r *Record) {
	switch {
	case r.Kind.IsEnd() && r.End == EndNone:
		r.End = endFromNote(r.Kind, r.Note)
	case r.Kind == KindMessage && r.Batch == 0:
		if n, ok := strings.CutPrefix(r.Note, "batch element "); ok {
			if i, err := strconv.ParseUint(n, 10, 31); err == nil {
				r.Batch = uint32(i) + 1
			}
		}
	case r.Kind == KindSSEEvent && r.SSE != nil && r.Note == "no data: not dispatched":
		r.SSE.NoData = true
	case r.Kind == KindFault:
		if r.Fault == nil {
			r.Fault = faultFromNote(r.Note)
		}
		if f := r.Fault; f != nil && f.Verb == VerbNone {
			f.Verb, f.Delay, f.Status = verbFromAction(f.Action)
		}
	}
}

// endFromNote reads an end from the notes tasksim's recorders wrote
// before version 3: the HTTP proxy ("eof", "client: ...", "upstream:
// ...", "recorder: stopped", "write to client: ..."), the stdio recorder
// ("exit status N", "killed by signal: ...", "... (stopped by the
// recorder)"), recorder.Conn ("read: ...", "close: ...").
func endFromNote(k Kind, note string) End {
	switch {
	case note == "eof":
		return EndEOF
	case note == "recorder: stopped" || strings.HasPrefix(note, "recorder: stopped ") ||
		note == "recorder stopped" || strings.HasSuffix(note, "(stopped by the recorder)"):
		return EndStopped
	case strings.HasPrefix(note, "client:") || strings.HasPrefix(note, "write to client:"):
		return EndClient
	case strings.HasPrefix(note, "upstream:") || strings.HasPrefix(note, "killed by signal:"):
		return EndServer
	case strings.HasPrefix(note, "exit status "):
		if note == "exit status 0" {
			return EndEOF
		}
		return EndServer
	case k == KindConnClose:
		return EndEOF // closed cleanly
	}
	return EndError
}

// verbFromAction reads what a fault did from its action as faults wrote
// it before version 3 ("dropped", "delayed 200ms", "answered 503 without
// reaching the server").
func verbFromAction(action string) (v Verb, d time.Duration, status int) {
	fixed := map[string]Verb{
		"passed": VerbPass, "dropped": VerbDrop, "duplicated": VerbDuplicate,
		"held back past the next message": VerbHold, "stream cut before it": VerbCutBefore,
		"stream cut in the middle of it": VerbCutMid, "stream cut after it": VerbCutAfter,
		"stream stalled at it": VerbStall, "rewritten": VerbRewrite, "server restarted before it": VerbRestart,
	}
	if v, ok := fixed[action]; ok {
		return v, 0, 0
	}
	if rest, ok := strings.CutPrefix(action, "delayed "); ok {
		if d, err := time.ParseDuration(rest); err == nil {
			return VerbDelay, d, 0
		}
	}
	if rest, ok := strings.CutPrefix(action, "clock advanced "); ok {
		rest, _, _ = strings.Cut(rest, " ")
		if d, err := time.ParseDuration(rest); err == nil {
			return VerbAdvance, d, 0
		}
	}
	if rest, ok := strings.CutPrefix(action, "answered "); ok {
		rest, _, _ = strings.Cut(rest, " ")
		if n, err := strconv.Atoi(rest); err == nil {
			return VerbStatus, 0, n
		}
	}
	if v, ok := ParseVerb(action); ok {
		return v, 0, 0
	}
	return VerbNone, 0, 0
}

// faultFromNote reads a version 1 fault record's note, "SPEC TARGET:
// ACTION" with TARGET as the fault layer wrote it ("STREAM#N ...
// task=ID ..."). A note that names no stream nor task gives no fault: a
// fault of free text, which acted on nothing known.
func faultFromNote(note string) *Fault {
	spec, rest, ok := strings.Cut(note, " ")
	if !ok {
		return nil
	}
	target, action, _ := strings.Cut(rest, ": ")
	f := &Fault{Action: action}
	f.Name, _, _ = strings.Cut(spec, ":")
	for i, w := range strings.Fields(target) {
		if i == 0 {
			f.Target.Stream, _, _ = strings.Cut(w, "#")
			continue
		}
		if v, ok := strings.CutPrefix(w, "task="); ok {
			f.Target.TaskID = v
		}
	}
	if f.Target.Stream == "" && f.Target.TaskID == "" {
		return nil
	}
	return f
}

// upgradeResultType gives the rpc fields of a record written before they
// held result_type (format version 3 at first, and older) the resultType
// of its message, read from its JSON text once, in the reader, as the
// writer describes it.
func upgradeResultType(r *Record) {
	if d := describeRecord(r); d != nil {
		r.RPC.ResultType = d.ResultType
	}
}
