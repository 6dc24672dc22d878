package check

import (
	"path/filepath"
	"testing"

	"github.com/tasksim/tasksim/traces"
)

// A server that broadcasts sends a task's partials on the GET stream and
// again on an open POST stream; the trace has them in the order they were
// recorded, which across two streams is not the order they were sent in.
// Here the POST copy of seq 2 is recorded before the GET's seq 0: the
// broadcast is HTTP-NO-BROADCAST's, and S2679-SEQ does not blame the
// server a second time for an order nobody can prove (SEP-2679 1.2, 1.3
// judged on one stream). Without the broadcast (the copies taken out),
// seq 2 before seq 0 is S2679-SEQ's.
func TestSeqAcrossBroadcastStreams(t *testing.T) {
	for _, tc := range []struct {
		name             string
		copies           bool
		seq, noBroadcast Status
	}{
		{"broadcast", true, Pass, Fail},
		{"one partial out of order, no broadcast", false, Fail, Pass},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := &editor{t: t, recs: readFixture(t, filepath.Join("testdata", "pass", "partial.jsonl"))}
			if e.rec(15).Stream != "post:9" || e.rec(17).Stream != "get:8" || e.rec(19).Stream != "get:8" {
				t.Fatalf("records 15, 17, 19 are %+v, %+v, %+v", *e.rec(15), *e.rec(17), *e.rec(19))
			}
			// The call's answer as an SSE stream that stays open.
			e.header(14, "Content-Type", "text/event-stream")
			answer := e.rec(15)
			answer.Kind, answer.SSE = traces.KindSSEEvent, &traces.SSEFields{ID: "9_1", HasID: true, Event: "message", Data: string(answer.Raw)}
			answer.Raw = nil
			end := e.take(16, 17)[0]
			onPost := func(i int, id string) traces.Record {
				r := *e.rec(i)
				sse := *r.SSE
				sse.ID, sse.HasID = id, true
				r.Stream, r.Conn, r.Exchange, r.SSE = "post:9", answer.Conn, answer.Exchange, &sse
				return r
			}
			seq0, seq1, seq2 := onPost(16, "9_3"), onPost(17, "9_4"), onPost(18, "9_2")
			if !tc.copies {
				seq2.SSE.Data = e.payload(18)[:len(e.payload(18))-1] + `,"_meta":{}}`
			}
			after := []traces.Record{end}
			if tc.copies {
				after = []traces.Record{seq0, seq1, end}
			}
			e.insert(19, after...)
			e.insert(16, seq2)
			if !tc.copies {
				e.cut(19, 20) // the GET's seq 2
			}
			got := judgeRecords(t, e.recs, nil)
			for rule, want := range map[string]Status{"S2679-SEQ": tc.seq, "HTTP-NO-BROADCAST": tc.noBroadcast} {
				if r, _ := got.Result(rule); r.Status != want {
					t.Errorf("%s: %s %+v; want %s", rule, r.Status, r.Findings, want)
				}
			}
		})
	}
}
