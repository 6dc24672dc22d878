package load

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tasksim/tasksim/internal/h1"
	"github.com/tasksim/tasksim/mcp"
	"github.com/tasksim/tasksim/mcp/client"
	"github.com/tasksim/tasksim/mcp/streamhttp"
)

// ToolName is the tool every task calls: the reference server's
// slow_text (a server under test must offer a tool of that name and
// arguments).
const ToolName = mcp.ToolSlowText

// connectTimeout bounds opening one session.
const connectTimeout = 10 * time.Second

// LagWarning is the start lag p99 above which a run warns that the
// generator started tasks late.
const LagWarning = 10 * time.Millisecond

// ErrOverloaded means the load generator could not keep the schedule: a
// task started more than Config.MaxLag after its intended start (the
// machine, or the in-flight limit, cannot drive the rate). Run stops
// scheduling and returns its result with an error matching it.
var ErrOverloaded = errors.New("the load generator cannot keep the schedule")

// TargetError means a target cannot be loaded: unreachable, not an MCP
// server, or without the slow_text tool.
type TargetError struct {
	URL string
	Err error
}

func (e *TargetError) Error() string { return fmt.Sprintf("server %s: %v", e.URL, e.Err) }
func (e *TargetError) Unwrap() error { return e.Err }

// Target is a server to load.
type Target struct {
	// URL is its Streamable HTTP endpoint.
	URL string
	// Label says where it runs, for the report ("child process 1234",
	// "in-process", "external").
	Label string
	// CPU, when set, returns the CPU time the server's process has used;
	// Run reads it when the schedule starts and after the last task.
	CPU func() (time.Duration, error)
}

// Options are what Run needs besides the Config.
type Options struct {
	// Targets are the servers: one for every mode, or one per mode in
	// Config.Modes order.
	Targets []Target
	// Progress, when set, is called every interval from one goroutine;
	// it must not block for long.
	Progress func(Progress)
	// Observer, when set, sees every task start and end and every
	// interval's figures while the run goes on (live exporters: Prom).
	Observer Observer
	// Hlog, when set, receives the interval log (.hlog).
	Hlog io.Writer
	// Version goes into clientInfo and the result.
	Version string
	// Header is sent with every request (credentials): never written to
	// the result.
	Header http.Header
	// NetHTTP sends every request through net/http's Transport, which
	// keeps two goroutines per connection, instead of the generator's
	// own HTTP/1.1 transport (internal/h1), which keeps none. Both put
	// the same bytes on the wire; https targets use net/http's Transport
	// either way. Neither goes through a proxy.
	NetHTTP bool
}

// Run drives the load cfg describes against the targets and returns what
// it measured. It returns a result whenever the schedule started, also
// with an error: ErrOverloaded (wrapped) when the schedule could not be
// kept, ctx's error when interrupted. A *TargetError means no schedule
// started.
//
// Each task is one goroutine calling slow_text through the reference
// client and following the answer in its mode; tasks share Config.Sessions
// sessions per mode. Each measures from its intended start and records
// into one of a few shards of HDR histograms; every interval a collector
// merges the shards, writes the interval log and reports progress.
func Run(ctx context.Context, cfg Config, opts Options) (*Result, error) {
	cfg = cfg.WithDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if len(opts.Targets) != 1 && len(opts.Targets) != len(cfg.Modes) {
		return nil, fmt.Errorf("load: %d targets for %d modes: give one, or one per mode", len(opts.Targets), len(cfg.Modes))
	}
	r := newRunner(cfg, opts)
	defer r.close()
	if err := r.connect(ctx); err != nil {
		return nil, err
	}
	return r.run(ctx)
}

// runner is one run in progress.
type runner struct {
	cfg     Config
	opts    Options
	targets []*targetRun
	modes   []*modeRun
	shards  []*shard
	spares  [][]*histSet // per shard: cleared sets to swap in

	start    time.Time
	sem      chan struct{} // in-flight slots (open model)
	overload atomic.Pointer[Overload]
	stop     context.CancelFunc // ends the schedule
	draining atomic.Bool

	// The collector's, after the shards' data is merged.
	interval   []*histSet
	total      []*histSet
	totalCount []counts
	lastFlush  time.Time
	lagMax     time.Duration // the largest start lag so far
	intervals  []Interval
	hlog       *hlogWriter
	warnings   []string
}

