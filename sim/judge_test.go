package sim

import (
	"bytes"
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/tasksim/tasksim/check"
	"github.com/tasksim/tasksim/traces"
)

// byHand judges a run's trace as the simulator did before check.Check
// read sides: one Checker per view, fed by hand (faults in both), client
// rules from the client's, the order rules SKIP over HTTP. The oracle of
// TestJudgeSides.
func byHand(t *testing.T, trace []byte) *check.Verdict {
	t.Helper()
	rd, err := traces.NewReader(bytes.NewReader(trace))
	if err != nil {
		t.Fatal(err)
	}
	opts := &check.Options{Merged: CheckOptions(rd.Header()).Merged}
	server, client := check.New(opts), check.New(opts)
	var n uint64
	for rec, err := range rd.Records() {
		if err != nil {
			t.Fatal(err)
		}
		n++
		// Each Checker gets one view, as a trace all on the wire.
		inServer := rec.Kind == traces.KindFault || rec.Side.InView(traces.SideServer)
		inClient := rec.Kind == traces.KindFault || rec.Side.InView(traces.SideClient)
		rec.Side = traces.SideWire
		if inServer {
			server.Add(rec)
		}
		if inClient {
			client.Add(rec)
		}
	}
	skip := CheckOptions(rd.Header()).Skip
	sv, cv := server.Verdict(), client.Verdict()
	v := &check.Verdict{Records: n, Faults: sv.Faults, Sides: true}
	for i, r := range sv.Rules {
		if r.Rule.Side == check.Client {
			r = cv.Rules[i]
		}
		if why, ok := skip[r.Rule.ID]; ok {
			r = check.RuleResult{Rule: r.Rule, Status: check.Skip, Why: why}
		}
		v.Rules = append(v.Rules, r)
	}
	return v
}

// TestJudgeSides: the run's verdict, now check.Check's reading of the
// sides, is the verdict of the two views fed by hand, for seeds over both
// transports with and without faults; over HTTP with the HTTP record's
// results merged in (judgeHTTP), and only those.
func TestJudgeSides(t *testing.T) {
	transports := map[string]int{}
	faulted := 0
	for seed := uint64(1); seed <= 24; seed++ {
		res, err := Run(context.Background(), Draw(seed, nil, nil), nil)
		if err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		transports[res.Schedule.Workload.Transport]++
		if res.Verdict.Faults > 0 {
			faulted++
		}
		want := byHand(t, res.Trace)
		if res.HTTPTrace != nil {
			if err := judgeHTTP(want, res.HTTPTrace, res.HTTPUnjudged); err != nil {
				t.Fatal(err)
			}
		}
		if diff := cmp.Diff(want, res.Verdict); diff != "" {
			t.Errorf("seed %d (%s, %v): the run's verdict is not the two views' (-by hand +run):\n%s", seed, res.Schedule.Workload.Transport, res.Schedule.Faults, diff)
		}
	}
	if transports[TransportHTTP] == 0 || transports[TransportStdio] == 0 || faulted == 0 {
		t.Errorf("seeds 1-24 ran %v with %d faulted; want both transports and faults", transports, faulted)
	}
}

// CheckOptions skips the order rules for an in-process run over HTTP
// only.
func TestCheckOptions(t *testing.T) {
	for _, tc := range []struct {
		labels []traces.Label
		skips  bool
	}{
		{[]traces.Label{{Key: "sim", Value: "in-process"}, {Key: "transport", Value: "http"}}, true},
		{[]traces.Label{{Key: "sim", Value: "in-process"}, {Key: "transport", Value: "stdio"}}, false},
		{[]traces.Label{{Key: "recorder", Value: "http"}}, false},
		{nil, false},
	} {
		o := CheckOptions(traces.Header{Labels: tc.labels})
		if got := len(o.Skip) == len(orderRules); got != tc.skips || o.Rules != nil {
			t.Errorf("%v: %+v, want order rules skipped %v", tc.labels, o, tc.skips)
		}
	}
}
