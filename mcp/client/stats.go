package client

import (
	"github.com/tasksim/tasksim/mcp/stdio"
	"github.com/tasksim/tasksim/mcp/streamhttp"
)

// Counts are what a call cost on the wire: the difference of the
// transport's counters between the call's start and end. Calls that run
// at once on one session share a connection, so each one's Counts include
// the others' traffic in that time; the timeline's http-request events are
// attributed exactly.
type Counts struct {
	// HTTPRequests is POST + GET + DELETE (0 over stdio).
	HTTPRequests      int64
	POST, GET, DELETE int64
	// Reconnects counts GET requests resuming a broken stream.
	Reconnects int64
	// Messages counts JSON-RPC messages over stdio (0 over HTTP).
	MessagesSent, MessagesReceived int64
	// BytesSent approximates request heads (HTTP) and counts bodies and
	// lines exactly; BytesReceived counts response bodies or lines.
	BytesSent, BytesReceived int64
}

// transportCounts reads the conn's counters, if it keeps any.
func (s *Session) transportCounts() Counts {
	switch c := s.conn.(type) {
	case streamhttp.Stats:
		st := c.Stats()
		return Counts{HTTPRequests: st.Requests(), POST: st.POST, GET: st.GET, DELETE: st.DELETE,
			Reconnects: st.Reconnects, BytesSent: st.BytesSent, BytesReceived: st.BytesReceived}
	case stdio.Stats:
		st := c.Stats()
		return Counts{MessagesSent: st.MessagesSent, MessagesReceived: st.MessagesReceived,
			BytesSent: st.BytesSent, BytesReceived: st.BytesReceived}
	}
	return Counts{}
}

// Sub returns c minus before.
func (c Counts) Sub(before Counts) Counts {
	return Counts{
		HTTPRequests:     c.HTTPRequests - before.HTTPRequests,
		POST:             c.POST - before.POST,
		GET:              c.GET - before.GET,
		DELETE:           c.DELETE - before.DELETE,
		Reconnects:       c.Reconnects - before.Reconnects,
		MessagesSent:     c.MessagesSent - before.MessagesSent,
		MessagesReceived: c.MessagesReceived - before.MessagesReceived,
		BytesSent:        c.BytesSent - before.BytesSent,
		BytesReceived:    c.BytesReceived - before.BytesReceived,
	}
}