type targetRun struct {
	Target
	http      *http.Client
	modes     []int
	cpuBefore time.Duration
	cpuErr    error
	cpu       time.Duration
}

type modeRun struct {
	spec   ModeSpec
	index  int
	target *targetRun
	// sessions (2025-11-25) or stateless connections (2026-07-28);
	// conns is either, for their wire counters.
	sessions       []*client.Session
	statelessConns []*client.Stateless
	conns          []wireConn
	// revision is the one the mode's tasks speak (ModeSpec.revision).
	revision  mcp.Revision
	stateless bool

	claimed, started, inFlight, peak atomic.Int64
	// segments and partials count as they arrive, for live rates.
	segments, partials atomic.Int64
	// The collector's, for interval figures.
	lastStarted, lastSegments, lastPartials int64
	wireBefore                              []mcp.WireStats
	wire                                    Wire
}

func newRunner(cfg Config, opts Options) *runner {
	r := &runner{cfg: cfg, opts: opts, sem: make(chan struct{}, cfg.MaxInFlight)}
	for _, t := range opts.Targets {
		r.targets = append(r.targets, &targetRun{Target: t})
	}
	for i, spec := range cfg.Modes {
		t := r.targets[0]
		if len(r.targets) > 1 {
			t = r.targets[i]
		}
		t.modes = append(t.modes, i)
		rev := spec.revision(cfg.Revision)
		r.modes = append(r.modes, &modeRun{spec: spec, index: i, target: t, revision: rev, stateless: rev.IsStateless()})
	}
	for _, t := range r.targets {
		t.http = &http.Client{Transport: newHTTPTransport(r.connsFor(t), opts.NetHTTP)}
	}
	for range numShards() {
		r.shards = append(r.shards, newShard(len(cfg.Modes)))
		r.spares = append(r.spares, newSets(len(cfg.Modes)))
	}
	r.interval = newSets(len(cfg.Modes))
	r.total = newSets(len(cfg.Modes))
	r.totalCount = make([]counts, len(cfg.Modes))
	return r
}

func newSets(n int) []*histSet {
	s := make([]*histSet, n)
	for i := range s {
		s[i] = newHistSet()
	}
	return s
}

// connsFor estimates the connections a target needs at once, to size its
// keep-alive pool: every running task may hold one (a streaming call holds
// its POST's connection to the end), plus each session's standalone
// stream.
func (r *runner) connsFor(t *targetRun) int {
	per := float64(r.cfg.Concurrency)
	if r.cfg.Concurrency == 0 {
		per = r.cfg.Rate * (r.cfg.Shape.MeanDuration().Seconds() + 1) * 1.5
	}
	n := int(per)*len(t.modes) + r.cfg.Sessions*len(t.modes) + 16
	return max(64, min(n, r.cfg.MaxInFlight+r.cfg.Sessions*len(t.modes)+16))
}

// Buffers of each of the generator's HTTP connections (net/http's default
// is 4 KiB each way). Every connection holding a stream keeps both, so
// they are a good part of the memory per stream: a request (headers and a
// JSON-RPC body of a few hundred bytes) fits the write buffer, and a
// larger one is written through; the read buffer takes in response heads
// and several small SSE events at once.
const (
	httpReadBuffer  = 2 << 10
	httpWriteBuffer = 1 << 10
)

// newHTTPTransport is an HTTP/1.1 transport whose keep-alive pool holds
// conns connections to the one host it talks to (http.DefaultTransport
// keeps 2, so thousands of streams would open and close connections all
// the time). Unless netHTTP, it is internal/h1's, which spawns no
// goroutine per connection (each open stream then costs its task's
// goroutine and its reader's, not also net/http's readLoop and
// writeLoop), with net/http's for https.
func newHTTPTransport(conns int, netHTTP bool) http.RoundTripper {
	std := newNetHTTPTransport(conns)
	if netHTTP {
		return std
	}
	return &h1.Transport{
		Dial:            std.DialContext,
		ReadBufferSize:  httpReadBuffer,
		WriteBufferSize: httpWriteBuffer,
		MaxIdleConns:    conns,
		IdleConnTimeout: std.IdleConnTimeout,
		// The generator goes to its targets directly, proxy variables
		// or not (std has no Proxy either).
		Proxy:    func(*http.Request) (*url.URL, error) { return nil, nil },
		Fallback: std,
	}
}

