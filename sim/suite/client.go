package suite

import (
	"context"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/tasksim/tasksim/check"
	"github.com/tasksim/tasksim/mcp"
	"github.com/tasksim/tasksim/mcp/server"
	"github.com/tasksim/tasksim/mcp/streamhttp"
	"github.com/tasksim/tasksim/recorder"
	"github.com/tasksim/tasksim/sim/internal/harness"
	"github.com/tasksim/tasksim/traces"
)

// ClientScenario is one scripted-server scenario: the reference server,
// configured and misbehaving on purpose on the wire. Each misbehaviour is
// what the scenario declares it must exercise (Misbehavior.exercises): a
// scenario whose misbehaviour found nothing to act on (a client that
// never asked for a streamed result gives no segment to drop) is SKIP
// with the reason, never PASS.
type ClientScenario struct {
	Name, Summary string
	Rules         []string
	Server        server.Options
	HTTP          streamhttp.Options
	Misbehave     Misbehavior
	// Hold is how long the scripted server's tools keep their tasks
	// working (see Hold).
	Hold Hold
	// HTTPOnly scenarios are SKIP over stdio.
	HTTPOnly bool
}

// Misbehavior is what the scripted server does to the SSE events of the
// answers to tools/call (POST streams), on purpose.
type Misbehavior struct {
	// Duplicate sends every event carrying segments twice.
	Duplicate bool
	// DropSeqNr drops the first event carrying this segment (0: none).
	DropSeqNr int64
	// CutAfter ends the first POST stream's connection after this many
	// events with data, or before its response when that would come
	// sooner but not first (0: never); the stream stays resumable.
	CutAfter int
}

// ClientScenarios is the catalog of scripted-server scenarios that judge
// a client. Names are stable.
func ClientScenarios() []*ClientScenario {
	return []*ClientScenario{
		{Name: "client-duplicates", Summary: "every segment event sent twice on the stream (SEP-1905 scenarios 12, 15): the result has each once",
			Rules: []string{"CLIENT-DEDUP", "CLIENT-COMPLETE"}, Misbehave: Misbehavior{Duplicate: true}},
		{Name: "client-gap", Summary: "the event carrying segment 2 is lost (SEP-1905 scenario 7): the client fills the gap",
			Rules: []string{"CLIENT-COMPLETE", "CLIENT-RESUME", "CLIENT-DEDUP"}, Misbehave: Misbehavior{DropSeqNr: 2}},
		{Name: "client-cut-stream", Summary: "the POST stream is cut after 2 events, or before its response if that comes first, retry 300ms: the client waits, resumes and loses nothing",
			Rules: []string{"CLIENT-RESUME", "CLIENT-COMPLETE", "CLIENT-POLL-INTERVAL", "CLIENT-DEDUP"}, HTTP: streamhttp.Options{Retry: 300 * time.Millisecond}, Misbehave: Misbehavior{CutAfter: 2}, HTTPOnly: true},
		{Name: "client-poll-interval", Summary: "a server in task mode only, without status notifications, pollInterval 200ms, its task working until polled twice: the client polls no faster",
			Rules:  []string{"CLIENT-TASKS-GET-INTERVAL", "CLIENT-DEDUP", "CLIENT-COMPLETE"},
			Server: server.Options{Modes: []mcp.ResponseMode{mcp.ModeTask}, NoPartial: true, NoStatusNotifications: true, PollInterval: 200 * time.Millisecond},
			Hold:   Hold{Polls: 2}},
	}
}

// SelectClient returns the client scenarios matching patterns and none of
// skip.
func SelectClient(patterns, skip []string) ([]*ClientScenario, error) {
	all := ClientScenarios()
	stand := make([]*Scenario, len(all))
	for i, c := range all {
		stand[i] = &Scenario{Name: c.Name}
	}
	sel, err := Select(stand, patterns, skip)
	if err != nil {
		return nil, err
	}
	var out []*ClientScenario
	for _, c := range all {
		if slices.ContainsFunc(sel, func(s *Scenario) bool { return s.Name == c.Name }) {
			out = append(out, c)
		}
	}
	return out, nil
}

// RunClientSuite runs the client scenarios opts select against target.
func RunClientSuite(ctx context.Context, target ClientTarget, opts *SuiteOptions) (*SuiteResult, error) {
	o := opts.withDefaults()
	selected, err := SelectClient(o.Scenarios, o.Skip)
	if err != nil {
		return nil, err
	}
	res := &SuiteResult{Target: target.String(), Seed: o.Seed}
	names := make([]string, len(selected))
	for i, sc := range selected {
		names[i] = sc.Name
	}
	err = runEach(ctx, &o, res, names, func(i int, tracePath string) *ScenarioResult {
		return runClientScenario(ctx, selected[i], target, &o, tracePath)
	})
	if err != nil {
		return nil, err
	}
	return res, nil
}

