package mcp

import "slices"

// ResponseMode is a SEP-1905 response mode for a task-augmented request.
type ResponseMode string

// Response modes, in SEP-1905's priority order.
const (
	ModeImmediate ResponseMode = "immediate"
	ModeStreaming ResponseMode = "streaming"
	ModeTask      ResponseMode = "task"
)

// allModes is the list AllModes copies.
var allModes = []ResponseMode{ModeImmediate, ModeStreaming, ModeTask}

// AllModes lists every response mode in priority order, in a slice of the
// caller's own.
func AllModes() []ResponseMode { return slices.Clone(allModes) }

// IsValid reports whether m is one of the three modes.
func (m ResponseMode) IsValid() bool { return slices.Contains(allModes, m) }

// ModeDecision is how a server answers one task-augmented request.
type ModeDecision struct {
	// Negotiated is the mode picked from the two lists ("Capability
	// Negotiation").
	Negotiated ResponseMode
	// Mode is how the server responds once it knows whether results are
	// ready ("Server Response Decision Process", step 2): Case 1 immediate,
	// Case 2 task, Case 3 streaming.
	Mode ResponseMode
	// Fallback is set when none of the client's modes was supported and the
	// server fell back to task; the response then SHOULD carry the
	// MetaFallbackMode warning.
	Fallback bool
}

// DecideMode applies SEP-1905's negotiation and decision process. client is
// the request's task.responseModes (nil when absent); server is the list of
// modes the server supports (nil for a server without SEP-1905, which
// always answers in task mode and knows of no fallback). resultReady says
// whether the complete result is available at request time; incremental
// whether the tool is known to produce results incrementally.
//
// The rules, each from "Capability Negotiation" and "Server Response
// Decision Process":
//   - the mode is chosen from the client's list among modes the server also
//     supports, never outside the client's list;
//   - among several, priority is immediate > streaming > task;
//   - no list from the client: task;
//   - no common mode: task, even if the client did not list it, with a
//     fallback warning;
//   - immediate without a ready result: streaming if the results are
//     incremental and both parties support streaming, otherwise task.
func DecideMode(client, server []ResponseMode, resultReady, incremental bool) ModeDecision {
	if server == nil || len(client) == 0 {
		return ModeDecision{Negotiated: ModeTask, Mode: ModeTask}
	}
	both := func(m ResponseMode) bool { return slices.Contains(client, m) && slices.Contains(server, m) }
	negotiated := ResponseMode("")
	for _, m := range allModes {
		if both(m) {
			negotiated = m
			break
		}
	}
	if negotiated == "" {
		return ModeDecision{Negotiated: ModeTask, Mode: ModeTask, Fallback: true}
	}
	d := ModeDecision{Negotiated: negotiated, Mode: negotiated}
	if negotiated == ModeImmediate && !resultReady {
		if incremental && both(ModeStreaming) {
			d.Mode = ModeStreaming
		} else {
			d.Mode = ModeTask
		}
	}
	return d
}
