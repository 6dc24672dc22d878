package sim

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/tasksim/tasksim/check"
	"github.com/tasksim/tasksim/clock"
	"github.com/tasksim/tasksim/faults"
	"github.com/tasksim/tasksim/mcp"
	"github.com/tasksim/tasksim/mcp/client"
	"github.com/tasksim/tasksim/mcp/rev20260728/tasks"
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
	// Registry is the fault catalog the schedule's faults are read with;
	// nil is faults.Builtin().
	Registry *faults.Registry
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

// Run runs one schedule: the workload over the in-memory transport
// through the fault layer, until every call ended; then the faults stop,
// calls that did not end as expected are recovered with tasks/result, and
// a fresh session makes one more call. It returns an error only when the
// run itself could not be made (bad schedule, runtime failure); what the
// run found is in the Result.
//
// The phases are methods of simulation: setup, workload, recoverCalls,
// probeCall, probeAll, finish.
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
	reg := registry(opts.Registry)
	bound, err := checkSpecs(reg, s.Faults)
	if err != nil {
		return nil, err
	}
	if err := checkTransport(reg, bound, s.Workload.Transport); err != nil {
		return nil, err
	}
	if err := checkRevisionFaults(reg, bound, s.Workload.Revision); err != nil {
		return nil, err
	}
	var bugs Bugs
	if opts.Bugs != nil {
		bugs = *opts.Bugs
	}
	if s.Workload.stateless() && opts.Bugs != nil {
		return nil, fmt.Errorf("a %s run plants no bug yet", Revision20260728)
	}
	ctx, cancel := context.WithTimeout(ctx, opts.MaxWall)
	defer cancel()
	// The run's goroutines are those started from here on: the clock
	// moves when they all wait, whatever the rest of the process does.
	ctx, release := clock.Confine(ctx)
	defer release()

	sim := clock.NewSim(simStart)
	r := &run{ctx: ctx, sim: sim, bugs: bugs.Client}
	nd := newNode(sim, rand.NewChaCha8(seedKey(s.Seed, 1)), rand.NewChaCha8(seedKey(s.Seed, 2)), bugs, nodeServes(s))
	m := &simulation{run: r, nd: nd, s: s}
	if err := m.setup(&opts, bound, bugs); err != nil {
		return nil, err
	}
	phases := []func() error{m.workload, m.recoverCalls, m.probeCall, m.probeAll}
	if s.Workload.stateless() {
		phases = []func() error{m.workload, m.recoverCalls26, m.probeCall}
	}
	for _, phase := range phases {
		if err := phase(); err != nil {
			return nil, m.fail(err, nd, m.sessions, m.pipe, m.w)
		}
	}
	res, err := m.finish(opts.Strict)
	if err == nil {
		// Under clock.VerifyEnv: the clock never moved while something
		// outside the run was about to wake it.
		if werr := clock.Verified(ctx); werr != nil {
			return nil, fmt.Errorf("simulation: %w", werr)
		}
	}
	return res, err
}

// simulation is one run of a schedule, phase by phase.
type simulation struct {
	*run
	nd *node
	s  Schedule

	// The trace, its pipeline, and the fault places (setup).
	buf          bytes.Buffer
	w            *traces.Writer
	pipe         *recorder.Pipeline
	set, httpSet *faults.Set
	httpBound    []*faults.Bound
	dmu          sync.Mutex
	decisions    []decision

	// The transports the sessions connect over (setup): base, and over
	// HTTP the same (httpTr) and the no-resume probe's (noResumeTr).
	base               mcp.Transport
	httpTr, noResumeTr *streamhttp.ClientTransport

	// sessions are the client sessions of the run so far, in the order
	// they were made: the workload's, then the probes'. The workload's
	// are the first s.Workload.Sessions.
	sessions []*simSession
	out      []CallOutcome

	// What the faults did, once they stopped (recoverCalls).
	ds                  []decision
	restarted, ttlFault bool

	// The probes: the fresh session's call (probeCall), then what the
	// workload never asks (probeAll).
	probe                            *simSession
	probeGot, probeDetail, probeTask string
	probeLive                        []Finding
}

