package client

import (
	"fmt"
	"time"

	"github.com/tasksim/tasksim/mcp"
)

// statusTracker is what a call knows of its task's status. Every source
// reports it: the tools/call answers, notifications/tasks/status, tasks/get
// polls, the tasks/cancel answer, streaming responses. They race: a
// tasks/get sent before a tasks/cancel may be answered after it, with a
// status the task has left. So a report is not simply taken; observe
// decides, by the rules of the status lifecycle (2025-11-25 Tasks, "Task
// Status Lifecycle": a task in completed, failed or cancelled MUST NOT
// transition to any other status; "Task Cancellation": once cancelled it
// MUST remain cancelled) and by lastUpdatedAt where the reports carry it.
//
//	           any status
//	unknown ───────────────▶ active (working, input_required) or terminal
//	active ── terminal ────▶ terminal        (whatever its lastUpdatedAt)
//	active ── non-terminal ▶ active          unless its lastUpdatedAt is older
//	terminal ─ same status ▶ terminal        (the newer of the two reports kept)
//	terminal ─ other ──────▶ ignored         (statusAfterTerminal)
//	active ── older non-terminal ▶ ignored   (statusStale)
//
// The known terminal status, reported again, is taken even with an older
// lastUpdatedAt (the report kept is the newer one): it changes nothing,
// and a poll-mode call acts only on the polled report.
type statusTracker struct {
	phase taskPhase
	// last is the report taken last; nil while unknown.
	last *mcp.Task
	// updated is last's lastUpdatedAt; zero when absent or unreadable.
	updated time.Time
}

// taskPhase is where the task stands in its lifecycle, as far as the call
// knows.
type taskPhase int

const (
	// taskUnknown: no status reported yet.
	taskUnknown taskPhase = iota
	// taskActive: working or input_required (or a status the client does
	// not know, which is not terminal either); it may still change.
	taskActive
	// taskTerminal: completed, failed or cancelled; final.
	taskTerminal
)

// statusVerdict is what observe made of a report.
type statusVerdict int

const (
	// statusTaken: the report is the task's status now.
	statusTaken statusVerdict = iota
	// statusStale: its lastUpdatedAt is older than that of the status
	// known; it was overtaken and is ignored.
	statusStale
	// statusAfterTerminal: the task is known to be in another, terminal
	// status, which is final; the report is ignored.
	statusAfterTerminal
)

func (v statusVerdict) String() string {
	switch v {
	case statusTaken:
		return "taken"
	case statusStale:
		return "stale"
	case statusAfterTerminal:
		return "after terminal"
	}
	return fmt.Sprintf("statusVerdict(%d)", int(v))
}

// observe takes a report of the task's status, or says why not.
func (s *statusTracker) observe(t mcp.Task) statusVerdict {
	updated := parseUpdated(t.LastUpdatedAt)
	older := !updated.IsZero() && !s.updated.IsZero() && updated.Before(s.updated)
	switch s.phase {
	case taskActive:
		if older && !t.Status.IsTerminal() {
			return statusStale
		}
	case taskTerminal:
		if t.Status != s.last.Status {
			return statusAfterTerminal
		}
		if older {
			return statusTaken // the same status; keep the newer report
		}
	}
	s.last = &t
	s.updated = updated
	s.phase = taskActive
	if t.Status.IsTerminal() {
		s.phase = taskTerminal
	}
	return statusTaken
}

// terminal reports whether the task is known to be in a terminal status.
func (s *statusTracker) terminal() bool { return s.phase == taskTerminal }

// why says, for the timeline, why a report was ignored.
func (s *statusTracker) why(v statusVerdict, t mcp.Task) string {
	switch v {
	case statusAfterTerminal:
		return fmt.Sprintf("ignored: the task is already %s, and a terminal status is final", s.last.Status)
	case statusStale:
		return fmt.Sprintf("ignored: lastUpdatedAt %s is older than that of the status known (%s, %s)", t.LastUpdatedAt, s.last.Status, s.last.LastUpdatedAt)
	}
	return ""
}

func parseUpdated(v string) time.Time {
	if v == "" {
		return time.Time{}
	}
	t, err := mcp.ParseTime(v)
	if err != nil {
		return time.Time{}
	}
	return t
}
