package suite

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"net/url"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/tasksim/tasksim/check"
	"github.com/tasksim/tasksim/faults"
	"github.com/tasksim/tasksim/mcp"
	"github.com/tasksim/tasksim/mcp/client"
	"github.com/tasksim/tasksim/mcp/stdio"
	"github.com/tasksim/tasksim/mcp/streamhttp"
	"github.com/tasksim/tasksim/recorder"
	"github.com/tasksim/tasksim/sim/internal/harness"
	"github.com/tasksim/tasksim/traces"
)

// Scenario is one scripted-client scenario of the check suite.
type Scenario struct {
	Name    string
	Summary string
	// Rules are the rules the scenario exercises.
	Rules []string
	// HTTPOnly scenarios are SKIP against a stdio server.
	HTTPOnly bool
	// Run drives the target through e; an error ends the scenario as
	// FAIL (e.Skip's as SKIP).
	Run func(e *Env) error
}

// Env is what a scenario drives the target with: recorded connections,
// the tools picked, assertions by rule.
type Env struct {
	Ctx    context.Context
	target Target
	seed   uint64
	probe  *probeInfo
	tools  toolset

	httpURL string // the recording proxy's endpoint (HTTP targets)
	pipe    *recorder.Pipeline
	// hc sends every HTTP request of the scenario; each ends on cut.
	hc      *http.Client
	cutHard context.CancelFunc

	mu       sync.Mutex
	conns    uint64
	opened   []mcp.Conn // every connection of the scenario, for cut
	waiting  unanswered
	sessions []*client.Session
	applied  []string
	leftOut  []string
	asserts  map[string]*RuleOutcome
	order    []string
}

type skipError struct{ why string }

func (e *skipError) Error() string { return "skip: " + e.why }

// Skip ends the scenario as SKIP with why.
func (e *Env) Skip(format string, args ...any) error {
	return &skipError{why: fmt.Sprintf(format, args...)}
}

// LeaveOut notes a step of the scenario not done, and why: the scenario
// then reports itself partial (ScenarioResult.LeftOut), so a PASS never
// hides a step that did not run.
func (e *Env) LeaveOut(step, why string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.leftOut = append(e.leftOut, step+": "+why)
}

// Expect records one observation of rule id: it held if ok, else a
// finding with the message.
func (e *Env) Expect(id string, ok bool, format string, args ...any) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	o := e.asserts[id]
	if o == nil {
		o = &RuleOutcome{ID: id}
		e.asserts[id] = o
		e.order = append(e.order, id)
	}
	o.Checked++
	if !ok {
		o.Findings = append(o.Findings, check.Finding{Message: "scenario: " + fmt.Sprintf(format, args...)})
	}
	return ok
}

// HTTP reports whether the target is a Streamable HTTP endpoint.
func (e *Env) HTTP() bool { return e.target.HTTP() }

// URL is the endpoint a scenario talks to (through the recorder).
func (e *Env) URL() string { return e.httpURL }

// Connect opens a recorded session with the reference client and opts;
// faultSpecs, when given, put a seeded fault layer (faults.Conn) between
// the client and the recorded wire; its decisions become fault records.
func (e *Env) Connect(opts *client.Options, faultSpecs ...string) (*client.Session, error) {
	var t mcp.Transport
	e.mu.Lock()
	e.conns++
	id := e.conns
	e.mu.Unlock()
	if e.HTTP() {
		t = &streamhttp.ClientTransport{URL: e.httpURL, HTTPClient: e.httpClient()}
	} else {
		inner := e.target.Dial
		if inner == nil {
			cmd := e.target.Command
			stderr := e.target.Stderr
			if stderr == nil {
				stderr = io.Discard
			}
			inner = func() mcp.Transport {
				return &stdio.CommandTransport{Command: cmd[0], Args: cmd[1:], Stderr: stderr, GracePeriod: stdioGrace}
			}
		}
		side := traces.SideWire
		if len(faultSpecs) > 0 {
			side = traces.SideServer
		}
		t = recordedTransport{inner: inner(), pipe: e.pipe, opts: &recorder.ConnOptions{ID: id, Side: side, Note: e.target.String()}}
	}
	if len(faultSpecs) > 0 {
		bound, err := faults.Builtin().ParseAll(faultSpecs)
		if err != nil {
			return nil, err
		}
		set := faults.NewSet(e.seed+id, bound...)
		set.Observe(func(a faults.Applied) {
			e.pipe.Add(a.Record())
			e.mu.Lock()
			f := a.TraceFault()
			e.applied = append(e.applied, f.String())
			e.mu.Unlock()
		})
		t = faultTransport{inner: t, set: set}
	}
	t = trackedTransport{inner: t, track: e.track}
	s, err := client.New(opts).Connect(e.Ctx, t)
	if err != nil {
		return nil, err
	}
	e.mu.Lock()
	e.sessions = append(e.sessions, s)
	e.mu.Unlock()
	return s, nil
}