// newNetHTTPTransport is newHTTPTransport on net/http's Transport.
func newNetHTTPTransport(conns int) *http.Transport {
	return &http.Transport{
		ReadBufferSize:      httpReadBuffer,
		WriteBufferSize:     httpWriteBuffer,
		DialContext:         (&net.Dialer{Timeout: connectTimeout, KeepAlive: 30 * time.Second}).DialContext,
		MaxIdleConns:        conns,
		MaxIdleConnsPerHost: conns,
		IdleConnTimeout:     90 * time.Second,
		DisableCompression:  true,
		ForceAttemptHTTP2:   false,
	}
}

// wireConn is a session or a stateless connection: what the run reads
// wire counters from and closes.
type wireConn interface {
	Conn() mcp.Conn
	Close() error
}

// connect opens every session and checks each target once: it must be an
// MCP server with slow_text. Capabilities a mode relies on but the server
// lacks become warnings (the client follows the server's fallback).
func (r *runner) connect(ctx context.Context) error {
	type era struct {
		target    *targetRun
		stateless bool
	}
	checked := map[era]bool{}
	for _, m := range r.modes {
		open := r.sessionOpener(m)
		if m.stateless {
			open = r.statelessOpener(m)
		}
		for range r.cfg.Sessions {
			e := era{m.target, m.stateless}
			cctx, cancel := context.WithTimeout(ctx, connectTimeout)
			c, err := open(cctx, !checked[e])
			checked[e] = true
			cancel()
			if err != nil {
				if ctx.Err() != nil {
					return ctx.Err()
				}
				return &TargetError{URL: m.target.URL, Err: fmt.Errorf("cannot load it: %w", err)}
			}
			m.conns = append(m.conns, c)
		}
		if !m.stateless {
			r.warnCapabilities(m)
		}
	}
	return nil
}

// opener opens one connection of a mode, checking the target with it
// first when check; a connection that fails the check is closed.
type opener func(ctx context.Context, check bool) (wireConn, error)

// sessionOpener opens 2025-11-25 sessions for m.
func (r *runner) sessionOpener(m *modeRun) opener {
	c := client.New(&client.Options{Name: "tasksim-load", Version: r.opts.Version, NoPartial: !m.spec.wantsPartials()})
	return func(ctx context.Context, check bool) (wireConn, error) {
		s, err := c.Connect(ctx, &streamhttp.ClientTransport{URL: m.target.URL, HTTPClient: m.target.http, Header: r.opts.Header, NoStandaloneStream: !m.spec.standaloneStream()})
		if err == nil && check {
			err = checkTarget(ctx, s, r.cfg.Tool)
		}
		if err != nil {
			if s != nil {
				s.Close()
			}
			return nil, err
		}
		m.sessions = append(m.sessions, s)
		return s, nil
	}
}

// checkTarget checks that the server offers the tool the tasks call:
// tool, or slow_text when tool is "".
func checkTarget(ctx context.Context, s *client.Session, tool string) error {
	tools, err := s.ListTools(ctx)
	if err != nil {
		return err
	}
	return hasTool(tools, tool)
}

// hasTool checks that tools has tool, or slow_text when tool is "".
func hasTool(tools []mcp.Tool, tool string) error {
	name := tool
	if name == "" {
		name = ToolName
	}
	var names []string
	for _, t := range tools {
		if t.Name == name {
			return nil
		}
		names = append(names, t.Name)
	}
	if tool != "" {
		return fmt.Errorf("it has no tool %s (it offers: %s)", tool, strings.Join(names, ", "))
	}
	return fmt.Errorf("it has no %s tool (tasksim load calls the reference server's %s unless given --tool; run tasksim serve, or leave out --server)", ToolName, ToolName)
}

func (r *runner) warnCapabilities(m *modeRun) {
	caps := m.sessions[0].InitializeResult().Capabilities
	var modes []mcp.ResponseMode
	partial := false
	if caps.Tasks != nil {
		if caps.Tasks.Responses != nil {
			modes = caps.Tasks.Responses.Modes
		}
		partial = caps.Tasks.Streaming != nil && caps.Tasks.Streaming.Partial != nil
	}
	switch {
	case m.spec.Kind == KindSSE && !slices.Contains(modes, mcp.ModeStreaming):
		r.warn("%s: the server does not offer SEP-1905 streaming; the client follows its fallback (see answers)", m.spec.Name)
	case m.spec.Kind == KindImmediate && !slices.Contains(modes, mcp.ModeImmediate):
		r.warn("%s: the server does not offer the SEP-1905 immediate mode; the client follows its fallback (see answers)", m.spec.Name)
	case m.spec.Kind == KindPartial && !partial:
		r.warn("%s: the server does not offer SEP-2679 partial notifications; tasks run as plain task mode", m.spec.Name)
	}
}

