package sim

import (
	"bytes"
	"context"
	"fmt"
	"maps"
	"slices"
	"testing"

	"github.com/tasksim/tasksim/check"
	"github.com/tasksim/tasksim/traces"
)

// TestHTTPRecordJudged: a run over Streamable HTTP records its HTTP
// exchanges (request heads, SSE events with ids, the probes' cut and
// resumed streams) and judges the HTTP rules on them; on the reference
// implementation they pass, and each was judged. The same schedule gives
// the same records on every stream. Over stdio there is no
// HTTP record and the HTTP rules stay SKIP.
func TestHTTPRecordJudged(t *testing.T) {
	ctx := context.Background()
	s := Schedule{Seed: 1, Faults: []string{}, Workload: Workload{Transport: TransportHTTP, Sessions: 1}}
	res, err := Run(ctx, s, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.Failed() {
		t.Fatalf("failed %v: %v", res.FailedRules(), res.Liveness)
	}
	for _, id := range []string{"HTTP-EVENT-ID-UNIQUE", "HTTP-RESUME-SAME-STREAM", "HTTP-RESUME-COMPLETE", "HTTP-SESSION", "HTTP-SESSION-MISSING", "HTTP-NO-BROADCAST", "CLIENT-RESUME", "S1905-LASTSEQNR-INVALID"} {
		r, ok := res.Verdict.Result(id)
		if !ok || r.Status != check.Pass || r.Checked == 0 {
			t.Errorf("%s is %+v, want passed and judged", id, r)
		}
	}
	rd, err := traces.NewReader(bytes.NewReader(res.HTTPTrace))
	if err != nil {
		t.Fatal(err)
	}
	if label(rd.Header(), "record") != "http" || rd.Header().Seed != 1 {
		t.Errorf("HTTP record header %+v: want label record=http and seed 1", rd.Header())
	}
	kinds := map[traces.Kind]int{}
	var statuses []int
	for rec, err := range rd.Records() {
		if err != nil {
			t.Fatal(err)
		}
		kinds[rec.Kind]++
		if rec.Kind == traces.KindResponseHead {
			statuses = append(statuses, rec.HTTP.Status)
		}
	}
	if kinds[traces.KindRequestHead] == 0 || kinds[traces.KindSSEEvent] == 0 || kinds[traces.KindConnError] == 0 {
		t.Errorf("HTTP record kinds %v: want request heads, SSE events and cuts", kinds)
	}
	if !slices.Contains(statuses, 400) || !slices.Contains(statuses, 202) {
		t.Errorf("HTTP record statuses %v: want the probe's 400 and a 202", statuses)
	}

	again, err := Run(ctx, s, nil)
	if err != nil {
		t.Fatal(err)
	}
	if a, b := byStream(t, res.HTTPTrace), byStream(t, again.HTTPTrace); !maps.EqualFunc(a, b, slices.Equal) {
		t.Errorf("the same schedule gave two HTTP records:\n%v\n%v", a, b)
	}

	s.Workload.Transport = TransportStdio
	res, err = Run(ctx, s, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.HTTPTrace != nil {
		t.Error("a run over stdio has an HTTP record")
	}
	if r, _ := res.Verdict.Result("HTTP-SESSION"); r.Status != check.Skip {
		t.Errorf("over stdio HTTP-SESSION is %s, want SKIP", r.Status)
	}
	if r, _ := res.Verdict.Result("S1905-LASTSEQNR-INVALID"); r.Status != check.Pass {
		t.Errorf("over stdio S1905-LASTSEQNR-INVALID is %s, want PASS (the lastSeqNr 0 probe)", r.Status)
	}
}

// TestHTTPRecordUnjudged: in a run whose faults lost a session (a server
// restart), the HTTP record does not judge resumption, and says why.
func TestHTTPRecordUnjudged(t *testing.T) {
	s := Schedule{Seed: 1, Faults: []string{"server-restart:method=tools/call,count=1,p=1"}, Workload: Workload{Transport: TransportHTTP, Sessions: 1, Calls: []Call{probeStream}}}
	res, err := Run(context.Background(), s, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.Restarts == 0 {
		t.Fatalf("no restart: %v", res.Applied)
	}
	if r, _ := res.Verdict.Result("HTTP-RESUME-COMPLETE"); r.Status != check.Skip {
		t.Errorf("HTTP-RESUME-COMPLETE is %s, want SKIP: the HTTP record does not judge it after a restart", r.Status)
	}
	for _, id := range []string{"HTTP-RESUME-COMPLETE", "CLIENT-RESUME"} {
		r, _ := res.Verdict.Result(id)
		if r.Status == check.Fail {
			t.Errorf("%s failed: %v", id, r.Findings)
		}
		if r.Status == check.Skip && !bytes.Contains([]byte(r.Why), []byte("HTTP record does not judge")) {
			t.Errorf("%s SKIP without saying why the HTTP record did not judge it: %q", id, r.Why)
		}
	}
}

// byStream is an HTTP record stream by stream: each record's kind, note,
// status, event id and JSON-RPC method and id, in order. Two streams'
// records of one instant may come in either order (docs/sim.md,
// "Determinism"); within a stream the order is the run's.
func byStream(t *testing.T, record []byte) map[string][]string {
	t.Helper()
	rd, err := traces.NewReader(bytes.NewReader(record))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]string{}
	for rec, err := range rd.Records() {
		if err != nil {
			t.Fatal(err)
		}
		line := fmt.Sprint(rec.Offset, " ", rec.Kind, " ", rec.Note)
		if rec.HTTP != nil {
			line += fmt.Sprint(" ", rec.HTTP.Method, rec.HTTP.Status)
		}
		if rec.SSE != nil {
			line += " id=" + rec.SSE.ID
		}
		if rec.RPC != nil {
			line += " " + rec.RPC.Method + " " + rec.RPC.ID
		}
		out[rec.Stream] = append(out[rec.Stream], line)
	}
	return out
}
