package sim

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/tasksim/tasksim/check"
	"github.com/tasksim/tasksim/clock"
	"github.com/tasksim/tasksim/faults"
	"github.com/tasksim/tasksim/mcp"
	"github.com/tasksim/tasksim/mcp/client"
	"github.com/tasksim/tasksim/mcp/stdio"
	"github.com/tasksim/tasksim/mcp/streamhttp"
	"github.com/tasksim/tasksim/recorder"
	"github.com/tasksim/tasksim/traces"
)

// simStart is where every run's simulated clock starts.
var simStart = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// Simulated bounds of a run.
const (
	// callSlack is how long past its fault-free duration a call may run
	// before the simulation gives up on it (a stalled stream, a lost
	// response: the reference client waits as long as its caller lets it).
	callSlack = 30 * time.Second
	// recoverBudget bounds each step after the faults stopped.
	recoverBudget = 60 * time.Second
)

// DefaultMaxWall bounds the wall time of one run when RunOptions.MaxWall
// is 0.
const DefaultMaxWall = 30 * time.Second

// RunOptions configure Run. Zero values are defaults.
type RunOptions struct {
	// Command and Version go into the trace header.
	Command []string
	Version string
	// MaxWall bounds the run's wall time; 0 means DefaultMaxWall. A run
	// past it is a runtime error, not a finding.
	MaxWall time.Duration
	// Bugs plants known bugs in the reference server, its HTTP transport
	// and the reference client, for tests only (docs/sim.md, "Planted
	// bugs"); nil plants none.
	Bugs *Bugs
	// Strict judges a SHOULD broken as FAIL, not WARN (--strict): it
	// then fails the run and can be shrunk.
	Strict bool
}

// Result is what one run showed.
type Result struct {
	Schedule Schedule
	// Verdict judges the trace: server and transport rules on the
	// server's view, client rules on the client's view.
	Verdict *check.Verdict
	// Liveness holds the findings about calls: hung, unexplained errors,
	// wrong results, no recovery once the faults stopped.
	Liveness []Finding
	Calls    []CallOutcome
	// Applied is every fault decision, in order.
	Applied []faults.Applied
	// Restarts counts server restarts.
	Restarts int
	// SimTime is how much simulated time the run took.
	SimTime time.Duration
	// Trace is the run's trace file.
	Trace []byte
	// HTTPTrace is the HTTP record of a run over Streamable HTTP, a trace
	// file of its own (httprecord.go); nil over stdio.
	HTTPTrace []byte
	// HTTPUnjudged are the rules of HTTPRecordRules the HTTP record did
	// not judge in this run (a fault lost a session, or acted at the HTTP
	// place): Verdict holds the trace's results for them.
	HTTPUnjudged []string
}

// CallOutcome is how one call of the workload ended.
type CallOutcome struct {
	Call     int    `json:"call"`
	Expected string `json:"expected"`
	Got      string `json:"got"`
	Detail   string `json:"detail,omitempty"`
	TaskID   string `json:"taskId,omitempty"`
	// Faulted says a fault may have changed the call: one acted on its
	// session (or a restart or clock jump on any) before it ended.
	Faulted bool `json:"faulted,omitempty"`
	// TailLost says the complete result lacked only its last segments
	// after a fault dropped a response of the call's session or held one
	// back past the final response (lostResponse): a loss no
	// client can see, since SEP-1905's final isComplete response does not
	// say how many segments there were (its section "Sequence Number
	// Requirements" numbers them, nothing bounds them). SIM-RESULT does
	// not hold it against the client; the call is recovered with
	// tasks/result instead, which must return the whole result.
	TailLost  bool `json:"tailLost,omitempty"`
	tailShort bool
	// Recovered is the outcome of tasks/result once the faults stopped,
	// for a call that did not end as expected; "" when not asked.
	Recovered string `json:"recovered,omitempty"`

	start, end time.Time
}