func (r *runner) warn(format string, args ...any) {
	r.warnings = append(r.warnings, fmt.Sprintf(format, args...))
}

// close ends every session.
func (r *runner) close() {
	var wg sync.WaitGroup
	for _, m := range r.modes {
		for _, s := range m.conns {
			wg.Go(func() { _ = s.Close() })
		}
	}
	wg.Wait()
	for _, t := range r.targets {
		t.http.CloseIdleConnections()
	}
}

// run runs the schedule, waits for the tasks and builds the result.
func (r *runner) run(ctx context.Context) (*Result, error) {
	for _, m := range r.modes {
		m.wireBefore = make([]mcp.WireStats, len(m.conns))
		for i, s := range m.conns {
			m.wireBefore[i] = transportStats(s)
		}
	}
	for _, t := range r.targets {
		if t.CPU != nil {
			t.cpuBefore, t.cpuErr = t.CPU()
		}
	}
	clientBefore, clientErr := ProcessCPU(0)

	r.start = time.Now()
	r.lastFlush = r.start
	if r.opts.Hlog != nil {
		r.hlog = newHlogWriter(r.opts.Hlog, r.start, r.hlogComment())
	}
	schedCtx, stop := context.WithCancel(ctx)
	r.stop = stop
	defer stop()

	collectorDone := make(chan struct{})
	collectorStop := make(chan struct{})
	go r.collect(collectorStop, collectorDone)

	var tasks sync.WaitGroup
	if r.cfg.Concurrency > 0 {
		r.closedSchedule(schedCtx, ctx, &tasks)
	} else {
		r.openSchedule(schedCtx, ctx, &tasks)
	}
	scheduleEnd := time.Now()
	r.draining.Store(true)
	tasks.Wait()
	end := time.Now()
	close(collectorStop)
	<-collectorDone

	for _, t := range r.targets {
		if t.CPU != nil && t.cpuErr == nil {
			var after time.Duration
			after, t.cpuErr = t.CPU()
			t.cpu = after - t.cpuBefore
		}
	}
	for _, m := range r.modes {
		for i, s := range m.conns {
			d := transportStats(s).Sub(m.wireBefore[i])
			m.wire.HTTPRequests += d.HTTPRequests
			m.wire.BytesSent += d.BytesSent
			m.wire.BytesReceived += d.BytesReceived
		}
	}
	res := r.result(scheduleEnd, end, ctx.Err() != nil)
	if clientAfter, err := ProcessCPU(0); err == nil && clientErr == nil {
		res.ClientCPUMs = ms(clientAfter - clientBefore)
	}
	res.ClientPeakRSS, _ = PeakRSS(0)
	if r.hlog != nil && r.hlog.err != nil {
		return res, r.hlog.err
	}
	switch {
	case res.Overload != nil:
		o := res.Overload
		return res, fmt.Errorf("%w: a task started %s late (bound %s), %s into the run: %s",
			ErrOverloaded, FormatMs(o.LagMs), FormatMs(o.MaxLagMs), FormatMs(o.AtMs), o.Reason)
	case ctx.Err() != nil:
		return res, ctx.Err()
	}
	return res, nil
}

func transportStats(s wireConn) mcp.WireStats {
	if st, ok := mcp.ConnAs[mcp.StatsReporter](s.Conn()); ok {
		return st.Stats()
	}
	return mcp.WireStats{}
}

func (r *runner) hlogComment() string {
	names := make([]string, len(r.modes))
	for i, m := range r.modes {
		names[i] = m.spec.Name
	}
	load := fmt.Sprintf("rate=%g/s per mode", r.cfg.Rate)
	if r.cfg.Concurrency > 0 {
		load = fmt.Sprintf("concurrency=%d per mode", r.cfg.Concurrency)
	}
	return fmt.Sprintf("[tasksim load %s: modes=%s %s seed=%d; tags MODE.METRIC; latencies in ns, requests in requests]",
		r.opts.Version, strings.Join(names, ","), load, r.cfg.Seed)
}