// httpClient is the client of every HTTP request of the scenario.
func (e *Env) httpClient() *http.Client {
	if e.hc == nil {
		return noRedirects
	}
	return e.hc
}

// track keeps c for cut and watches its requests.
func (e *Env) track(c mcp.Conn) mcp.Conn {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.opened = append(e.opened, c)
	return e.waiting.watch(len(e.opened), c)
}

// closeAll closes every session, all at once.
func (e *Env) closeAll() {
	e.mu.Lock()
	ss := e.sessions
	e.sessions = nil
	e.mu.Unlock()
	var wg sync.WaitGroup
	for _, s := range ss {
		wg.Go(func() { s.Close() })
	}
	wg.Wait()
}

// cut ends what the scenario still waits on: every HTTP request it began
// and every connection it opened (a stdio server is asked to end, then
// killed). It does not wait for the closes.
func (e *Env) cut() {
	if e.cutHard != nil {
		e.cutHard()
	}
	e.mu.Lock()
	cs := slices.Clone(e.opened)
	e.mu.Unlock()
	for _, c := range cs {
		go c.Close()
	}
}

type recordedTransport struct {
	inner mcp.Transport
	pipe  *recorder.Pipeline
	opts  *recorder.ConnOptions
}

func (t recordedTransport) Connect(ctx context.Context) (mcp.Conn, error) {
	c, err := t.inner.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return recorder.Conn(c, t.pipe, t.opts), nil
}

type faultTransport struct {
	inner mcp.Transport
	set   *faults.Set
}

func (t faultTransport) Connect(ctx context.Context) (mcp.Conn, error) {
	c, err := t.inner.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return faults.Conn(c, t.set, nil), nil
}

// probeInfo is what the first session learnt of the target.
type probeInfo struct {
	init  mcp.InitializeResult
	tools []mcp.Tool
}