// decision is a fault decision with when and where it acted.
type decision struct {
	at      time.Time
	session int // -1: unknown
	verb    faults.Verb
	stream  string // the logical stream of the message acted on
}

// Run runs one schedule: the workload over the in-memory transport
// through the fault layer, until every call ended; then the faults stop,
// calls that did not end as expected are recovered with tasks/result, and
// a fresh session makes one more call. It returns an error only when the
// run itself could not be made (bad schedule, runtime failure); what the
// run found is in the Result.
func Run(ctx context.Context, s Schedule, o *RunOptions) (*Result, error) {
	var opts RunOptions
	if o != nil {
		opts = *o
	}
	if opts.MaxWall <= 0 {
		opts.MaxWall = DefaultMaxWall
	}
	if err := s.Workload.Validate(); err != nil {
		return nil, err
	}
	bound, err := checkSpecs(s.Faults)
	if err != nil {
		return nil, err
	}
	if err := checkTransport(bound, s.Workload.Transport); err != nil {
		return nil, err
	}
	var bugs Bugs
	if opts.Bugs != nil {
		bugs = *opts.Bugs
	}
	ctx, cancel := context.WithTimeout(ctx, opts.MaxWall)
	defer cancel()
	defer clock.OneP()()

	sim := clock.NewSim(simStart)
	r := &run{ctx: ctx, sim: sim, bugs: bugs.Client}
	nd := newNode(sim, rand.NewChaCha8(seedKey(s.Seed, 1)), rand.NewChaCha8(seedKey(s.Seed, 2)), bugs)
	var buf bytes.Buffer
	header := traces.Header{
		Created: sim.Now(), TasksimVersion: opts.Version, Command: opts.Command,
		Protocol: mcp.LatestProtocolVersion, Seed: s.Seed,
		Labels: []traces.Label{{Key: "sim", Value: "in-process"}, {Key: "transport", Value: s.Workload.Transport}},
		Faults: &traces.Schedule{Specs: s.Faults, Note: "decisions are in the fault records"},
	}
	w, err := traces.NewWriter(&buf, header, &traces.WriterOptions{Now: sim.Now, FlushInterval: -1})
	if err != nil {
		return nil, err
	}
	if s.Workload.Transport == TransportHTTP {
		if r.http, err = newHTTPRecord(header, nd, sim); err != nil {
			return nil, err
		}
	}
	pipe := recorder.NewPipeline(w, &recorder.PipelineOptions{Clock: sim})
	connBound, httpBound := byPlace(bound)
	set := faults.NewSet(s.Seed, connBound...)
	httpSet := faults.NewSet(s.Seed, httpBound...)
	var dmu sync.Mutex
	var decisions []decision
	observe := func(a faults.Applied) {
		f := a.TraceFault()
		k := sessionOf(f.Target.Stream)
		if k >= 0 {
			f.Target.Conn = uint64(k + 1)
		}
		pipe.AddFault(f, a.Spec)
		if r.http != nil {
			r.http.addFault(f, a.Spec)
		}
		dmu.Lock()
		decisions = append(decisions, decision{at: sim.Now(), session: k, verb: a.Action.Verb, stream: f.Target.Stream})
		dmu.Unlock()
	}
	set.Observe(observe)
	httpSet.Observe(observe)

	var base mcp.Transport
	var httpTr, noResumeTr *streamhttp.ClientTransport
	if s.Workload.Transport == TransportHTTP {
		hf := httpFaults(r.http.proxy, httpSet, sim)
		tr := streamhttp.Pipe(hf)
		httpTr = tr
		// The no-resume probe's server: the same, behind a front that
		// cannot resume (probes_http.go).
		nr := streamhttp.Pipe(&noResume{h: hf})
		nr.Clock, nr.NoResume = sim, bugs.Client.NoResume
		noResumeTr = nr
		tr.Clock = sim
		tr.NoResume = bugs.Client.NoResume
		base = tr
	} else {
		base = stdio.Pipe(nd, nil)
	}
	transportOver := func(base mcp.Transport, k int) mcp.Transport {
		return mcp.DecorateTransport(base, func(c mcp.Conn) mcp.Conn {
			id := uint64(k + 1)
			if s.Workload.Transport == TransportStdio {
				c = nd.stdio(c)
			}
			c = recorder.Conn(c, pipe, &recorder.ConnOptions{ID: id, Side: traces.SideServer, Note: "reference server"})
			c = faults.Conn(c, set, &faults.ConnOptions{
				Clock: sim, Restart: nd.restart, Split: split(k),
				Advance: r.jump,
			})
			return recorder.Conn(c, pipe, &recorder.ConnOptions{ID: id, Side: traces.SideClient, Note: "reference client"})
		})
	}
	transport := func(k int) mcp.Transport { return transportOver(base, k) }

	// The sessions connect one after the other, then the calls start,
	// each at its own instant from then on: two things never start at
	// the same instant, where the scheduler would order them.
	sessions := make([]*simSession, s.Workload.Sessions)
	for k := range sessions {
		sessions[k] = &simSession{ready: make(chan struct{})}
	}
	var t0 time.Time
	allReady := make(chan struct{})
	r.spawn(func() {
		defer close(allReady)
		for k, ss := range sessions {
			r.connectNow(ss, transport(k))
		}
		t0 = sim.Now()
	})
	out := make([]CallOutcome, len(s.Workload.Calls))
	for i, c := range s.Workload.Calls {
		out[i] = CallOutcome{Call: i, Expected: c.expected()}
		r.spawn(func() {
			<-allReady
			if !r.sleepUntil(t0.Add(time.Duration(c.StartMs) * time.Millisecond)) {
				return
			}
			ss := sessions[c.Session]
			out[i].start = sim.Now()
			defer func() { out[i].end = sim.Now() }()
			if ss.err != nil {
				out[i].Got, out[i].Detail = OutcomeError, "connect: "+ss.err.Error()
				return
			}
			cctx, cancel := r.within(time.Duration(c.durationMs())*time.Millisecond + callSlack)
			defer cancel()
			res, err := r.bugs.CallTool(cctx, ss.s, c.options())
			out[i].Got, out[i].Detail = classify(c, res, err, cctx.Err() != nil && ctx.Err() == nil)
			if res != nil {
				out[i].TaskID = res.TaskID
				out[i].tailShort = out[i].Got == OutcomeWrong && isShortTail(texts(res.Content), c.wantText())
			}
		})
	}
	if err := r.wait(); err != nil {
		return nil, r.fail(err, nd, sessions, pipe, w)
	}

	// The faults stop: from here on every call must come to its end.
	set.Stop()
	httpSet.Stop()
	dmu.Lock()
	ds := append([]decision(nil), decisions...)
	dmu.Unlock()
	var live []Finding
	restarted, ttlFault := false, false
	for _, d := range ds {
		restarted = restarted || d.verb == faults.Restart
		ttlFault = ttlFault || d.verb == faults.Rewrite || d.verb == faults.Advance
	}
	var recoveries []func()
	for i := range out {
		oc := &out[i]
		oc.Faulted = faulted(ds, s.Workload.Calls[i].Session, oc.end)
		oc.TailLost = oc.tailShort && lostResponse(ds, s.Workload.Calls[i].Session, oc.end)
		if oc.Got == oc.Expected || oc.Got == OutcomeWrong && !oc.TailLost || oc.TaskID == "" || restarted {
			continue
		}
		ss := sessions[s.Workload.Calls[i].Session]
		if ss.err != nil || ss.s.Err() != nil || lostSession(ds, s.Workload.Calls[i].Session) {
			continue
		}
		c := s.Workload.Calls[i]
		recoveries = append(recoveries, func() {
			rctx, cancel := r.within(recoverBudget)
			defer cancel()
			resp, err := ss.s.TaskResult(rctx, oc.TaskID, 0)
			oc.Recovered, _ = classifyRecovery(c, resp, err, rctx.Err() != nil && ctx.Err() == nil)
		})
	}
	// One recovery at a time, so that their messages never meet.
	r.spawn(func() {
		for _, f := range recoveries {
			f()
		}
	})
	if err := r.wait(); err != nil {
		return nil, r.fail(err, nd, sessions, pipe, w)
	}
	probe := r.connect(transport(len(sessions)))
	probeCall := Call{Tool: "slow_text", Mode: client.ModeTask, Chunks: 2, IntervalMs: 100, FailAfter: -1}
	var probeGot, probeDetail, probeTask string
	r.spawn(func() {
		<-probe.ready
		if probe.err != nil {
			probeGot, probeDetail = OutcomeError, "connect: "+probe.err.Error()
			return
		}
		cctx, cancel := r.within(recoverBudget)
		defer cancel()
		res, err := probe.s.CallTool(cctx, probeCall.options())
		probeGot, probeDetail = classify(probeCall, res, err, cctx.Err() != nil && ctx.Err() == nil)
		if res != nil {
			probeTask = res.TaskID
		}
	})
	if err := r.wait(); err != nil {
		return nil, r.fail(err, nd, append(sessions, probe), pipe, w)
	}
	// Then the probes: what the drawn workload never asks.
	unasked := &simSession{ready: make(chan struct{}), noPartial: true}
	var probeLive []Finding
	r.spawn(func() { probeLive = r.probes(probe, unasked, transport(len(sessions)+1), probeTask) })
	if err := r.wait(); err != nil {
		return nil, r.fail(err, nd, append(sessions, probe, unasked), pipe, w)
	}
	var extra []*simSession
	if httpTr != nil {
		// Then what only raw HTTP asks (probes_http.go).
		r.spawn(func() { r.httpProbes(httpTr.HTTPClient, httpTr.URL) })
		if err := r.wait(); err != nil {
			return nil, r.fail(err, nd, append(sessions, probe, unasked), pipe, w)
		}
		// And a session whose server cannot resume a stream with
		// Last-Event-ID: the client must resume with lastSeqNr.
		noRes := &simSession{ready: make(chan struct{})}
		r.spawn(func() { r.noResumeProbe(noRes, transportOver(noResumeTr, len(sessions)+2)) })
		extra = append(extra, noRes)
		if err := r.wait(); err != nil {
			return nil, r.fail(err, nd, append(sessions, probe, unasked, noRes), pipe, w)
		}
	}
	simTime := sim.Now().Sub(simStart)

	for i, oc := range out {
		live = append(live, judgeCall(s.Workload.Calls[i], oc, ttlFault)...)
	}
	if probeGot != OutcomeOK {
		live = append(live, Finding{Rule: RuleLiveness, Message: fmt.Sprintf("after the faults stopped, a new session's call ended %s: %s", probeGot, probeDetail)})
	}
	live = append(live, probeLive...)

	// The trace ends here: what closing the sessions records would come
	// from two goroutines at once (the closer and the reader).
	pipe.Annotate("end of the run: the simulator closes the sessions")
	if err := pipe.Close(); err != nil {
		return nil, err
	}
	// So does the HTTP record: a session the simulator closes (DELETE)
	// is not one the client ended before resuming its cut streams.
	var httpTrace []byte
	if r.http != nil {
		r.http.proxy.Pipeline().Annotate("end of the run: the simulator closes the sessions")
		if httpTrace, err = r.http.close(); err != nil {
			return nil, err
		}
	}
	r.close(nd, append(append(sessions, probe, unasked), extra...))
	if err := w.Close(); err != nil {
		return nil, err
	}
	v, err := judge(buf.Bytes())
	if err != nil {
		return nil, err
	}
	var unjudged []string
	if r.http != nil {
		// A stream of a session the server or the connection lost (a
		// restart, a cut or stalled connection) cannot be resumed: the
		// HTTP record judges resumption only in runs that lost none. The
		// HTTP record is the server's view: it judges CLIENT-RESUME only
		// where the client's view is the same, in runs with no fault at
		// the HTTP place (a disconnect:at=before cuts an event the server
		// sent and the client never got).
		lost := restarted
		for k := range sessions {
			lost = lost || lostSession(ds, k)
		}
		if lost {
			unjudged = append(unjudged, "HTTP-RESUME-COMPLETE", "CLIENT-RESUME")
		} else if len(httpBound) > 0 {
			unjudged = append(unjudged, "CLIENT-RESUME")
		}
		if err := judgeHTTP(v, httpTrace, unjudged); err != nil {
			return nil, err
		}
	}
	if o != nil && o.Strict {
		v.Strict()
	}
	nd.mu.Lock()
	restarts := nd.restarts
	nd.mu.Unlock()
	return &Result{Schedule: s, Verdict: v, Liveness: live, Calls: out, Applied: applied(set, httpSet), Restarts: restarts, SimTime: simTime, Trace: buf.Bytes(), HTTPTrace: httpTrace, HTTPUnjudged: unjudged}, nil
}