// setup makes the run's trace and, over HTTP, its HTTP record, the fault
// sets of the Conn and HTTP places, and the transports.
func (m *simulation) setup(opts *RunOptions, bound []*faults.Bound, bugs Bugs) error {
	s := m.s
	header := traces.Header{
		Created: m.sim.Now(), TasksimVersion: opts.Version, Command: opts.Command,
		Protocol: mcp.LatestProtocolVersion, Seed: s.Seed,
		Labels: []traces.Label{{Key: "sim", Value: "in-process"}, {Key: "transport", Value: s.Workload.Transport}},
		Faults: &traces.Schedule{Specs: s.Faults, Note: "decisions are in the fault records"},
	}
	if s.Workload.stateless() {
		// The run's revision and server, in the header (docs/sim.md).
		header.Protocol = Revision20260728
		header.Labels = append(header.Labels, traces.Label{Key: "revision", Value: Revision20260728}, traces.Label{Key: "server", Value: s.Workload.Server})
	}
	var err error
	m.w, err = traces.NewWriter(&m.buf, header, &traces.WriterOptions{Now: m.sim.Now, FlushInterval: -1})
	if err != nil {
		return err
	}
	if s.Workload.Transport == TransportHTTP && !s.Workload.stateless() {
		if m.http, err = newHTTPRecord(header, m.nd, m.sim); err != nil {
			return err
		}
	}
	m.pipe = recorder.NewPipeline(m.w, &recorder.PipelineOptions{Clock: m.sim})
	var connBound []*faults.Bound
	connBound, m.httpBound = byPlace(bound)
	m.set = faults.NewSet(s.Seed, connBound...)
	m.httpSet = faults.NewSet(s.Seed, m.httpBound...)
	m.set.Observe(m.observe)
	m.httpSet.Observe(m.observe)
	m.setupTransports(bugs)
	return nil
}

// observe records a fault decision of either place in the trace (and the
// HTTP record), and keeps when and where it acted.
func (m *simulation) observe(a faults.Applied) {
	f := a.TraceFault()
	k := sessionOf(f.Target.Stream)
	if k >= 0 {
		f.Target.Conn = uint64(k + 1)
	}
	m.pipe.AddFault(f, a.Spec)
	if m.http != nil {
		m.http.addFault(f, a.Spec)
	}
	m.dmu.Lock()
	m.decisions = append(m.decisions, decision{at: m.sim.Now(), session: k, verb: a.Action.Verb, stream: f.Target.Stream})
	m.dmu.Unlock()
}

// setupTransports makes the transport the sessions connect over: over
// HTTP the in-memory Streamable HTTP transport to the server behind the
// HTTP place, and the no-resume probe's; over stdio the stdio pipe.
func (m *simulation) setupTransports(bugs Bugs) {
	if m.s.Workload.Transport != TransportHTTP {
		m.base = stdio.Pipe(m.nd, nil)
		return
	}
	if m.s.Workload.stateless() {
		// Every message a POST of its own, to the server behind the
		// HTTP place; no HTTP record yet, no resumption to probe.
		tr := streamhttp.Pipe(httpFaults(m.nd, m.httpSet, m.sim))
		tr.Revision, tr.Clock = mcp.Revision20260728, m.sim
		m.httpTr, m.base = tr, tr
		return
	}
	hf := httpFaults(m.http.proxy, m.httpSet, m.sim)
	tr := streamhttp.Pipe(hf)
	m.httpTr = tr
	// The no-resume probe's server: the same, behind a front that
	// cannot resume (probes_http.go).
	nr := streamhttp.Pipe(&noResume{h: hf})
	nr.Clock, nr.MaxReconnects = m.sim, bugs.Client.MaxReconnects()
	m.noResumeTr = nr
	tr.Clock = m.sim
	tr.MaxReconnects = bugs.Client.MaxReconnects()
	m.base = tr
}

