package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"strings"
	"sync"

	"github.com/spf13/cobra"

	"github.com/tasksim/tasksim/faults"
	rev "github.com/tasksim/tasksim/mcp/rev20260728"
	"github.com/tasksim/tasksim/mcp/streamhttp"
	"github.com/tasksim/tasksim/recorder"
	"github.com/tasksim/tasksim/traces"
)

// ProxyOptions are the flags and arguments of tasksim proxy.
type ProxyOptions struct {
	Upstream   string
	Listen     string
	Faults     []string
	FaultsFile string
	Seed       uint64
	SeedGiven  bool
	Record     string
	// RedactFlags redact the --record trace as tasksim record does.
	RedactFlags
	// Front are the flags shared with serve and record: --allow-remote,
	// --allow-origin, --allow-host, --max-conns, --body-timeout,
	// --idle-timeout.
	Front ListenFlags
	// Command is the stdio server to run, from the arguments after "--".
	Command []string
}

// NewCmdProxy builds tasksim proxy.
func NewCmdProxy(st *State) *cobra.Command {
	o := &ProxyOptions{}
	cmd := &cobra.Command{
		Use:   "proxy (--upstream URL [--listen ADDR] | -- CMD [ARGS...]) [--fault SPEC]... [--faults FILE] [--seed N] [--record FILE]",
		Short: "Inject faults between any MCP client and server",
		Long: `A fault-injecting proxy between any MCP client and any server.

HTTP: a reverse proxy on --listen forwards every request to --upstream and
applies the faults to requests, JSON answers and each SSE event: an event
dropped, duplicated, delayed or swapped with the next, a stream cut before,
in the middle of or after an event, a stream stalled, a request answered
with an error status. stdio: runs the server command given after -- and
applies the faults to each line, both ways.

A fault is a spec, name[:key=value,...], e.g.
  drop-sse-event:method=tools/call,nth=2
  duplicate-seqnr:p=0.2
  disconnect:stream=post,after=2
Give --fault once per fault, or --faults FILE (one spec a line, or JSON
with a seed). Decisions are drawn from --seed and each message's identity:
the same seed on the same traffic takes the same decisions. Without
--seed (and no seed in the file) a random seed is chosen and printed.

With --record FILE the traffic is also recorded, as the client saw it,
with a fault record for every decision (the faults act behind the
recorder, in the same process), redacted as tasksim record redacts. On exit (SIGINT/SIGTERM, or the
server command's end) it prints how often each fault fired. With no fault
it is a transparent proxy (and recorder).

The HTTP proxy listens on loopback: a non-loopback --listen is refused
unless --allow-remote. Like tasksim serve it checks Origin and Host
against DNS rebinding (--allow-origin, --allow-host), caps connections
(--max-conns) and cuts slow bodies (--body-timeout, 408) and idle
connections (--idle-timeout). The --upstream URL's user, password and
secret query values (token, access_token, key, ...; --redact-query adds
names) are written as "redacted" in the log and the trace header; the
upstream gets them (its query first, then the client's). See
docs/security.md.

Every fault, its parameters and what it does where: docs/faults.md.

Faults:
` + faultList(),
		Example: `  tasksim proxy --upstream http://127.0.0.1:7070/mcp --listen 127.0.0.1:7071 --fault drop-sse-event:nth=2 --seed 7
  tasksim proxy --faults ci.faults --record run.trace -- tasksim serve --stdio`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if dash := cmd.ArgsLenAtDash(); dash > 0 {
				return usagef("unexpected argument %q: put the server command after --", args[0])
			}
			o.Command = args
			o.SeedGiven = cmd.Flags().Changed("seed")
			return runProxy(cmd.Context(), st, o)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.Upstream, "upstream", "", "the server's Streamable HTTP endpoint URL (HTTP proxy mode)")
	f.StringVar(&o.Listen, "listen", "127.0.0.1:7071", "address the proxy listens on (HTTP proxy mode)")
	f.StringArrayVar(&o.Faults, "fault", nil, "a fault spec, name[:key=value,...] (repeatable; see docs/faults.md)")
	f.StringVar(&o.FaultsFile, "faults", "", "a file of fault specs (one a line, or JSON {\"seed\": N, \"faults\": [...]})")
	f.Uint64Var(&o.Seed, "seed", 0, "seed of the fault decisions (default: the file's, or a random one, printed)")
	f.StringVar(&o.Record, "record", "", "also record the traffic and the faults into this trace file")
	AddRedactFlags(f, &o.RedactFlags)
	o.Front.add(f, "--listen")
	return cmd
}

