package sim

import (
	"bytes"

	"github.com/tasksim/tasksim/check"
	"github.com/tasksim/tasksim/traces"
)

// judge reads a run's trace and judges it by the rule catalog. The trace
// holds both sides of the fault layer; check.Check judges each rule on the
// view it is about (docs/trace-format.md, "Whose view"): rules about the
// server and the transport on the server's view, rules about the client
// on the client's, fault records in both.
func judge(trace []byte) (*check.Verdict, error) {
	rd, err := traces.NewReader(bytes.NewReader(trace))
	if err != nil {
		return nil, err
	}
	return check.Check(rd.Records(), CheckOptions(rd.Header()))
}

// CheckOptions returns the options that judge a trace with header h as
// the simulator does (tasksim trace check of a sim trace uses them too).
//
// Over Streamable HTTP, an in-process connection merges the HTTP streams
// of a session into one, in an order that is not the server's (a partial
// notification sent on the standalone stream before the final response
// on the POST stream may be read after it). Rules about the order of
// messages on one stream cannot be judged on that merge: in a trace of an
// in-process run over HTTP (header labels sim=in-process and
// transport=http, as Run writes them) they are SKIP with the reason,
// whatever the merge showed, so that the verdict does not depend on the
// scheduler; stdio runs (one stream) judge them. S1905-COMPLETE keeps
// judging, but never takes two messages of the merge for the server's
// order (check.Options.Merged). Every trace gets its send order
// (check.SendOrderOf) and the revision of its records that name none
// (check.RevisionOf).
func CheckOptions(h traces.Header) *check.Options {
	if label(h, "sim") != "in-process" || label(h, "transport") != TransportHTTP {
		return &check.Options{SendOrder: check.SendOrderOf(h), Revision: check.RevisionOf(h)}
	}
	skip := make(map[string]string, len(orderRules))
	for _, id := range orderRules {
		skip[id] = "the order of messages on each HTTP stream, which an in-process run merges into one per session (runs over stdio judge this rule)"
	}
	return &check.Options{Skip: skip, Merged: true, SendOrder: check.SendOrderOf(h), Revision: check.RevisionOf(h)}
}

// orderRules judge the order of messages on one stream.
var orderRules = []string{"S2679-AFTER-TERMINAL", "TASK-STATUS-TRANSITION"}

// label returns the value of the header label key, "" if it has none.
func label(h traces.Header, key string) string {
	for _, l := range h.Labels {
		if l.Key == key {
			return l.Value
		}
	}
	return ""
}