// transportOver returns base for session k, through the recorder (the
// server's view), the Conn place's faults and the recorder again (the
// client's view).
func (m *simulation) transportOver(base mcp.Transport, k int) mcp.Transport {
	return mcp.DecorateTransport(base, func(c mcp.Conn) mcp.Conn {
		id := uint64(k + 1)
		if m.s.Workload.Transport == TransportStdio {
			c = m.nd.stdio(c)
		}
		c = recorder.Conn(c, m.pipe, &recorder.ConnOptions{ID: id, Side: traces.SideServer, Note: "reference server"})
		c = faults.Conn(c, m.set, &faults.ConnOptions{
			Clock: m.sim, Restart: m.nd.restart, Split: split(k),
			Advance: m.jump,
		})
		return recorder.Conn(c, m.pipe, &recorder.ConnOptions{ID: id, Side: traces.SideClient, Note: "reference client"})
	})
}

// transport is the transport of session k.
func (m *simulation) transport(k int) mcp.Transport { return m.transportOver(m.base, k) }

// session adds a session to the run's, not yet connected.
func (m *simulation) session(noPartial bool) *simSession {
	ss := &simSession{ready: make(chan struct{}), noPartial: noPartial}
	m.sessions = append(m.sessions, ss)
	return ss
}

// workload runs the drawn calls until every one ended. The sessions
// connect one after the other, then the calls start, each at its own
// instant from then on: two things never start at the same instant, where
// the scheduler would order them.
func (m *simulation) workload() error {
	for range m.s.Workload.Sessions {
		m.session(false)
	}
	connect := m.connectNow
	if m.s.Workload.stateless() {
		connect = m.connectStateless // run26.go
	}
	var t0 time.Time
	allReady := make(chan struct{})
	m.spawn(func() {
		defer close(allReady)
		for k, ss := range m.sessions {
			connect(ss, m.transport(k))
		}
		t0 = m.sim.Now()
	})
	m.out = make([]CallOutcome, len(m.s.Workload.Calls))
	for i, c := range m.s.Workload.Calls {
		m.out[i] = CallOutcome{Call: i, Expected: c.expected()}
		m.spawn(func() {
			<-allReady
			if !m.sleepUntil(t0.Add(time.Duration(c.StartMs) * time.Millisecond)) {
				return
			}
			m.call(&m.out[i], c)
		})
	}
	return m.wait()
}

// call makes one call of the workload on its session (its connection,
// in a run of 2026-07-28) and says how it ended.
func (m *simulation) call(oc *CallOutcome, c Call) {
	ss := m.sessions[c.Session]
	oc.start = m.sim.Now()
	defer func() { oc.end = m.sim.Now() }()
	if ss.err != nil {
		oc.Got, oc.Detail = OutcomeError, "connect: "+ss.err.Error()
		return
	}
	cctx, cancel := m.within(time.Duration(c.durationMs())*time.Millisecond + callSlack)
	defer cancel()
	if m.s.Workload.stateless() {
		res, err := ss.sl.CallTool(cctx, c.options26())
		oc.Got, oc.Detail = classify26(c, res, err, cctx.Err() != nil && m.ctx.Err() == nil)
		if res != nil {
			oc.TaskID = res.TaskID
		}
		return
	}
	res, err := m.bugs.CallTool(cctx, ss.s, c.options())
	oc.Got, oc.Detail = classify(c, res, err, cctx.Err() != nil && m.ctx.Err() == nil)
	if res != nil {
		oc.TaskID = res.TaskID
		oc.tailShort = oc.Got == OutcomeWrong && isShortTail(texts(res.Content), c.wantText())
	}
}

// recoverCalls stops the faults: from here on every call must come to its
// end. Calls that did not end as expected are recovered with
// tasks/result, one at a time, so that their messages never meet.
func (m *simulation) recoverCalls() error {
	m.stopFaults()
	var recoveries []func()
	for i := range m.out {
		if f := m.recovery(i); f != nil {
			recoveries = append(recoveries, f)
		}
	}
	m.spawn(func() {
		for _, f := range recoveries {
			f()
		}
	})
	return m.wait()
}

