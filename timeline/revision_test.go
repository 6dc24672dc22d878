package timeline

import (
	"strings"
	"testing"

	"github.com/tasksim/tasksim/traces"
)

// The rows of a 2026-07-28 exchange show its routing headers, the
// result's resultType, the task id and the record's revision.
func TestLabels2026(t *testing.T) {
	head := traces.Record{Index: 1, Exchange: 1, Stream: "req:1", Dir: traces.DirClientToServer, Kind: traces.KindRequestHead, Revision: "2026-07-28",
		HTTP: &traces.HTTPHead{Method: "POST", URL: "/mcp", Proto: "HTTP/1.1", Header: []traces.HeaderField{
			{Name: "Mcp-Method", Value: "tasks/get"}, {Name: "Mcp-Name", Value: "=?base64?dC3DqQ==?="}, {Name: "Mcp-Protocol-Version", Value: "2026-07-28"}}}}
	raw := []byte(`{"jsonrpc":"2.0","id":7,"result":{"resultType":"task","taskId":"t-1","status":"working"}}`)
	created := traces.Record{Index: 2, Exchange: 1, Stream: "post:1", Dir: traces.DirServerToClient, Kind: traces.KindMessage, Revision: "2026-07-28",
		Raw: raw, RPC: traces.DescribeMessage(raw)}
	for _, tc := range []struct {
		rec                traces.Record
		label, wantDetails []string
	}{
		{head, []string{"POST /mcp", "mcp-method=tasks/get", `mcp-name="t-é"`}, []string{"revision: 2026-07-28", "Mcp-Name: =?base64?dC3DqQ==?="}},
		{created, []string{"(response) id=7 working resultType=task"}, []string{"revision: 2026-07-28", "task=t-1", "resultType=task"}},
	} {
		l, d := label(tc.rec), details(tc.rec, "", 0)
		for _, w := range tc.label {
			if !strings.Contains(l, w) {
				t.Errorf("label %q does not show %q", l, w)
			}
		}
		for _, w := range tc.wantDetails {
			if !strings.Contains(d, w) {
				t.Errorf("details %q do not show %q", d, w)
			}
		}
	}
	// A record of an older trace shows no revision.
	created.Revision = ""
	if d := details(created, "", 0); strings.Contains(d, "revision") {
		t.Errorf("details %q show a revision the record does not have", d)
	}
}
