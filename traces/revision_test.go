package traces

import (
	"os"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// Messages of MCP 2026-07-28 with the tasks extension, as the reference
// server sends them.
const (
	msgCall2026    = `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"slow_compute","arguments":{},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}`
	msgCreated2026 = `{"jsonrpc":"2.0","id":7,"result":{"resultType":"task","taskId":"t-1","status":"working","createdAt":"2026-07-30T12:00:00Z","lastUpdatedAt":"2026-07-30T12:00:00Z","ttlMs":60000,"pollIntervalMs":100}}`
	msgGet2026     = `{"jsonrpc":"2.0","id":8,"method":"tasks/get","params":{"taskId":"t-1","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}`
	msgDetailed    = `{"jsonrpc":"2.0","id":8,"result":{"resultType":"complete","taskId":"t-1","status":"input_required","inputRequests":{"r1":{"method":"elicitation/create","params":{}}}}}`
	msgTaskNote    = `{"jsonrpc":"2.0","method":"notifications/tasks","params":{"taskId":"t-1","status":"completed","result":{"content":[]},"_meta":{"io.modelcontextprotocol/subscriptionId":"9"}}}`
	msgInputReq    = `{"jsonrpc":"2.0","id":9,"result":{"resultType":"input_required","inputRequests":{"a":{"method":"elicitation/create"}},"requestState":"s"}}`
	msgUpdate2026  = `{"jsonrpc":"2.0","id":10,"method":"tasks/update","params":{"taskId":"t-1","inputResponses":{"r1":{"action":"accept"}}}}`
)

func TestDescribe2026Shapes(t *testing.T) {
	for _, tc := range []struct {
		name, raw string
		want      RPCFields
	}{
		{"tools/call with _meta", msgCall2026, RPCFields{Type: "request", Method: "tools/call", ID: "7"}},
		{"flat CreateTaskResult", msgCreated2026, RPCFields{Type: "response", ID: "7", TaskID: "t-1", Status: "working", ResultType: "task"}},
		{"tasks/get", msgGet2026, RPCFields{Type: "request", Method: "tasks/get", ID: "8", TaskID: "t-1"}},
		{"DetailedTask", msgDetailed, RPCFields{Type: "response", ID: "8", TaskID: "t-1", Status: "input_required", ResultType: "complete"}},
		{"notifications/tasks", msgTaskNote, RPCFields{Type: "notification", Method: "notifications/tasks", TaskID: "t-1", Status: "completed"}},
		{"InputRequiredResult", msgInputReq, RPCFields{Type: "response", ID: "9", ResultType: "input_required"}},
		{"tasks/update", msgUpdate2026, RPCFields{Type: "request", Method: "tasks/update", ID: "10", TaskID: "t-1"}},
		{"resultType not a string", `{"jsonrpc":"2.0","id":1,"result":{"resultType":3}}`, RPCFields{Type: "response", ID: "1"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := DescribeMessage([]byte(tc.raw))
			if diff := cmp.Diff(&tc.want, got); diff != "" {
				t.Errorf("DescribeMessage (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(describeReference([]byte(tc.raw)), got); diff != "" {
				t.Errorf("differs from the reference (-ref +got):\n%s", diff)
			}
		})
	}
}

// records2026 is a 2026-07-28 exchange beside a 2025-11-25 one, each
// record with its revision.
func records2026() []Record {
	var recs []Record
	add := func(ms int, r Record) {
		r.Offset = time.Duration(ms) * time.Millisecond
		r.Wall = t0.Add(r.Offset)
		recs = append(recs, r)
	}
	const modern, legacy = "2026-07-28", "2025-11-25"
	add(1, Record{Conn: 1, Exchange: 1, Stream: "req:1", Dir: DirClientToServer, Kind: KindRequestHead, Revision: modern,
		HTTP: &HTTPHead{Method: "POST", URL: "/mcp", Proto: "HTTP/1.1", Header: []HeaderField{
			{"Mcp-Method", "tools/call"}, {"Mcp-Name", "slow_compute"}, {"Mcp-Protocol-Version", modern}}}})
	add(2, Record{Conn: 1, Exchange: 1, Stream: "req:1", Dir: DirClientToServer, Kind: KindMessage, Raw: []byte(msgCall2026), Revision: modern})
	add(3, Record{Conn: 1, Exchange: 1, Stream: "post:1", Dir: DirServerToClient, Kind: KindMessage, Raw: []byte(msgCreated2026), Revision: modern})
	add(4, Record{Conn: 1, Exchange: 2, Stream: "post:2", Dir: DirServerToClient, Kind: KindSSEEvent, Revision: modern,
		Raw: []byte("data: " + msgTaskNote + "\n\n"), SSE: &SSEFields{Data: msgTaskNote}})
	add(5, Record{Conn: 2, Exchange: 3, Stream: "req:3", Dir: DirClientToServer, Kind: KindMessage, Raw: []byte(msgCall), Revision: legacy})
	add(6, Record{Conn: 2, Kind: KindConnClose, End: EndEOF})
	return recs
}

func TestRevisionRoundTrip(t *testing.T) {
	recs := records2026()
	data := writeTrace(t, sampleHeader(), recs, nil)
	_, got, err := readAll(t, data)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want(recs), got); diff != "" {
		t.Errorf("records (-want +got):\n%s", diff)
	}
	if got[2].RPC.ResultType != "task" || got[2].RPC.TaskID != "t-1" || got[2].Revision != "2026-07-28" {
		t.Errorf("CreateTaskResult read back as %+v, revision %q", got[2].RPC, got[2].Revision)
	}
	if got[4].Revision != "2025-11-25" || got[5].Revision != "" {
		t.Errorf("revisions %q, %q: want 2025-11-25 and none", got[4].Revision, got[5].Revision)
	}
	// Through JSONL, byte for byte.
	again := importJSONL(t, exportJSONL(t, data))
	if string(again) != string(data) {
		t.Error("trace -> JSONL -> trace changed the bytes")
	}
}

// testdata/v3-2026.trace was written by tasksim at format version 3
// before records had a revision and rpc fields a result type: it reads
// with no revision (the header's protocol is the default) and the result
// type read from the message.
func TestReadsFormatVersion3WithoutRevision(t *testing.T) {
	data, err := os.ReadFile("testdata/v3-2026.trace")
	if err != nil {
		t.Fatal(err)
	}
	h, recs, err := readAll(t, data)
	if err != nil || h.FormatVersion != 3 || len(recs) != 7 {
		t.Fatalf("version %d, %d records, %v", h.FormatVersion, len(recs), err)
	}
	for _, r := range recs {
		if r.Revision != "" {
			t.Errorf("record %d: revision %q, want none", r.Index, r.Revision)
		}
	}
	if p := recs[5].RPC; p == nil || p.ResultType != "task" || p.TaskID != "t-1" || p.Status != "working" {
		t.Errorf("CreateTaskResult read as %+v", p)
	}
	if p := recs[2].RPC; p == nil || p.ResultType != "" || p.Method != "tools/call" {
		t.Errorf("request read as %+v", p)
	}
	// So does its JSONL export, imported.
	_, recsJ, err := readAll(t, importJSONL(t, exportJSONL(t, data)))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(recs[5].RPC, recsJ[5].RPC); diff != "" {
		t.Errorf("through JSONL (-want +got):\n%s", diff)
	}
}