// stopFaults stops both places' faults and keeps what they did.
func (m *simulation) stopFaults() {
	m.set.Stop()
	m.httpSet.Stop()
	m.dmu.Lock()
	m.ds = append([]decision(nil), m.decisions...)
	m.dmu.Unlock()
	for _, d := range m.ds {
		m.restarted = m.restarted || d.verb == faults.Restart
		m.ttlFault = m.ttlFault || d.verb == faults.Rewrite || d.verb == faults.Advance
	}
}

// recovery marks how faults touched call i and returns its recovery with
// tasks/result, or nil: it ended as expected, has no task, or its session
// or the server's state is gone.
func (m *simulation) recovery(i int) func() {
	oc := &m.out[i]
	c := m.s.Workload.Calls[i]
	oc.Faulted = faulted(m.ds, c.Session, oc.end)
	oc.TailLost = oc.tailShort && lostResponse(m.ds, c.Session, oc.end)
	if oc.Got == oc.Expected || oc.Got == OutcomeWrong && !oc.TailLost || oc.TaskID == "" || m.restarted {
		return nil
	}
	ss := m.sessions[c.Session]
	if ss.err != nil || ss.s.Err() != nil || lostSession(m.ds, c.Session) {
		return nil
	}
	return func() {
		rctx, cancel := m.within(recoverBudget)
		defer cancel()
		resp, err := ss.s.TaskResult(rctx, oc.TaskID, 0)
		oc.Recovered, _ = classifyRecovery(c, resp, err, rctx.Err() != nil && m.ctx.Err() == nil)
	}
}

// probeCall has a fresh session (in a run of 2026-07-28 a fresh
// connection) make one task call once the faults stopped: the server is
// alive after whatever the faults did.
func (m *simulation) probeCall() error {
	t := m.transport(len(m.sessions))
	probe := m.session(false)
	connect, call := m.connectNow, m.probeOnce
	if m.s.Workload.stateless() {
		connect, call = m.connectStateless, m.probeOnce26
	}
	m.spawn(func() { connect(probe, t) })
	m.probe = probe
	m.spawn(func() {
		<-probe.ready
		if probe.err != nil {
			m.probeGot, m.probeDetail = OutcomeError, "connect: "+probe.err.Error()
			return
		}
		cctx, cancel := m.within(recoverBudget)
		defer cancel()
		m.probeGot, m.probeDetail, m.probeTask = call(cctx, probe)
	})
	return m.wait()
}

// probeOnce is the probe call of a run of 2025-11-25: a task-mode
// slow_text of two chunks.
func (m *simulation) probeOnce(ctx context.Context, probe *simSession) (got, detail, taskID string) {
	c := Call{Tool: "slow_text", Mode: client.ModeTask, Chunks: 2, IntervalMs: 100, FailAfter: -1}
	res, err := probe.s.CallTool(ctx, c.options())
	got, detail = classify(c, res, err, ctx.Err() != nil && m.ctx.Err() == nil)
	if res != nil {
		taskID = res.TaskID
	}
	return got, detail, taskID
}

// probeAll asks what the drawn workload never asks (probes.go), and over
// HTTP what only raw HTTP asks and a resumption without Last-Event-ID
// (probes_http.go).
func (m *simulation) probeAll() error {
	n := len(m.sessions) // the workload's sessions and the probe
	unasked := m.session(true)
	t := m.transport(n)
	m.spawn(func() { m.probeLive = m.probes(m.probe, unasked, t, m.probeTask) })
	if err := m.wait(); err != nil {
		return err
	}
	if m.httpTr == nil {
		return nil
	}
	// Then what only raw HTTP asks (probes_http.go).
	m.spawn(func() { m.httpProbes(m.httpTr.HTTPClient, m.httpTr.URL) })
	if err := m.wait(); err != nil {
		return err
	}
	// And a session whose server cannot resume a stream with
	// Last-Event-ID: the client must resume with lastSeqNr.
	noRes := m.session(false)
	nt := m.transportOver(m.noResumeTr, n+1)
	m.spawn(func() { m.noResumeProbe(noRes, nt) })
	return m.wait()
}