func probeTarget(parent context.Context, target Target, timeout time.Duration) (*probeInfo, error) {
	ctx, cancel := context.WithTimeout(parent, timeout)
	defer cancel()
	hard, cut := context.WithCancel(context.Background())
	defer cut()
	var t mcp.Transport
	switch {
	case target.HTTP():
		u, err := url.Parse(target.URL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return nil, fmt.Errorf("%w: %q is not an http:// URL", ErrUnreachable, target.URL)
		}
		t = &streamhttp.ClientTransport{URL: target.URL, HTTPClient: boundedClient(hard), NoStandaloneStream: true}
	case target.Dial != nil:
		t = target.Dial()
	case len(target.Command) > 0:
		t = &stdio.CommandTransport{Command: target.Command[0], Args: target.Command[1:], Stderr: io.Discard, GracePeriod: stdioGrace}
	default:
		return nil, fmt.Errorf("%w: no target", ErrUnreachable)
	}
	var conn mcp.Conn
	t = trackedTransport{inner: t, track: func(c mcp.Conn) mcp.Conn { conn = c; return c }}
	s, err := client.New(nil).Connect(ctx, t)
	if err != nil && parent.Err() != nil {
		// Interrupted, not the target's fault.
		return nil, fmt.Errorf("%s: interrupted while waiting for the answer to initialize: %w", target, parent.Err())
	}
	if err != nil {
		var op *net.OpError
		var pe *fs.PathError
		var ee *exec.Error
		switch {
		case errors.As(err, &ee):
			return nil, fmt.Errorf("%w %s: cannot start it: %v", ErrUnreachable, target, ee)
		case errors.As(err, &pe) && pe.Op == "fork/exec":
			return nil, fmt.Errorf("%w %s: cannot start it: %v", ErrUnreachable, target, pe)
		case errors.As(err, &op):
			return nil, fmt.Errorf("%w %s: %v", ErrUnreachable, target, err)
		case ctx.Err() != nil:
			return nil, fmt.Errorf("%w %s: no answer to initialize within %s", ErrUnreachable, target, timeout)
		}
		return nil, fmt.Errorf("%w %s: not an MCP server: %v", ErrUnreachable, target, err)
	}
	// Closing (a cancel notice, the DELETE, a stdio server's exit) gets
	// closeGrace; a target that holds it longer is cut off.
	defer endWithin(closedChan, func() { cut(); go conn.Close() }, func() { s.Close() })
	p := &probeInfo{init: s.InitializeResult()}
	tools, err := s.ListTools(ctx)
	if err != nil && parent.Err() != nil {
		return nil, fmt.Errorf("%s: interrupted while waiting for the answer to tools/list: %w", target, parent.Err())
	}
	if err != nil {
		return nil, fmt.Errorf("%w %s: tools/list: %v", ErrUnreachable, target, err)
	}
	p.tools = tools
	return p, nil
}

// runGuarded runs sc, a panic becoming its error.
func runGuarded(sc *Scenario, e *Env) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("scenario panicked: %v", p)
		}
	}()
	return sc.Run(e)
}

