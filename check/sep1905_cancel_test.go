package check

import (
	"testing"

	"github.com/tasksim/tasksim/traces"
)

// A streaming call cancelled mid-way may end with isComplete: true and
// status cancelled (SEP-1905: "If the task is cancelled during streaming
// ... If a final response is sent, it MUST have isComplete: true").
func TestS1905CompleteCancelled(t *testing.T) {
	for _, tc := range []struct {
		status string
		want   Status
	}{
		{"cancelled", Pass},
		{"completed", Pass},
		{"working", Fail},
	} {
		t.Run(tc.status, func(t *testing.T) {
			msgs := []struct {
				dir traces.Direction
				raw string
			}{
				{traces.DirClientToServer, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"slow_text","task":{"responseModes":["streaming"]}}}`},
				{traces.DirServerToClient, `{"jsonrpc":"2.0","id":2,"result":{"task":{"taskId":"t-1","status":"working","createdAt":"2026-01-01T00:00:00Z","lastUpdatedAt":"2026-01-01T00:00:00Z","ttl":60000},"partial-content":[{"seqNr":1,"type":"text","text":"a"}],"isComplete":false}}`},
				{traces.DirServerToClient, `{"jsonrpc":"2.0","id":2,"result":{"task":{"taskId":"t-1","status":"` + tc.status + `","createdAt":"2026-01-01T00:00:00Z","lastUpdatedAt":"2026-01-01T00:00:01Z","ttl":60000},"partial-content":[],"isComplete":true}}`},
			}
			c := New(&Options{Rules: []string{"S1905-COMPLETE"}})
			for i, m := range msgs {
				c.Add(traces.Record{Index: uint64(i), Conn: 1, Stream: "conn", Dir: m.dir, Kind: traces.KindMessage, Raw: []byte(m.raw), RPC: traces.DescribeMessage([]byte(m.raw))})
			}
			r, _ := c.Verdict().Result("S1905-COMPLETE")
			if r.Status != tc.want {
				t.Errorf("status %s: S1905-COMPLETE %s %+v, want %s", tc.status, r.Status, r.Findings, tc.want)
			}
		})
	}
}