// applied returns the decisions of both places: the Conn place's in the
// order they were taken, then the HTTP place's.
func applied(conn, httpPlace *faults.Set) []faults.Applied {
	a, b := conn.Applied(), httpPlace.Applied()
	if len(b) == 0 {
		return a
	}
	return append(a, b...)
}

// oneHTTPStream reports whether a decision's stream is one HTTP exchange
// of the HTTP place ("post:s1/7", "get:s1/2", "request:s1/id:3").
func oneHTTPStream(stream string) bool {
	kind, _, _ := strings.Cut(stream, ":")
	return kind == faults.StreamPost || kind == faults.StreamGet || kind == faults.StreamRequest
}

// seedKey is the ChaCha8 key of one of a run's random sources.
func seedKey(seed uint64, tag byte) [32]byte {
	var k [32]byte
	binary.LittleEndian.PutUint64(k[:], seed)
	k[8] = tag
	return k
}

// faulted reports whether a fault may have changed a call of session sess
// that ended at end: one acted on the session before, or a restart or a
// clock jump acted anywhere before.
func faulted(ds []decision, sess int, end time.Time) bool {
	for _, d := range ds {
		if d.at.After(end) {
			continue
		}
		if d.session == sess || d.session < 0 || d.verb == faults.Restart || d.verb == faults.Advance {
			return true
		}
	}
	return false
}