// faultList lists the registered faults for --help.
func faultList() string {
	var b strings.Builder
	kinds := faults.Builtin().Kinds()
	width := 0
	for _, k := range kinds {
		width = max(width, len(k.Name))
	}
	for _, k := range kinds {
		only := ""
		if len(k.Revisions) == 1 {
			only = " (" + string(k.Revisions[0]) + " only)"
		}
		fmt.Fprintf(&b, "  %-*s %s%s\n", width, k.Name, k.Summary, only)
	}
	return strings.TrimRight(b.String(), "\n")
}

func runProxy(ctx context.Context, st *State, o *ProxyOptions) error {
	switch {
	case o.Upstream != "" && len(o.Command) > 0:
		return usagef("give --upstream URL (HTTP) or a server command after -- (stdio), not both")
	case o.Upstream == "" && len(o.Command) == 0:
		return usagef("give --upstream URL --listen ADDR (HTTP proxy) or -- CMD ARGS (stdio server)")
	}
	var up *upstream
	if o.Upstream != "" {
		var err error
		if up, err = parseUpstream(o.Upstream, o.Query); err != nil {
			return err
		}
		if err := o.Front.check(); err != nil {
			return err
		}
		if err := checkBind("--listen", o.Listen, o.Front.AllowRemote); err != nil {
			return err
		}
	}
	set, random, err := loadFaults(o)
	if err != nil {
		return err
	}
	if random {
		fmt.Fprintf(st.Stderr, "tasksim proxy: seed %d (repeat the run with --seed %d)\n", set.Seed(), set.Seed())
	}
	h := traces.Header{
		TasksimVersion: Version,
		Command:        append([]string{"tasksim"}, st.Args...),
		Seed:           set.Seed(),
	}
	// The specs go in the header's schedule, once (no "fault" labels
	// beside it: trace show printed every spec twice).
	if len(set.Specs()) > 0 {
		// Decisions are drawn per message as traffic passes, so the
		// resolved schedule is the trace's fault records.
		h.Faults = &traces.Schedule{Specs: set.Specs(), Note: "decisions are the fault records, drawn from the seed and each message's identity"}
	}
	if len(o.Command) > 0 {
		err = proxyStdio(ctx, st, o, set, h)
	} else {
		err = proxyHTTP(ctx, st, o, up, set, h)
	}
	for _, c := range set.Counts() {
		fmt.Fprintf(st.Stderr, "tasksim proxy: fault %s fired %d times\n", c.Spec, c.Fired)
	}
	if n := set.Oversize(); n > 0 {
		fmt.Fprintf(st.Stderr, "tasksim proxy: %d messages too long to take whole passed unfaulted\n", n)
	}
	return err
}

// loadFaults reads --fault and --faults into a set with its seed: --seed,
// else the file's, else a random one (random says so).
func loadFaults(o *ProxyOptions) (set *faults.Set, random bool, err error) {
	reg := faults.Builtin()
	var bound []*faults.Bound
	seed, haveSeed := o.Seed, o.SeedGiven
	if o.FaultsFile != "" {
		data, err := os.ReadFile(o.FaultsFile)
		if err != nil {
			var pe *fs.PathError
			if errors.As(err, &pe) {
				err = pe.Err
			}
			return nil, false, usagef("--faults %s: %v", o.FaultsFile, err)
		}
		file, err := faults.ParseFile(o.FaultsFile, data)
		if err != nil {
			return nil, false, usagef("--faults %v", err)
		}
		for _, s := range file.Specs {
			b, err := reg.Bind(s)
			if err != nil {
				return nil, false, usagef("--faults %s: %v", o.FaultsFile, err)
			}
			bound = append(bound, b)
		}
		if !haveSeed && file.HasSeed {
			seed, haveSeed = *file.Seed, true
		}
	}
	for _, text := range o.Faults {
		b, err := reg.Parse(text)
		if err != nil {
			return nil, false, usagef("--fault: %v", err)
		}
		bound = append(bound, b)
	}
	if !haveSeed {
		seed = rand.Uint64() >> 1 // fits the trace header's int64
	}
	return faults.NewSet(seed, bound...), !haveSeed, nil
}

