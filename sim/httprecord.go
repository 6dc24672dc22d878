package sim

import (
	"bytes"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/tasksim/tasksim/check"
	"github.com/tasksim/tasksim/clock"
	"github.com/tasksim/tasksim/mcp/streamhttp"
	"github.com/tasksim/tasksim/recorder"
	"github.com/tasksim/tasksim/traces"
)

// The HTTP record of a run over Streamable HTTP. The run's trace holds the
// messages of the client's mcp.Conn, both sides of the Conn place's
// faults; there a session is one stream of messages, with no HTTP status,
// no SSE event id and no POST or GET stream. What the transport rules
// (HTTP-*) judge is below that: so a run over HTTP records, besides, the
// HTTP exchanges as the server sent and received them, with the check
// suite's recording proxy (recorder.Proxy) on the simulated clock, between
// the HTTP place's faults and the server:
//
//	client ─ faults.Conn ─ ClientTransport ─ memory ─ faults.Handler ─ recorder.Proxy ─ memory ─ node
//	                                                   (HTTP place)     │ (the server's HTTP view)
//	                                                                    ▼
//	                                                       HTTP record (a trace of its own)
//
// The HTTP record is a trace as `tasksim record` writes it (request and
// response heads, SSE events with their ids, body ends, cuts), with every
// fault record of the run, so that a stream a fault acted on is excused
// as in the run's trace. It is judged by the rules that need HTTP
// (httpRules); their results replace the run trace's, which cannot judge
// them (SKIP). CLIENT-RESUME is judged on both: the run's trace judges a
// resumption with lastSeqNr against the segments the client got, the HTTP
// record a cut POST stream that the client never resumed, neither with a
// GET and Last-Event-ID nor with tasks/result (finish.go). The proxy draws
// nothing and decides nothing: a seed's schedule stays what it was.
type httpRecord struct {
	buf   bytes.Buffer
	w     *traces.Writer
	proxy *recorder.Proxy
}

// httpRules are the rules judged on the HTTP record: the transport rules,
// and CLIENT-RESUME's resumption of a cut HTTP stream.
var httpRules = []string{
	"HTTP-EVENT-ID-UNIQUE", "HTTP-RESUME-SAME-STREAM", "HTTP-RESUME-COMPLETE",
	"HTTP-NO-BROADCAST", "HTTP-ORIGIN", "HTTP-SESSION", "HTTP-SESSION-MISSING", "CLIENT-RESUME",
}

// HTTPRecordRules returns the rules a run over Streamable HTTP judges on
// its HTTP record (Result.HTTPTrace) rather than on its trace alone:
// `tasksim trace check` of the trace alone judges them otherwise.
func HTTPRecordRules() []string { return slices.Clone(httpRules) }

// newHTTPRecord returns an HTTP record with header h (the run's, labelled
// record=http) whose proxy forwards to upstream in memory.
func newHTTPRecord(h traces.Header, upstream http.Handler, c clock.Clock) (*httpRecord, error) {
	hr := &httpRecord{}
	h.Labels = append(h.Labels[:len(h.Labels):len(h.Labels)], traces.Label{Key: "record", Value: "http"})
	w, err := traces.NewWriter(&hr.buf, h, &traces.WriterOptions{Now: c.Now, FlushInterval: -1})
	if err != nil {
		return nil, err
	}
	u := &url.URL{Scheme: "http", Host: streamhttp.MemoryHost}
	p, err := recorder.NewProxy(u, w, &recorder.ProxyOptions{Transport: streamhttp.NewMemoryTransport(cutBeforeResponse{upstream}), Clock: c, KeepHost: true})
	if err != nil {
		return nil, err
	}
	hr.w, hr.proxy = w, p
	return hr, nil
}

// addFault copies a fault record of the run into the HTTP record.
func (hr *httpRecord) addFault(f traces.Fault, note string) {
	hr.proxy.Pipeline().AddFault(f, note)
}

// close ends the HTTP record: call it once no request is in flight.
func (hr *httpRecord) close() ([]byte, error) {
	if err := hr.proxy.Close(); err != nil {
		return nil, err
	}
	if err := hr.w.Close(); err != nil {
		return nil, err
	}
	return hr.buf.Bytes(), nil
}

// judgeHTTP judges the HTTP record by httpRules and puts their results
// into v, the verdict of the run's trace: an HTTP rule's result is the
// HTTP record's; CLIENT-RESUME's is both's, failed if either failed.
// Rules in unjudged are left as the run's trace judged them (an HTTP rule
// SKIP): the run made the HTTP record unfit to judge them (Run says why).
func judgeHTTP(v *check.Verdict, record []byte, unjudged []string) error {
	rd, err := traces.NewReader(bytes.NewReader(record))
	if err != nil {
		return err
	}
	hv, err := check.Check(rd.Records(), &check.Options{Rules: httpRules})
	if err != nil {
		return err
	}
	hv.Rules = slices.DeleteFunc(hv.Rules, func(r check.RuleResult) bool { return slices.Contains(unjudged, r.Rule.ID) })
	mergeHTTP(v, hv)
	for i := range v.Rules {
		if r := &v.Rules[i]; r.Status == check.Skip && slices.Contains(unjudged, r.Rule.ID) {
			r.Why = r.Rule.Needs + unjudgedWhy
		}
	}
	return nil
}

// unjudgedWhy is added to the reason of a rule the HTTP record did not
// judge.
const unjudgedWhy = " (the HTTP record does not judge it in this run: a fault lost a session, or acted at the HTTP place where the server's view is not the client's)"

// httpFindingPrefix marks a finding whose records are the HTTP record's.
const httpFindingPrefix = "in the HTTP record: "

// mergeHTTP puts the results of hv (the HTTP record's verdict) into v.
func mergeHTTP(v, hv *check.Verdict) {
	byID := make(map[string]check.RuleResult, len(hv.Rules))
	for _, r := range hv.Rules {
		// Its findings name records of the HTTP record, not of the
		// run's trace.
		r.Findings = slices.Clone(r.Findings)
		for i := range r.Findings {
			r.Findings[i].Message = httpFindingPrefix + r.Findings[i].Message
		}
		byID[r.Rule.ID] = r
	}
	for i := range v.Rules {
		cur := &v.Rules[i]
		h, ok := byID[cur.Rule.ID]
		if !ok {
			continue
		}
		if strings.HasPrefix(cur.Rule.ID, "HTTP-") {
			*cur = h
			continue
		}
		// A rule judged on both: observations add up.
		cur.Checked += h.Checked
		cur.Excused += h.Excused
		cur.Failures += h.Failures
		cur.Findings = append(cur.Findings, h.Findings...)
		switch {
		case cur.Failures > 0:
			cur.Status, cur.Why = cur.Rule.Breach(false), ""
		case cur.Checked > 0:
			cur.Status, cur.Why = check.Pass, ""
		}
	}
}
