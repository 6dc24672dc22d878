package client

import "github.com/tasksim/tasksim/mcp"

// Counts are what a call cost on the wire: the difference of the
// transport's counters between the call's start and end. Calls that run
// at once on one session share a connection, so each one's Counts include
// the others' traffic in that time; the timeline's http-request events are
// attributed exactly.
type Counts = mcp.WireStats

// transportCounts reads the conn's counters, if it keeps any.
func (s *Session) transportCounts() Counts {
	if r, ok := mcp.ConnAs[mcp.StatsReporter](s.conn); ok {
		return r.Stats()
	}
	return Counts{}
}