// recordFaults adds every decision of set to the recording pipeline p as
// it is taken: a fault record with the structured fault, in order with the
// traffic the pipeline records.
func recordFaults(set *faults.Set, p *recorder.Pipeline) {
	set.Observe(func(a faults.Applied) {
		p.AddFault(a.TraceFault(), a.Spec+" "+a.Target.String()+": "+a.Action.String())
	})
}

// proxyHTTP runs the HTTP proxy:
//
//	client ─▶ guard, limits ─▶ [recorder.Proxy ─memory─▶] faults.Handler ─▶ ReverseProxy ─▶ upstream
//
// With --record the recorder sits next to the client, so that the trace
// holds the traffic as the client saw it; the faults act behind it in
// the same process, reached through an in-memory transport: one socket,
// and nothing reaches the faults unrecorded.
func proxyHTTP(ctx context.Context, st *State, o *ProxyOptions, up *upstream, set *faults.Set, h traces.Header) error {
	red, err := o.Redactor()
	if err != nil {
		return err
	}
	ln, err := listen("--listen", o.Listen, o.Front.AllowRemote)
	if err != nil {
		return err
	}
	defer ln.Close()
	logger := slog.New(slog.NewTextHandler(st.Stderr, nil))
	rp := &httputil.ReverseProxy{
		Rewrite:       recorder.Rewrite(up.URL, false),
		Transport:     recorder.NewTransport(),
		FlushInterval: -1,
		ErrorLog:      log.New(io.Discard, "", 0),
	}
	faulty := fullDuplex(faults.Handler(rp, set, nil))
	logger.Info("proxying", "url", up.endpoint(ln), "upstream", up.safe, "faults", len(set.Specs()), "seed", set.Seed())
	if o.Record == "" {
		return o.Front.serveFront(ctx, ln, faulty, nil)
	}

	h.Command = up.redactArgs(h.Command)
	h.Labels = append([]traces.Label{{Key: "recorder", Value: "http"}, {Key: "upstream", Value: up.safe}}, h.Labels...)
	w, err := createTrace(&RecordOptions{Output: o.Record}, h, red)
	if err != nil {
		return err
	}
	// The in-memory hop's URL names no host: the faults' ReverseProxy
	// sends every request to the upstream.
	inner := &url.URL{Scheme: "http", Host: "faults"}
	p, err := recorder.NewProxy(inner, w.Writer, &recorder.ProxyOptions{Logger: logger, Transport: streamhttp.NewMemoryTransport(faulty), KeepHost: true})
	if err != nil {
		w.Close()
		return err
	}
	recordFaults(set, p.Pipeline())
	serveErr := o.Front.serveFront(ctx, ln, p, p)
	set.Observe(nil)
	closeErr := w.Close()
	if serveErr != nil {
		return fmt.Errorf("proxy: %w", serveErr)
	}
	if closeErr != nil {
		return fmt.Errorf("proxy: %w", closeErr)
	}
	return nil
}