// finish ends the trace and the HTTP record, closes the sessions and
// judges: the trace by the rule catalog, the calls by liveness.
func (m *simulation) finish(strict bool) (*Result, error) {
	simTime := m.sim.Now().Sub(simStart)
	live := m.liveness()

	// The trace ends here: what closing the sessions records would come
	// from two goroutines at once (the closer and the reader).
	m.pipe.Annotate("end of the run: the simulator closes the sessions")
	if err := m.pipe.Close(); err != nil {
		return nil, err
	}
	// So does the HTTP record: a session the simulator closes (DELETE)
	// is not one the client ended before resuming its cut streams.
	var httpTrace []byte
	if m.http != nil {
		m.http.proxy.Pipeline().Annotate("end of the run: the simulator closes the sessions")
		var err error
		if httpTrace, err = m.http.close(); err != nil {
			return nil, err
		}
	}
	m.close(m.nd, m.sessions)
	if err := m.w.Close(); err != nil {
		return nil, err
	}
	v, err := judge(m.buf.Bytes())
	if err != nil {
		return nil, err
	}
	unjudged, err := m.judgeHTTPRecord(v, httpTrace)
	if err != nil {
		return nil, err
	}
	if strict {
		v.Strict()
	}
	m.nd.mu.Lock()
	restarts := m.nd.restarts
	m.nd.mu.Unlock()
	return &Result{Schedule: m.s, Verdict: v, Liveness: live, Calls: m.out, Applied: applied(m.set, m.httpSet), Restarts: restarts, SimTime: simTime, Trace: m.buf.Bytes(), HTTPTrace: httpTrace, HTTPUnjudged: unjudged}, nil
}

// liveness judges how each call ended, and the probes.
func (m *simulation) liveness() []Finding {
	var live []Finding
	recovery := mcp.MethodTasksResult
	if m.s.Workload.stateless() {
		recovery = tasks.MethodGet
	}
	for i, oc := range m.out {
		live = append(live, judgeCall(m.s.Workload.Calls[i], oc, m.ttlFault, recovery)...)
	}
	if m.probeGot != OutcomeOK {
		live = append(live, Finding{Rule: RuleLiveness, Message: fmt.Sprintf("after the faults stopped, a new session's call ended %s: %s", m.probeGot, m.probeDetail)})
	}
	return append(live, m.probeLive...)
}

// judgeHTTPRecord judges the HTTP record of a run over HTTP into v, and
// returns the rules it could not judge in this run.
//
// A stream of a session the server or the connection lost (a restart, a
// cut or stalled connection) cannot be resumed: the HTTP record judges
// resumption only in runs that lost none. The HTTP record is the server's
// view: it judges CLIENT-RESUME only where the client's view is the same,
// in runs with no fault at the HTTP place (a disconnect:at=before cuts an
// event the server sent and the client never got).
func (m *simulation) judgeHTTPRecord(v *check.Verdict, httpTrace []byte) ([]string, error) {
	if m.http == nil {
		return nil, nil
	}
	var unjudged []string
	lost := m.restarted
	for k := range m.s.Workload.Sessions {
		lost = lost || lostSession(m.ds, k)
	}
	if lost {
		unjudged = append(unjudged, check.RuleHTTPResumeComplete.String(), check.RuleClientResume.String())
	} else if len(m.httpBound) > 0 {
		unjudged = append(unjudged, check.RuleClientResume.String())
	}
	return unjudged, judgeHTTP(v, httpTrace, unjudged)
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

// seedKey is the ChaCha8 key of one of a run's random sources.
func seedKey(seed uint64, tag byte) [32]byte {
	var k [32]byte
	binary.LittleEndian.PutUint64(k[:], seed)
	k[8] = tag
	return k
}
