package check

import (
	"path/filepath"
	"testing"

	"github.com/tasksim/tasksim/traces"
)

// TestClient2026NewIDLostOnly: only a stream the server ended or broke
// loses its request. When the client closed the stream itself (it
// cancelled the request) or the recorder stopped, the request is not
// lost, and a later request with its id is no re-issue to judge.
func TestClient2026NewIDLostOnly(t *testing.T) {
	for _, tc := range []struct {
		end  traces.End
		want Status
	}{
		{traces.EndServer, Fail},
		{traces.EndError, Fail},
		{traces.EndEOF, Fail},
		{traces.EndClient, Skip},
		{traces.EndStopped, Skip},
	} {
		t.Run(tc.end.String(), func(t *testing.T) {
			recs := readFixture(t, filepath.Join("testdata", "fail", "CLIENT-2663-NEW-ID.jsonl"))
			if recs[2].Kind != traces.KindBodyEnd {
				t.Fatalf("record 2 is %v, want the broken stream's body-end", recs[2].Kind)
			}
			recs[2].End = tc.end
			v, err := Check(recordSeq(recs), nil)
			if err != nil {
				t.Fatal(err)
			}
			if r, _ := v.Result(RuleClient2663NewID.String()); r.Status != tc.want {
				t.Errorf("stream ended %s: %s is %s, want %s\n%s", tc.end, r.Rule.ID, r.Status, tc.want, verdictText(v))
			}
		})
	}
}

// TestClient2026PollAfterCancel: a tasks/get sent right after tasks/cancel
// looks how the cancel ended; it is not polling and is not judged against
// pollIntervalMs. Without the cancel the same tasks/get is the task's
// first, which is not judged either: only the gets that follow one set
// the pace.
func TestClient2026PollAfterCancel(t *testing.T) {
	recs := readFixture(t, filepath.Join("testdata", "pass", "rev2026.jsonl"))
	// Records 105..114: tasks/cancel of the task created at 103, then
	// tasks/get of it; bring both to the moment of the create.
	at := recs[103].Offset
	for i := 105; i < 115; i++ {
		recs[i].Offset = at
	}
	judged := func(recs []traces.Record) RuleResult {
		v, err := Check(recordSeq(recs), nil)
		if err != nil {
			t.Fatal(err)
		}
		r, _ := v.Result(RuleClient2663PollInterval.String())
		return r
	}
	if r := judged(recs); r.Status != Pass {
		t.Errorf("tasks/get at once after tasks/cancel: %s is %s, want PASS\n%v", r.Rule.ID, r.Status, r.Findings)
	}
	// Without the cancel, the same tasks/get comes 0s after the
	// CreateTaskResult that gave pollIntervalMs 100: a first look.
	noCancel := append(append([]traces.Record(nil), recs[:105]...), recs[110:]...)
	if r := judged(noCancel); r.Status == Warn || r.Status == Fail {
		t.Errorf("a first tasks/get at once after the CreateTaskResult: %s is %s, want it not judged\n%v", r.Rule.ID, r.Status, r.Findings)
	}
}