// lostSession reports whether a fault cut or stalled the session's
// connection: then its tasks are out of reach (they belong to the
// session), and only a new session shows the server is alive. A cut of
// one HTTP stream at the HTTP place (a POST's, a GET's) leaves the
// connection, hence the session.
func lostSession(ds []decision, sess int) bool {
	for _, d := range ds {
		if d.session == sess && !oneHTTPStream(d.stream) {
			switch d.verb {
			case faults.Stall, faults.CutBefore, faults.CutMid, faults.CutAfter:
				return true
			}
		}
	}
	return false
}

// lostResponse reports whether a fault dropped a response (a message of
// a logical stream named by its id: SEP-1905's segments travel in
// responses to the call's request) of session sess before end, or held
// one back (reorder): held past the final isComplete response, a segment
// comes after the call ended, as unseen as a dropped one. Which message a
// held one is released after can depend on the order two HTTP streams of
// one instant are read in (docs/sim.md, "Determinism").
func lostResponse(ds []decision, sess int, end time.Time) bool {
	for _, d := range ds {
		if (d.verb == faults.Drop || d.verb == faults.Hold) && !d.at.After(end) && d.session == sess && strings.Contains(d.stream, "/id:") {
			return true
		}
	}
	return false
}

// isShortTail reports whether got is want without its last elements.
func isShortTail(got, want []string) bool {
	return len(got) < len(want) && slices.Equal(got, want[:len(got)])
}
