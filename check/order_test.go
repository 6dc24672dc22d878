package check

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/tasksim/tasksim/traces"
)

func fixtureEditor(t *testing.T, name string) *editor {
	return &editor{t: t, recs: readFixture(t, filepath.Join("testdata", "pass", name+".jsonl"))}
}

func statusOf(t *testing.T, v *Verdict, id string) Status {
	t.Helper()
	r, ok := v.Result(id)
	if !ok {
		t.Fatalf("no result for %s", id)
	}
	return r.Status
}

// TestCompleteOrderAcrossStreams: the reference server's streaming trace,
// recorded by a proxy, shows the task's completed status notification on
// the GET stream (record 22) before isComplete: true on the POST stream
// (record 24): two connections passed the proxy in another order than the
// server sent them (the server moves the status after it queues the final
// response). Judged by record order it would fail a correct server; it
// fails only when the trace says its recorder saw the server's send order.
func TestCompleteOrderAcrossStreams(t *testing.T) {
	recs := fixtureEditor(t, "streaming").recs
	if got := statusOf(t, judgeRecords(t, recs, nil), "S1905-COMPLETE"); got != Pass {
		t.Errorf("proxy trace: S1905-COMPLETE %s, want PASS", got)
	}
	v := judgeRecords(t, recs, &Options{SendOrder: true})
	if got := failures(v); len(got) != 1 || got[0] != "S1905-COMPLETE" {
		t.Errorf("send-order trace fails %v, want exactly [S1905-COMPLETE]:\n%s", got, verdictText(v))
	}
	h := traces.Header{Labels: []traces.Label{{Key: LabelOrder, Value: "send"}}}
	if !SendOrderOf(h) || SendOrderOf(traces.Header{}) {
		t.Error("SendOrderOf does not read the order=send label")
	}
}

// TestIsolationMethodNotFound: a second session's tasks/get of a task of
// the first answered -32601 (the server has no tasks/*) shows nothing
// about isolation: TASK-ISOLATION is not PASS on it.
func TestIsolationMethodNotFound(t *testing.T) {
	e := fixtureEditor(t, "isolation-session-origin")
	e.sub(26, `-32602`, `-32601`)
	e.set(31, `{"jsonrpc":"2.0","id":3,"error":{"code":-32601,"message":"Method not found"}}`)
	if got := statusOf(t, judgeRecords(t, e.recs, nil), "TASK-ISOLATION"); got == Pass {
		t.Errorf("TASK-ISOLATION %s on -32601 answers, want no PASS", got)
	}
}

// TestBroadcastStatusNotification: the same status notification on the
// GET stream and on the call's POST stream of one session is
// HTTP-NO-BROADCAST's, not TASK-ISOLATION's.
func TestBroadcastStatusNotification(t *testing.T) {
	e := fixtureEditor(t, "streaming")
	dup, post := e.rec(22).Clone(), e.rec(23)
	dup.Conn, dup.Exchange, dup.Stream, dup.SSE.ID = post.Conn, post.Exchange, post.Stream, "1_77"
	e.insert(25, dup) // after the final response: no order to judge
	v := judgeRecords(t, e.recs, nil)
	if got := failures(v); len(got) != 1 || got[0] != "HTTP-NO-BROADCAST" {
		t.Errorf("fails %v, want exactly [HTTP-NO-BROADCAST]:\n%s", got, verdictText(v))
	}
}

// TestResumeCompleteNotForDuplicates: a replay after Last-Event-ID that
// repeats a seqNr (the server sent segment 2 twice) loses nothing:
// S1905-SEQNR fails, HTTP-RESUME-COMPLETE passes.
func TestResumeCompleteNotForDuplicates(t *testing.T) {
	e := fixtureEditor(t, "resume-last-event-id")
	dup := e.rec(19).Clone()
	dup.SSE.ID = "1_33"
	e.insert(20, dup)
	v := judgeRecords(t, e.recs, nil)
	if got := failures(v); len(got) != 1 || got[0] != "S1905-SEQNR" {
		t.Errorf("fails %v, want exactly [S1905-SEQNR]:\n%s", got, verdictText(v))
	}
	if got := statusOf(t, v, "HTTP-RESUME-COMPLETE"); got != Pass {
		t.Errorf("HTTP-RESUME-COMPLETE %s, want PASS", got)
	}
}

// TestResumeCompleteNoResponse: a replay that ends without the call's
// final response, with no event of the stream left out, loses nothing the
// trace saw sent: not HTTP-RESUME-COMPLETE's (the task never completed:
// nothing shows the response existed).
func TestResumeCompleteNoResponse(t *testing.T) {
	e := fixtureEditor(t, "resume-last-event-id")
	e.cut(21, 22)
	v := judgeRecords(t, e.recs, nil)
	if got := statusOf(t, v, "HTTP-RESUME-COMPLETE"); got == Fail {
		t.Errorf("HTTP-RESUME-COMPLETE FAIL on a response never sent:\n%s", verdictText(v))
	}
}

// TestIsolationLeakBeforeOwnStream: mcp-go v1.2.1 sends a task's
// notifications/tasks/status to every session's GET stream (a real
// trace of `tasksim check --scenario task-isolation`): the copy on the
// other session's stream (record 32) is recorded before the copy on the
// owner's (record 33), both before the answer that creates the task in
// the owner's session (record 35). Exactly one leak, blamed on the
// session that did not create the task, the finding naming the message.
func TestIsolationLeakBeforeOwnStream(t *testing.T) {
	recs := readFixture(t, filepath.Join("testdata", "mcpgo-isolation.jsonl"))
	v := judgeRecords(t, recs, nil)
	r, ok := v.Result("TASK-ISOLATION")
	if !ok || r.Status != Fail {
		t.Fatalf("TASK-ISOLATION %v, want FAIL:\n%s", r.Status, verdictText(v))
	}
	owner, other := sessionOf(t, recs, 35), sessionOf(t, recs, 32)
	want := "notifications/tasks/status about task " + recs[35].RPC.TaskID + " of session " + owner + " went to session " + other + " before the task was created"
	if len(r.Findings) != 1 || r.Findings[0].Message != want {
		t.Errorf("findings %+v, want exactly %q", r.Findings, want)
	}
}

// sessionOf is the Mcp-Session-Id of the exchange of record i.
func sessionOf(t *testing.T, recs []traces.Record, i int) string {
	t.Helper()
	for _, r := range recs {
		if r.Exchange == recs[i].Exchange && r.HTTP != nil {
			for _, h := range r.HTTP.Header {
				if strings.EqualFold(h.Name, "Mcp-Session-Id") {
					return h.Value
				}
			}
		}
	}
	t.Fatalf("no session id for record %d", i)
	return ""
}