// runScenario runs sc with a fresh recorder writing to tracePath.
func runScenario(parent context.Context, sc *Scenario, target Target, o *SuiteOptions, probe *probeInfo, tools toolset, tracePath string) *ScenarioResult {
	start := time.Now()
	r := &ScenarioResult{Name: sc.Name, Summary: sc.Summary, Trace: tracePath}
	defer func() {
		r.Duration = time.Since(start)
		r.DurationMs = r.Duration.Milliseconds()
	}()
	if sc.HTTPOnly && !target.HTTP() {
		r.Status, r.Why = check.Skip, "Streamable HTTP only; the target is a stdio server"
		r.Trace = ""
		r.Rules = skipped(sc.Rules, r.Why)
		return r
	}
	h := traces.Header{Command: o.Command, Seed: o.Seed, Labels: []traces.Label{{Key: "scenario", Value: sc.Name}, {Key: "target", Value: target.String()}}}
	w, err := traces.Create(tracePath, h, nil)
	if err != nil {
		r.Status, r.Why, r.Trace = check.Fail, fmt.Sprintf("trace: %v", err), ""
		return r
	}
	ctx, cancel := context.WithTimeout(parent, o.Timeout)
	defer cancel()
	hard, cutHard := context.WithCancel(context.Background())
	defer cutHard()
	e := &Env{Ctx: ctx, target: target, seed: o.Seed, probe: probe, tools: tools, asserts: map[string]*RuleOutcome{},
		hc: boundedClient(hard), cutHard: cutHard}
	var stopProxy func()
	if target.HTTP() {
		u, _ := url.Parse(target.URL)
		base, proxy, stop, err := harness.StartRecordingProxy(u, w)
		if err != nil {
			w.Close()
			r.Status, r.Why = check.Fail, fmt.Sprintf("recorder: %v", err)
			return r
		}
		stopProxy = stop
		pu := *u
		pu.Scheme, pu.Host = "http", strings.TrimPrefix(base, "http://")
		e.httpURL = pu.String()
		e.pipe = proxy.Pipeline()
	} else {
		e.pipe = recorder.NewPipeline(w, nil)
		stopProxy = func() { e.pipe.Close() }
	}
	// Each step past the timeout is bounded (bound.go): the
	// scenario's return, then the close of its sessions.
	var runErr, err1 error
	if endWithin(ctx.Done(), e.cut, func() { err1 = runGuarded(sc, e) }) {
		runErr = err1
	} else {
		runErr = fmt.Errorf("the scenario did not return within %s of its end, even with every connection to the target cut", 2*closeGrace)
	}
	if !endWithin(closedChan, e.cut, e.closeAll) && runErr == nil {
		runErr = fmt.Errorf("closing the scenario's sessions did not end within %s, even with every connection to the target cut", 2*closeGrace)
	}
	stopProxy()
	if err := w.Close(); err != nil && runErr == nil {
		runErr = fmt.Errorf("trace: %w", err)
	}
	e.mu.Lock() // a scenario left behind may still be at work
	r.Faults = slices.Clone(e.applied)
	r.LeftOut = slices.Clone(e.leftOut)
	e.mu.Unlock()
	v, verr := harness.JudgeTrace(tracePath, check.Server, check.Transport)
	if verr != nil && runErr == nil {
		runErr = verr
	}
	r.Verdict = v
	var skip *skipError
	if errors.As(runErr, &skip) {
		r.Status, r.Why = check.Skip, skip.why
		r.Rules = skipped(sc.Rules, r.Why)
		return r
	}
	r.Rules = mergeOutcomes(sc.Rules, v, e)
	switch {
	case runErr != nil:
		r.Status, r.Why = check.Fail, runErr.Error()
		if ctx.Err() != nil && parent.Err() == nil {
			r.Why = fmt.Sprintf("timed out after %s: %v", o.Timeout, runErr)
			if w := e.waiting.String(); w != "" {
				r.Why += "; no answer to " + w
			}
		}
	case len(r.Failed()) > 0:
		r.Status = check.Fail
	default:
		r.Status = check.Pass
		if len(r.LeftOut) > 0 {
			r.Why = "partial, left out: " + strings.Join(r.LeftOut, "; ")
		}
	}
	return r
}

func skipped(rules []string, why string) []RuleOutcome {
	out := make([]RuleOutcome, len(rules))
	for i, id := range rules {
		out[i] = RuleOutcome{ID: id, Status: check.Skip, Why: "scenario skipped: " + why}
	}
	return out
}

// mergeOutcomes joins the checker's verdict and the scenario's own
// assertions, rule by rule: the declared rules first, then any other rule
// that failed or that the scenario asserted.
func mergeOutcomes(declared []string, v *check.Verdict, e *Env) []RuleOutcome {
	ids := slices.Clone(declared)
	if v != nil {
		for _, rr := range v.Rules {
			if rr.Status == check.Fail && !slices.Contains(ids, rr.Rule.ID) {
				ids = append(ids, rr.Rule.ID)
			}
		}
	}
	e.mu.Lock()
	for _, id := range e.order {
		if !slices.Contains(ids, id) {
			ids = append(ids, id)
		}
	}
	e.mu.Unlock()
	e.mu.Lock() // a scenario left behind may still be at work
	defer e.mu.Unlock()
	out := make([]RuleOutcome, 0, len(ids))
	for _, id := range ids {
		o := RuleOutcome{ID: id, Status: check.Skip, Why: "not observed"}
		if v != nil {
			if rr, ok := v.Result(id); ok {
				o.Status, o.Checked, o.Findings, o.Why = rr.Status, rr.Checked, rr.Findings, rr.Why
			}
		}
		if a := e.asserts[id]; a != nil {
			o.Checked += a.Checked
			o.Findings = append(o.Findings, a.Findings...)
			switch {
			case len(a.Findings) > 0:
				o.Status = check.Fail
			case o.Status == check.Skip:
				o.Status, o.Why = check.Pass, ""
			}
		}
		out = append(out, o)
	}
	return out
}
