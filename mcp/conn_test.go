package mcp

import "testing"

func TestWireStatsAddSub(t *testing.T) {
	a := WireStats{HTTPRequests: 3, POST: 2, GET: 1, Reconnects: 1, MessagesSent: 4, MessagesReceived: 5, BytesSent: 100, BytesReceived: 200}
	b := WireStats{HTTPRequests: 1, DELETE: 1, MessagesSent: 1, BytesSent: 7, BytesReceived: 9}
	sum := a.Add(b)
	want := WireStats{HTTPRequests: 4, POST: 2, GET: 1, DELETE: 1, Reconnects: 1, MessagesSent: 5, MessagesReceived: 5, BytesSent: 107, BytesReceived: 209}
	if sum != want {
		t.Errorf("Add = %+v, want %+v", sum, want)
	}
	if back := sum.Sub(b); back != a {
		t.Errorf("Sub(Add) = %+v, want %+v", back, a)
	}
}