func proxyStdio(ctx context.Context, st *State, o *ProxyOptions, set *faults.Set, h traces.Header) error {
	if _, err := exec.LookPath(o.Command[0]); err != nil {
		return usagef("server command: %v", err)
	}
	cmd := exec.Command(o.Command[0], o.Command[1:]...)
	h.Labels = append([]traces.Label{{Key: "recorder", Value: "stdio"}}, h.Labels...)
	var w interface {
		Close() error
	}
	var tw *traces.Writer
	if o.Record != "" {
		red, err := o.Redactor()
		if err != nil {
			return err
		}
		tf, err := createTrace(&RecordOptions{Output: o.Record}, h, red)
		if err != nil {
			return err
		}
		w, tw = tf, tf.Writer
	} else {
		var err error
		tw, err = traces.NewWriter(io.Discard, h, nil) // the pipeline records; nothing keeps it
		if err != nil {
			return err
		}
		w = tw
	}
	pipe := recorder.NewPipeline(tw, nil)
	recordFaults(set, pipe)

	// client stdin ─Lines─▶ RunStdio ─▶ child; child ─▶ RunStdio ─Lines─▶ client stdout.
	// The trace holds the lines as the server saw them.
	lctx, stopLines := context.WithCancel(ctx)
	defer stopLines()
	// Both directions follow one connection's revisions: a server's line
	// has the revision of the request it answers (revision=...).
	lopts := &faults.PlaceOptions{Eras: new(rev.Eras)}
	inR, inW := io.Pipe()
	go func() {
		err := faults.Lines(lctx, inW, st.Stdin, set, faults.StreamStdin, lopts)
		inW.CloseWithError(err)
	}()
	// The server's output is queued, not piped: a stalled or cut stream
	// must not block the server, whose end ends the run.
	out := newQueue(queueMax)
	outDone := make(chan struct{})
	go func() {
		defer close(outDone)
		_ = faults.Lines(lctx, st.Stdout, out, set, faults.StreamStdout, lopts)
		out.discard()
	}()
	code, runErr := recorder.RunStdioPipeline(ctx, cmd, inR, out, st.Stderr, pipe)
	out.Close()
	stopLines()
	<-outDone
	set.Observe(nil)
	closeErr := pipe.Close()
	if err := w.Close(); closeErr == nil {
		closeErr = err
	}
	switch {
	case runErr != nil:
		return fmt.Errorf("proxy: %w", runErr)
	case closeErr != nil && o.Record != "":
		return fmt.Errorf("proxy: %w", closeErr)
	case code != 0:
		return &ExitStatusError{Code: code}
	}
	return nil
}

// queueMax bounds what the server's output queue holds for a client that
// reads slowly or not at all (a stalled stream): past it the server's
// writes wait, as they would on a pipe, so a server that floods a stalled
// client costs the proxy queueMax bytes, not all it writes.
const queueMax = 16 << 20

// queue is an in-memory pipe whose writes block only past its bound:
// Write appends, Read waits for bytes or Close. Once the reader is gone
// (discard) or the queue is closed, writes never wait.
type queue struct {
	mu      sync.Mutex
	cond    *sync.Cond
	buf     []byte
	max     int
	closed  bool
	dropped bool // the reader is gone: writes are discarded
}

func newQueue(max int) *queue {
	q := &queue{max: max}
	q.cond = sync.NewCond(&q.mu)
	return q
}

func (q *queue) Write(p []byte) (int, error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	n := 0
	for len(p) > 0 {
		for len(q.buf) >= q.max && !q.closed && !q.dropped {
			q.cond.Wait()
		}
		if q.closed {
			return n, io.ErrClosedPipe
		}
		if q.dropped {
			return n + len(p), nil
		}
		k := min(len(p), q.max-len(q.buf))
		q.buf = append(q.buf, p[:k]...)
		p, n = p[k:], n+k
		q.cond.Broadcast()
	}
	return n, nil
}

func (q *queue) Read(p []byte) (int, error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for len(q.buf) == 0 && !q.closed {
		q.cond.Wait()
	}
	if len(q.buf) == 0 {
		return 0, io.EOF
	}
	n := copy(p, q.buf)
	q.buf = q.buf[n:]
	if len(q.buf) == 0 {
		q.buf = nil
	}
	q.cond.Broadcast()
	return n, nil
}

// Close ends the stream after the bytes queued.
func (q *queue) Close() error {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.closed = true
	q.cond.Broadcast()
	return nil
}

// discard drops what is queued and what comes: the reader is gone.
func (q *queue) discard() {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.dropped, q.buf = true, nil
	q.cond.Broadcast()
}

// fullDuplex lets a server answer before the proxy has read the whole
// request body. Go's HTTP/1 server otherwise closes the body once the
// answer's head is written; the proxy's last read of it then fails, and
// the transport drops the upstream connection while the answer is still
// being copied (a server that answers as soon as it has the request's
// bytes saw its answer stream broken; recorder.Proxy does the same).
func fullDuplex(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_ = http.NewResponseController(w).EnableFullDuplex()
		h.ServeHTTP(w, r)
	})
}
