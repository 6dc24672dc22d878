package client

import "fmt"

// phase is where a call stands: which of the three SEP-1905 answers it
// follows ("Client Implementation Guide", "Handling Different Response
// Modes"), and whether its stream still carries the segments. The
// requests it has in flight are kept beside it (requests); the task's own
// status in statusTracker.
//
//	calling ── CreateTaskResult (Case 2) ─────▶ task
//	calling ── streaming response (Case 3) ───▶ streaming
//	task ───── streaming response ────────────▶ streaming
//	task ───── stream lost ───────────────────▶ task       (polling goes on)
//	streaming ─ streaming response ───────────▶ streaming
//	streaming ─ stream lost ──────────────────▶ resuming   (tasks/result with lastSeqNr)
//	any but done ── end (a result, an error) ─▶ done
//
// A tool result as the first answer (a plain call, or Case 1) ends the
// call at once. Whatever a transition table does not list is refused:
// the call's state does not change.
type phase uint8

const (
	// phaseCalling: tools/call is sent and not answered yet.
	phaseCalling phase = iota
	// phaseTask: the answer was a task (Case 2), followed by tasks/get
	// and notifications until its result can be fetched.
	phaseTask
	// phaseStreaming: segments come on the request's stream (Case 3).
	phaseStreaming
	// phaseResuming: the stream broke for good; the segments come by
	// tasks/result with lastSeqNr (SEP-1905 "Error Handling",
	// Connection Loss).
	phaseResuming
	// phaseDone: the call ended; nothing changes any more.
	phaseDone
)

func (p phase) String() string {
	switch p {
	case phaseCalling:
		return "calling"
	case phaseTask:
		return "task"
	case phaseStreaming:
		return "streaming"
	case phaseResuming:
		return "resuming"
	case phaseDone:
		return "done"
	}
	return fmt.Sprintf("phase(%d)", int(p))
}

// streams reports whether the call follows a SEP-1905 stream of segments,
// live or lost.
func (p phase) streams() bool { return p == phaseStreaming || p == phaseResuming }

// callEvent is what moves a call from one phase to another.
type callEvent uint8

const (
	// evTaskAnswer: the first answer is a CreateTaskResult.
	evTaskAnswer callEvent = iota
	// evStreamingResponse: a streaming response (partial-content or
	// isComplete) on the request's stream, first or later.
	evStreamingResponse
	// evStreamLost: the stream carrying the answers broke for good.
	evStreamLost
	// evEnd: the call ends, complete or not.
	evEnd
)

func (e callEvent) String() string {
	switch e {
	case evTaskAnswer:
		return "task answer"
	case evStreamingResponse:
		return "streaming response"
	case evStreamLost:
		return "stream lost"
	case evEnd:
		return "end"
	}
	return fmt.Sprintf("callEvent(%d)", int(e))
}

// transitions lists, per phase, where each event it accepts leads.
var transitions = [...]map[callEvent]phase{
	phaseCalling:   {evTaskAnswer: phaseTask, evStreamingResponse: phaseStreaming, evEnd: phaseDone},
	phaseTask:      {evStreamingResponse: phaseStreaming, evStreamLost: phaseTask, evEnd: phaseDone},
	phaseStreaming: {evStreamingResponse: phaseStreaming, evStreamLost: phaseResuming, evEnd: phaseDone},
	phaseResuming:  {evEnd: phaseDone},
	phaseDone:      {},
}

// next returns the phase e leads to from p, and false, with p unchanged,
// when p does not accept e.
func (p phase) next(e callEvent) (phase, bool) {
	to, ok := transitions[p][e]
	if !ok {
		return p, false
	}
	return to, true
}

// request is a kind of request a call makes about its task. Each runs in
// a goroutine of its own and reports on the call's async channel.
type request uint8

const (
	// reqGet: tasks/get (a poll).
	reqGet request = 1 << iota
	// reqResume: tasks/result with lastSeqNr, for the segments a stream
	// lacks.
	reqResume
	// reqCanonical: tasks/result without lastSeqNr, the whole result.
	reqCanonical
	// reqCancel: tasks/cancel.
	reqCancel
)

// requests is the set of requests a call has in flight: at most one of
// each kind, and at most one tasks/result (resume or canonical) at all.
type requests uint8

// has reports whether any request of rs is in flight.
func (s requests) has(rs request) bool { return s&requests(rs) != 0 }

// add records r as sent.
func (s *requests) add(r request) { *s |= requests(r) }

// remove records r as answered.
func (s *requests) remove(r request) { *s &^= requests(r) }

// fetching reports whether a tasks/result is in flight.
func (s requests) fetching() bool { return s.has(reqResume | reqCanonical) }
