package client

import "github.com/tasksim/tasksim/mcp"

// partialTracker follows the SEP-2679 partial notifications of one task
// (§1.3): seq starts at 0 and steps by exactly 1; a jump is data loss,
// recorded and never filled in (rule 4); a seq at or below one already
// received is a duplicate and discarded (rule 10); partials that arrive
// after the task was seen in a terminal status are discarded (Security
// Implications, "Interaction with Cancellation"). The content gathered is
// a hint for display; the canonical result comes from tasks/result
// (rule 6).
type partialTracker struct {
	next          int64 // the seq expected next
	accepted      int
	duplicates    int
	lost          int64 // seq values skipped
	afterTerminal int
	empty         int // partials with empty content (rule 5 violated)
	terminal      bool
	content       []mcp.ContentBlock
	noContent     bool // CallOptions.NoContent: count, do not keep
}

type partialOutcome int

const (
	partialAccepted partialOutcome = iota
	partialGap                     // accepted, after data loss
	partialDuplicate
	partialAfterTerminal
)

// add records one partial notification and says what became of it.
func (p *partialTracker) add(n mcp.TaskPartialParams) partialOutcome {
	switch {
	case p.terminal:
		p.afterTerminal++
		return partialAfterTerminal
	case n.Seq < p.next:
		p.duplicates++
		return partialDuplicate
	}
	out := partialAccepted
	if n.Seq > p.next {
		p.lost += n.Seq - p.next
		out = partialGap
	}
	p.next = n.Seq + 1
	p.accepted++
	if len(n.Content) == 0 {
		p.empty++
	}
	if !p.noContent {
		p.content = append(p.content, n.Content...)
	}
	return out
}
