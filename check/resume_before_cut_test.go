package check

import (
	"path/filepath"
	"testing"
	"time"
)

// A client that asked for the task before its stream broke, and got the
// rest that way, lost nothing when it let the stream go: CLIENT-RESUME
// holds. The fixture's call is cut after seqNr 1; its GET resumption is
// taken out, and a tasks/result sent and answered before the cut (or not
// answered) is put in. The client then deletes its session. So a client
// that saw seqNr 2 before seqNr 1 (a reordered stream) asks tasks/result
// without lastSeqNr at once, has the complete result, and closes the
// stream still carrying the call's last answers.
func TestClientResumeAskedBeforeCut(t *testing.T) {
	const task = "c87e6d70-ed7f-445c-bc08-6be342767ec5"
	const meta = `"_meta":{"io.modelcontextprotocol/related-task":{"taskId":"` + task + `"}}`
	const seg2 = `{"seqNr":2,"type":"text","text":"chunk 2;bbbbbbbbbbbbbbbbbbbbbbbb"}`
	const seg3 = `{"seqNr":3,"type":"text","text":"chunk 3;cccccccccccccccccccccccc"}`
	whole := `{"jsonrpc":"2.0","id":3,"result":{"content":[` +
		`{"type":"text","text":"chunk 1;aaaaaaaaaaaaaaaaaaaaaaaa"},` +
		`{"type":"text","text":"chunk 2;bbbbbbbbbbbbbbbbbbbbbbbb"},` +
		`{"type":"text","text":"chunk 3;cccccccccccccccccccccccc"}],"isError":false,` + meta + `}}`
	for _, tc := range []struct {
		name      string
		req, resp string // resp "": never answered
		want      Status
	}{
		{"tasks/result answered with the complete result", `{"taskId":"` + task + `"}`, whole, Pass},
		{"tasks/result with lastSeqNr answered up to isComplete", `{"taskId":"` + task + `","lastSeqNr":1}`,
			`{"jsonrpc":"2.0","id":3,"result":{"partial-content":[` + seg2 + `,` + seg3 + `],"isError":false,"isComplete":true,` + meta + `}}`, Pass},
		{"tasks/result with lastSeqNr answered short of isComplete", `{"taskId":"` + task + `","lastSeqNr":1}`,
			`{"jsonrpc":"2.0","id":3,"result":{"partial-content":[` + seg2 + `],"isError":false,"isComplete":false,` + meta + `}}`, Fail},
		{"tasks/result never answered", `{"taskId":"` + task + `"}`, "", Fail},
		{"tasks/result answered with an error", `{"taskId":"` + task + `"}`,
			`{"jsonrpc":"2.0","id":3,"error":{"code":-32603,"message":"internal error"}}`, Fail},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := &editor{t: t, recs: readFixture(t, filepath.Join("testdata", "pass", "resume-last-event-id.jsonl"))}
			if e.rec(15).Stream != "post:12" || e.rec(15).Note != "context canceled" {
				t.Fatalf("record 15 is %+v, want the cut of the call's stream", *e.rec(15))
			}
			e.cut(17, 23) // the GET that resumed the stream
			ex := e.exchange(e.rec(14).Offset+10*time.Millisecond, 13, "POST",
				`{"jsonrpc":"2.0","id":3,"method":"tasks/result","params":`+tc.req+`}`, tc.resp)
			if tc.resp == "" {
				ex = ex[:2] // the request only
			}
			e.insert(15, ex...)
			got := judgeRecords(t, e.recs, nil)
			r, _ := got.Result("CLIENT-RESUME")
			if r.Status != tc.want {
				t.Errorf("CLIENT-RESUME: %s %+v; want %s", r.Status, r.Findings, tc.want)
			}
		})
	}
}

// The answer carrying the call's task is held back behind the next one,
// which names the task in its related-task meta only (a reordered
// stream): the stream still created the task, and a tasks/result after
// its cut resumes it.
func TestClientResumeTaskNamedByMetaFirst(t *testing.T) {
	e := &editor{t: t, recs: readFixture(t, filepath.Join("testdata", "pass", "resume-last-event-id.jsonl"))}
	if e.rec(13).RPC.Status != "working" || len(e.rec(14).RPC.SeqNrs) != 1 {
		t.Fatalf("records 13, 14 are %+v, %+v; want the task's answer, then seqNr 1", *e.rec(13).RPC, *e.rec(14).RPC)
	}
	task := e.rec(13).RPC.TaskID
	e.swap(13, 14)
	at := e.rec(17).Offset
	e.cut(17, 23) // the GET that resumed the stream
	e.insert(17, e.exchange(at, 13, "POST",
		`{"jsonrpc":"2.0","id":3,"method":"tasks/result","params":{"taskId":"`+task+`","lastSeqNr":1}}`,
		`{"jsonrpc":"2.0","id":3,"result":{"partial-content":[{"seqNr":2,"type":"text","text":"chunk 2;bbbbbbbbbbbbbbbbbbbbbbbb"},{"seqNr":3,"type":"text","text":"chunk 3;cccccccccccccccccccccccc"}],"isError":false,"isComplete":true,"_meta":{"io.modelcontextprotocol/related-task":{"taskId":"`+task+`"}}}}`)...)
	got := judgeRecords(t, e.recs, nil)
	if r, _ := got.Result("CLIENT-RESUME"); r.Status != Pass {
		t.Errorf("CLIENT-RESUME: %s %+v; want PASS: the client resumed the task with tasks/result", r.Status, r.Findings)
	}
}