func runClientScenario(parent context.Context, sc *ClientScenario, target ClientTarget, o *SuiteOptions, tracePath string) *ScenarioResult {
	start := time.Now()
	r := &ScenarioResult{Name: sc.Name, Summary: sc.Summary, Trace: tracePath}
	defer func() {
		r.Duration = time.Since(start)
		r.DurationMs = r.Duration.Milliseconds()
	}()
	fail := func(format string, args ...any) *ScenarioResult {
		r.Status, r.Why = check.Fail, fmt.Sprintf(format, args...)
		r.Rules = make([]RuleOutcome, len(sc.Rules))
		for i, id := range sc.Rules {
			r.Rules[i] = RuleOutcome{ID: id, Status: check.Skip, Why: "not judged: the scenario failed"}
		}
		return r
	}
	if sc.HTTPOnly && target.Stdio {
		r.Status, r.Why, r.Trace = check.Skip, "Streamable HTTP only: a stdio session has one stream, which cannot be cut and resumed", ""
		r.Rules = skipped(sc.Rules, r.Why)
		return r
	}
	h := traces.Header{Command: o.Command, Seed: o.Seed, Labels: []traces.Label{{Key: "scenario", Value: sc.Name}, {Key: "client", Value: target.String()}}}
	w, err := traces.Create(tracePath, h, nil)
	if err != nil {
		r.Trace = ""
		return fail("trace: %v", err)
	}
	// The scripted server: the reference server behind Streamable HTTP,
	// misbehaving on the wire, behind the recording proxy the client
	// talks to; or over stdio, misbehaving on the lines it sends and
	// recording them, through the relay the client starts.
	ctx, cancel := context.WithTimeout(parent, o.Timeout)
	defer cancel()
	hold := newHolder(ctx, sc.Hold)
	srvOpts := sc.Server
	if srvOpts.Tools == nil {
		srvOpts.Tools = server.BuiltinTools()
	}
	srvOpts.Tools = hold.tools(srvOpts.Tools)
	srv := server.New(&srvOpts)
	defer srv.Close()
	ep := newTruth(srv, hold)
	acts := &misbehaviorActs{}
	var (
		stdout string
		runErr error
	)
	if target.Stdio {
		p := recorder.NewPipeline(w, nil)
		spec, stop, err := serveStdioScripted(ctx, ep, sc.Misbehave, acts, p)
		if err != nil {
			p.Close()
			w.Close()
			return fail("scripted server: %v", err)
		}
		stdout, runErr = harness.RunClient(ctx, target, spec, sc.Name)
		cancel()
		stop()
		if err := p.Close(); err != nil && runErr == nil {
			runErr = fmt.Errorf("trace: %w", err)
		}
	} else {
		httpOpts := sc.HTTP
		upstream, stopUp, err := harness.ServeLoopback(misbehave(streamhttp.NewHandler(ep, &httpOpts), sc.Misbehave, acts), nil)
		if err != nil {
			w.Close()
			return fail("scripted server: %v", err)
		}
		defer stopUp()
		u, _ := url.Parse(upstream + streamhttp.DefaultPath)
		front, _, stopFront, err := harness.StartRecordingProxy(u, w)
		if err != nil {
			w.Close()
			return fail("recorder: %v", err)
		}
		stdout, runErr = harness.RunClient(ctx, target, front+streamhttp.DefaultPath, sc.Name)
		cancel()
		stopFront()
	}
	if err := w.Close(); err != nil && runErr == nil {
		runErr = fmt.Errorf("trace: %w", err)
	}
	return judgeClientRun(r, sc, clientRun{ep: ep, acts: acts, tracePath: tracePath, stdout: stdout, err: runErr}, fail)
}

// clientRun is what a client scenario's run left to judge: the scripted
// server's record, what it did on purpose, the trace, what the client
// printed and how it ended.
type clientRun struct {
	ep        *truth
	acts      *misbehaviorActs
	tracePath string
	stdout    string
	err       error
}

