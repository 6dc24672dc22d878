package sim

import (
	"bytes"

	"github.com/tasksim/tasksim/sim/check"
	"github.com/tasksim/tasksim/traces"
)

// judge reads a run's trace and judges each rule on the view it is about
// (docs/trace-format.md, "Whose view"): rules about the server and the
// transport on the server's view (records of the wire and the server side
// of the fault layer), rules about the client on the client's view. Fault
// records are in both. One checker over both sides would see every
// message twice.
//
// Over Streamable HTTP, an in-process connection merges the HTTP streams
// of a session into one, in an order that is not the server's (a partial
// notification sent on the standalone stream before the final response
// on the POST stream may be read after it). Rules about the order of
// messages on one stream cannot be judged on that merge: over HTTP they
// are SKIP with the reason, whatever the merge showed, so that the verdict
// does not depend on the scheduler; stdio runs (one stream) judge them.
func judge(trace []byte, transport string) (*check.Verdict, error) {
	rd, err := traces.NewReader(bytes.NewReader(trace))
	if err != nil {
		return nil, err
	}
	server, client := check.New(nil), check.New(nil)
	var n uint64
	for rec, err := range rd.Records() {
		if err != nil {
			return nil, err
		}
		n++
		if rec.Kind == traces.KindFault || rec.Side.InView(traces.SideServer) {
			server.Add(rec)
		}
		if rec.Kind == traces.KindFault || rec.Side.InView(traces.SideClient) {
			client.Add(rec)
		}
	}
	sv, cv := server.Verdict(), client.Verdict()
	v := &check.Verdict{Records: n, Faults: sv.Faults}
	for i, r := range sv.Rules {
		if r.Rule.Side == check.Client {
			r = cv.Rules[i]
		}
		if transport == TransportHTTP && orderRules[r.Rule.ID] {
			r = check.RuleResult{Rule: r.Rule, Status: check.Skip,
				Why: "the in-process connection merges the session's HTTP streams; judged over stdio"}
		}
		v.Rules = append(v.Rules, r)
	}
	return v, nil
}

// orderRules judge the order of messages on one stream.
var orderRules = map[string]bool{"S2679-AFTER-TERMINAL": true, "TASK-STATUS-TRANSITION": true}