// judgeClientRun judges a client scenario's run into r: its trace (the
// client's view), what the client printed, and the rules the scripted
// server could not exercise.
func judgeClientRun(r *ScenarioResult, sc *ClientScenario, run clientRun, fail func(string, ...any) *ScenarioResult) *ScenarioResult {
	runErr := run.err
	v, verr := harness.JudgeTrace(run.tracePath, check.Client)
	if verr != nil {
		return fail("%v", verr)
	}
	r.Verdict = v
	if !clientConnected(run.tracePath) {
		why := "the client never connected (no initialize reached the scripted server)"
		if runErr != nil {
			why += ": " + runErr.Error()
		}
		return fail("%s", why)
	}
	missed := missedExercise(sc.Misbehave.exercises(run.acts))
	e := &Env{asserts: map[string]*RuleOutcome{}}
	if runErr != nil {
		// A client that could not finish says so; the wire says why.
		// Where the scripted server did lose or cut something on
		// purpose, not finishing is not resuming.
		r.Why = "the client failed: " + runErr.Error()
		if slices.Contains(sc.Rules, "CLIENT-RESUME") && missed == "" {
			e.Expect("CLIENT-RESUME", false, "the client did not complete the call after the loss: %v", runErr)
		}
	} else {
		judgeOutput(e, run.ep, strings.TrimRight(run.stdout, "\n"))
	}
	r.Rules = mergeOutcomes(sc.Rules, v, e)
	deferLoss(r.Rules, runErr)
	if len(r.Failed()) > 0 || runErr != nil {
		r.Status = check.Fail
	} else {
		r.Status = check.Pass
	}
	if missed != "" && runErr == nil {
		skipUnexercised(r, missed)
	}
	return r
}

// judgeOutput judges what a client that reported success printed against
// the scripted server's own record of the result it sent (not against the
// wire, which lacks what was lost on purpose): no part twice
// (CLIENT-DEDUP) and every part, once, in order (CLIENT-COMPLETE; SEP-1905,
// Client Implementation Guide › Handling Streaming Results: track, order
// and merge the segments, fill gaps, resume after a loss).
func judgeOutput(e *Env, ep *truth, got string) {
	pieces, complete, called := ep.result()
	if !called {
		e.Expect("CLIENT-COMPLETE", false, "the client reported success but called no tool of the scripted server")
		return
	}
	d := readOutput(got, pieces)
	dups := d.repeated()
	e.Expect("CLIENT-DEDUP", len(dups) == 0, "the client printed part %v of the result more than once: %q", dups, abbrev(got))
	if !complete {
		e.Expect("CLIENT-COMPLETE", false, "the client reported success before the scripted server had sent the whole result (it printed %q)", abbrev(got))
		return
	}
	why := d.incomplete(pieces, got)
	e.Expect("CLIENT-COMPLETE", why == "", "%s", why)
}

// deferLoss leaves CLIENT-COMPLETE unjudged where another rule owns the
// loss: a client that reported failure claimed no whole result, and what
// a client lost by not resuming a cut stream is CLIENT-RESUME's ("resumes
// and loses nothing").
func deferLoss(rules []RuleOutcome, runErr error) {
	var complete, resume *RuleOutcome
	for i := range rules {
		switch rules[i].ID {
		case "CLIENT-COMPLETE":
			complete = &rules[i]
		case "CLIENT-RESUME":
			resume = &rules[i]
		}
	}
	if complete == nil {
		return
	}
	why := ""
	switch {
	case runErr != nil:
		why = "not judged: the client reported failure, not a whole result"
	case complete.Status == check.Fail && resume != nil && resume.Status == check.Fail:
		why = "not judged: what the client lost follows from its CLIENT-RESUME failure"
	default:
		return
	}
	complete.Status, complete.Why, complete.Checked, complete.Findings = check.Skip, why, 0, nil
}

func abbrev(s string) string {
	if len(s) > 200 {
		return s[:200] + "…"
	}
	return s
}

// clientConnected reports whether a client scenario's trace shows the
// client's initialize: whether it connected at all.
func clientConnected(path string) bool {
	tr, err := traces.Open(path)
	if err != nil {
		return false
	}
	defer tr.Close()
	for rec, err := range tr.Records() {
		if err != nil {
			return false
		}
		if rec.RPC != nil && rec.RPC.Method == mcp.MethodInitialize && rec.Dir == traces.DirClientToServer {
			return true
		}
	}
	return false
}

// blocksText is the client output contract: the text of each text block,
// concatenated (tasksim call prints a result so).
func blocksText(blocks []mcp.ContentBlock) string {
	var b strings.Builder
	for _, c := range blocks {
		if c.Type == mcp.ContentText {
			b.WriteString(c.Text)
		}
	}
	return b.String()
}
