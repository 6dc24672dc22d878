package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"runtime/pprof"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/tasksim/tasksim/internal/plant"
	"github.com/tasksim/tasksim/internal/refserver"
	"github.com/tasksim/tasksim/mcp"
	"github.com/tasksim/tasksim/mcp/server"
	"github.com/tasksim/tasksim/mcp/stdio"
	"github.com/tasksim/tasksim/mcp/streamhttp"
)

// ServeOptions are the flags of tasksim serve.
type ServeOptions struct {
	Addr     string
	Stdio    bool
	Modes    string
	Partial  bool
	Status   bool
	Poll     time.Duration
	TTL      time.Duration
	MaxTTL   time.Duration
	MaxTasks int
	LogLevel string
	// CPUProfile is --cpuprofile: a Go CPU profile of the server from
	// start to exit, written when the server stops.
	CPUProfile string
	// Bug is --bug: a known bug (internal/plant) planted in the server,
	// or "list".
	Bug string
	// Revision is --revision: 2025-11-25, 2026-07-28 or both.
	Revision string
	// Tasks is --tasks: which stateless tools/call become tasks (tool,
	// required or all).
	Tasks string

	// Front are the flags shared with record and proxy: --allow-remote,
	// --allow-origin, --allow-host, --max-conns, --body-timeout,
	// --idle-timeout.
	Front             ListenFlags
	MaxBody           int64
	Retry             time.Duration
	MaxStreamDuration time.Duration
	SessionIdle       time.Duration
	Budgets           ServeBudgets

	// ReadyFD, when positive, is a file descriptor inherited from the
	// parent: once the server listens, its endpoint URL and a newline are
	// written there and the descriptor is closed (1 and 2 are the
	// command's stdout and stderr, and stay open).
	ReadyFD int
	// Ready, if set, is called with the address once the server listens
	// (tests).
	Ready func(addr string)
}

// ServeBudgets are the flags of serve's caps and byte budgets
// (docs/server.md, "Limits"; docs/security.md, "Caps and budgets").
type ServeBudgets struct {
	MaxTasks, MaxSessions, MaxSessionRequests, MaxResumes int
	MaxTaskOps                                            int
	// MaxListens and MaxListenTasks bound the 2026-07-28
	// subscriptions/listen streams (server.Options.MaxSubscriptions,
	// MaxListenTaskIDs).
	MaxListens, MaxListenTasks                   int
	TaskBytes, SessionBytes, ServerBytes         int64
	StreamBytes, SessionReplayBytes, ReplayBytes int64
	StreamRetention                              time.Duration
}

func (b *ServeBudgets) flags(f *pflag.FlagSet) {
	f.IntVar(&b.MaxTasks, "max-tasks", server.DefaultMaxTasks, "tasks stored at once, all sessions, live or finished (-32603 above)")
	f.IntVar(&b.MaxTaskOps, "max-task-ops-per-second", server.DefaultMaxTaskOpsPerSecond, "task operations (tools/call, tasks/*) per session and second (-32603 above)")
	f.IntVar(&b.MaxListens, "max-listens", server.DefaultMaxSubscriptions, "2026-07-28 subscriptions/listen streams open at once (-32603 above)")
	f.IntVar(&b.MaxListenTasks, "max-listen-tasks", server.DefaultMaxListenTaskIDs, "distinct task ids one subscriptions/listen may watch (-32602 above)")
	f.Int64Var(&b.TaskBytes, "max-task-bytes", server.DefaultMaxTaskBytes, "result bytes one task may hold (-32602 for arguments asking more)")
	f.Int64Var(&b.SessionBytes, "max-session-bytes", server.DefaultMaxSessionBytes, "result bytes the tasks of one session may hold (-32603 above)")
	f.Int64Var(&b.ServerBytes, "max-server-bytes", server.DefaultMaxServerBytes, "result bytes all tasks may hold (-32603 above)")
	f.Int64Var(&b.StreamBytes, "max-stream-bytes", streamhttp.DefaultMaxStreamBytes, "SSE replay buffer per stream, bytes (oldest events dropped above)")
	f.Int64Var(&b.SessionReplayBytes, "max-session-replay-bytes", streamhttp.DefaultMaxSessionReplayBytes, "SSE replay buffers of one session, bytes")
	f.Int64Var(&b.ReplayBytes, "max-replay-bytes", streamhttp.DefaultMaxReplayBytes, "SSE replay buffers of all sessions, bytes")
	f.DurationVar(&b.StreamRetention, "stream-retention", streamhttp.DefaultStreamRetention, "how long a finished SSE stream can be resumed (negative: until its session ends)")
	f.IntVar(&b.MaxSessions, "max-sessions", streamhttp.DefaultMaxSessions, "sessions open at once (503 above)")
	f.IntVar(&b.MaxSessionRequests, "max-session-requests", streamhttp.DefaultMaxSessionRequests, "requests of one session open at once, SSE streams included (503 above)")
	f.IntVar(&b.MaxResumes, "max-resumes-per-minute", streamhttp.DefaultMaxResumesPerMinute, "GETs with Last-Event-ID per session and minute (503 above)")
}

func (b *ServeBudgets) check() error {
	if b.MaxTasks <= 0 || b.MaxTaskOps <= 0 || b.MaxSessions <= 0 || b.MaxSessionRequests <= 0 || b.MaxResumes <= 0 ||
		b.MaxListens <= 0 || b.MaxListenTasks <= 0 ||
		b.TaskBytes <= 0 || b.SessionBytes <= 0 || b.ServerBytes <= 0 || b.StreamBytes <= 0 || b.SessionReplayBytes <= 0 ||
		b.ReplayBytes <= 0 || b.StreamRetention == 0 {
		return usagef("--max-tasks, --max-task-ops-per-second, --max-listens, --max-listen-tasks, --max-*-bytes, --max-sessions, --max-session-requests, --max-resumes-per-minute and --stream-retention must be positive")
	}
	return nil
}

// NewCmdServe builds tasksim serve. runF replaces the run function in tests.
func NewCmdServe(st *State, runF func(context.Context, *State, *ServeOptions) error) *cobra.Command {
	o := &ServeOptions{}
	if runF == nil {
		runF = runServe
	}
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Run the reference server (Streamable HTTP or stdio)",
		Long: `Run tasksim's reference MCP server: Tasks (2025-11-25) with SEP-1905 response
modes and SEP-2679 partial notifications, and built-in tools that exercise them
(slow_text, instant, sleep, task_only, echo, and the conformance fixtures).

Over HTTP the endpoint is /mcp on --addr (loopback by default). With --stdio
the server speaks newline-delimited JSON on stdin/stdout and logs on stderr.

The server has no authentication. A non-loopback --addr (":7070" binds every
interface) is refused unless --allow-remote; the Origin and Host checks
against DNS rebinding apply on every address (docs/security.md).

The endpoint serves two protocol revisions at once (--revision both): a
client that opens with initialize gets a 2025-11-25 session, one whose
requests carry the 2026-07-28 per-request _meta is served statelessly
(server/discover, tools/list and tools/call; docs/server.md). --revision
2025-11-25 or 2026-07-28 serves one, and answers the other's requests with
the version error (-32022) naming the versions served.

To serve an "old" server, without the streaming extensions:
  tasksim serve --modes none --partial=false

A program that starts tasksim serve learns when it listens, and where,
from --ready-fd N: one line with the endpoint URL, then end of file, on
its file descriptor N (a pipe the parent passes, e.g. --addr 127.0.0.1:0
--ready-fd 3). Should the server fail first, the pipe ends without a line.

--bug NAME serves a known-buggy server: the reference server with one
bug planted from outside (tasksim serve --bug list names them, with the
rule that catches each), to replay a bug trace against, or to see what
the bug looks like to a client or to tasksim check.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if o.Bug == bugList {
				return listBugs(st.Stdout, true)
			}
			return runF(cmd.Context(), st, o)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.Addr, "addr", "127.0.0.1:7070", "HTTP listen address (endpoint /mcp)")
	f.BoolVar(&o.Stdio, "stdio", false, "serve over stdin/stdout instead of HTTP")
	f.StringVar(&o.Revision, "revision", revisionBoth, `protocol revisions served: 2025-11-25 (initialize and sessions), 2026-07-28 (stateless, per-request _meta) or both, on one endpoint`)
	f.StringVar(&o.Tasks, "tasks", server.TasksByTool.String(), `which 2026-07-28 tools/call that declare the tasks extension run as tasks: tool (tools whose taskSupport is required or optional), required (only those that require one) or all`)
	f.StringVar(&o.Modes, "modes", "immediate,streaming,task", `SEP-1905 response modes offered, comma-separated, or "none" for a server without SEP-1905`)
	f.BoolVar(&o.Partial, "partial", true, "offer SEP-2679 partial notifications (tasks.streaming.partial)")
	f.BoolVar(&o.Status, "status-notifications", true, "send notifications/tasks/status on status changes")
	f.DurationVar(&o.Poll, "poll-interval", server.DefaultPollInterval, "pollInterval suggested in tasks")
	f.DurationVar(&o.TTL, "default-ttl", server.DefaultTTL, "ttl of a task whose request asks for none")
	f.DurationVar(&o.MaxTTL, "max-ttl", server.DefaultMaxTTL, "largest ttl granted")
	f.IntVar(&o.MaxTasks, "max-tasks-per-session", server.DefaultMaxTasksPerSession, "live tasks allowed per session")
	o.Front.add(f, "--addr")
	f.Int64Var(&o.MaxBody, "max-body", 4<<20, "largest POST body in bytes (413 above)")
	f.DurationVar(&o.Retry, "retry", time.Second, "SSE retry field sent in each stream's priming event (0: none; a connection closed by --max-stream-duration still ends with one)")
	f.DurationVar(&o.MaxStreamDuration, "max-stream-duration", 0, "close SSE connections after this long and let clients resume (0: never)")
	f.DurationVar(&o.SessionIdle, "session-idle-timeout", streamhttp.DefaultSessionIdle, "end a session with no request and no open stream for this long (negative: never)")
	o.Budgets.flags(f)
	f.StringVar(&o.LogLevel, "log-level", "info", "debug, info, warn or error (logs go to stderr)")
	f.StringVar(&o.CPUProfile, "cpuprofile", "", "write a Go CPU profile of the server, from start to exit, to FILE (go tool pprof)")
	f.StringVar(&o.Bug, "bug", "", `serve with this known bug planted ("list" lists them)`)
	f.IntVar(&o.ReadyFD, "ready-fd", 0, "once listening, write the endpoint URL and a newline to this inherited file descriptor and close it (0: none)")
	return cmd
}

// revisionBoth is --revision's default: a dual-era server.
const revisionBoth = "both"

// parseRevision reads the --revision flag: the revisions served.
func parseRevision(s string) ([]mcp.Revision, error) {
	if s = strings.TrimSpace(s); s == revisionBoth {
		return mcp.Revisions(), nil
	}
	r, err := mcp.ParseRevision(s)
	if err != nil {
		return nil, usagef("--revision: %q is not one of 2025-11-25, 2026-07-28, both", s)
	}
	return []mcp.Revision{r}, nil
}

// parseModes reads the --modes flag.
func parseModes(s string) ([]mcp.ResponseMode, bool, error) {
	s = strings.TrimSpace(s)
	if s == "none" || s == "" {
		return nil, true, nil
	}
	var modes []mcp.ResponseMode
	for _, p := range strings.Split(s, ",") {
		m := mcp.ResponseMode(strings.TrimSpace(p))
		if !m.IsValid() {
			return nil, false, usagef("--modes: unknown response mode %q (want immediate, streaming, task or none)", p)
		}
		modes = append(modes, m)
	}
	return modes, false, nil
}

func newLogger(st *State, level string) (*slog.Logger, error) {
	var l slog.Level
	if err := l.UnmarshalText([]byte(level)); err != nil {
		return nil, usagef("--log-level: %q is not one of debug, info, warn, error", level)
	}
	return slog.New(slog.NewTextHandler(st.Stderr, &slog.HandlerOptions{Level: l})), nil
}

func runServe(ctx context.Context, st *State, o *ServeOptions) (err error) {
	modes, noModes, err := parseModes(o.Modes)
	if err != nil {
		return err
	}
	revs, err := parseRevision(o.Revision)
	if err != nil {
		return err
	}
	policy, err := server.ParseTaskPolicy(strings.TrimSpace(o.Tasks))
	if err != nil {
		return usagef("--tasks: %v", err)
	}
	log, err := newLogger(st, o.LogLevel)
	if err != nil {
		return err
	}
	if err := checkServeFlags(o); err != nil {
		return err
	}
	bug, err := serveBug(o, log)
	if err != nil {
		return err
	}
	if o.CPUProfile != "" {
		stop, err := startServeProfile(st, o.CPUProfile)
		if err != nil {
			return err
		}
		defer func() {
			if perr := stop(); err == nil {
				err = perr
			}
		}()
	}
	sopts := &server.Options{
		Version:               Version,
		Modes:                 modes,
		NoModes:               noModes,
		NoPartial:             !o.Partial,
		NoStatusNotifications: !o.Status,
		DefaultTTL:            o.TTL,
		MaxTTL:                o.MaxTTL,
		PollInterval:          o.Poll,
		MaxTasksPerSession:    o.MaxTasks,
		MaxTasks:              o.Budgets.MaxTasks,
		MaxTaskOpsPerSecond:   o.Budgets.MaxTaskOps,
		MaxTaskBytes:          o.Budgets.TaskBytes,
		MaxSessionBytes:       o.Budgets.SessionBytes,
		MaxServerBytes:        o.Budgets.ServerBytes,
		MaxSubscriptions:      o.Budgets.MaxListens,
		MaxListenTaskIDs:      o.Budgets.MaxListenTasks,
		Logger:                log,
		Revisions:             revs,
		StatelessTasks:        policy,
	}
	if o.Stdio {
		err := refserver.ServeStdioWrapped(ctx, bug.ServerOptions(sopts), bug.Stdio, st.Stdin, st.Stdout, &stdio.ServerOptions{Logger: log})
		if errors.Is(err, context.Canceled) {
			return nil
		}
		return err
	}
	return serveHTTP(ctx, st, o, bug, sopts, log)
}

// checkServeFlags checks the limits, the budgets, the front door and the
// address before anything starts.
func checkServeFlags(o *ServeOptions) error {
	if o.MaxTasks <= 0 || o.Poll <= 0 || o.TTL <= 0 || o.MaxTTL <= 0 || o.MaxBody <= 0 {
		return usagef("--max-tasks-per-session, --poll-interval, --default-ttl, --max-ttl and --max-body must be positive")
	}
	if err := o.Budgets.check(); err != nil {
		return err
	}
	if err := o.Front.check(); err != nil {
		return err
	}
	if !o.Stdio {
		if err := checkBind("--addr", o.Addr, o.Front.AllowRemote); err != nil {
			return err
		}
	}
	if o.ReadyFD < 0 || o.ReadyFD > 0 && o.Stdio {
		return usagef("--ready-fd: want a file descriptor for the URL of an HTTP server (not with --stdio)")
	}
	return nil
}

// serveBug is the planted bug of --bug (the zero Plant: none), logged as
// a warning.
func serveBug(o *ServeOptions, log *slog.Logger) (plant.Plant, error) {
	if o.Bug == "" {
		return plant.Plant{}, nil
	}
	b, err := plantedBug(o.Bug, true)
	if err != nil {
		return plant.Plant{}, err
	}
	if o.Stdio && b.HTTPOnly() {
		return plant.Plant{}, usagef("--bug %s is a bug of the Streamable HTTP transport: not with --stdio", o.Bug)
	}
	log.Warn("serving with a planted bug", "bug", b.Name, "rule", b.Rule, "what", b.What)
	return b.Plant, nil
}

// serveHTTP serves over Streamable HTTP until ctx is done or the server
// fails, and says where it listens (the log, --ready-fd, Ready).
func serveHTTP(ctx context.Context, st *State, o *ServeOptions, bug plant.Plant, sopts *server.Options, log *slog.Logger) error {
	s, err := refserver.Listen(bug.RefServer(&refserver.Options{
		Server: sopts,
		HTTP: &streamhttp.Options{
			AllowedOrigins:     o.Front.Origins,
			AllowedHosts:       o.Front.Hosts,
			MaxBodyBytes:       o.MaxBody,
			Retry:              sseRetry(o.Retry),
			MaxStreamDuration:  o.MaxStreamDuration,
			SessionIdleTimeout: o.SessionIdle,
			Logger:             log,

			BodyReadTimeout:       o.Front.BodyTimeout,
			MaxStreamBytes:        o.Budgets.StreamBytes,
			MaxSessionReplayBytes: o.Budgets.SessionReplayBytes,
			MaxReplayBytes:        o.Budgets.ReplayBytes,
			StreamRetention:       o.Budgets.StreamRetention,
			MaxSessions:           o.Budgets.MaxSessions,
			MaxSessionRequests:    o.Budgets.MaxSessionRequests,
			MaxResumesPerMinute:   o.Budgets.MaxResumes,
		},
		Addr:        o.Addr,
		IdleTimeout: o.Front.IdleTimeout,
		MaxConns:    o.Front.MaxConns,
	}))
	if err != nil {
		return err
	}
	defer s.Close()
	if a, err := net.ResolveTCPAddr("tcp", s.Addr); err != nil || !o.Front.AllowRemote && !isLoopbackAddr(a) {
		return usagef("--addr %s listens on %s, not loopback: bind 127.0.0.1, or pass --allow-remote", o.Addr, s.Addr)
	}
	log.Info("serving", "url", s.URL)
	if o.ReadyFD > 0 {
		if err := signalReady(st, o.ReadyFD, s.URL); err != nil {
			return err
		}
	}
	if o.Ready != nil {
		o.Ready(s.Addr)
	}
	select {
	case <-s.Done():
		return s.Err()
	case <-ctx.Done():
	}
	return s.Close()
}

// sseRetry maps --retry to streamhttp.Options.Retry, where 0 means the
// default and a negative value none: --retry 0 means none.
func sseRetry(d time.Duration) time.Duration {
	if d <= 0 {
		return -1
	}
	return d
}

// signalReady writes url and a newline to the inherited file descriptor fd
// and closes it; 1 and 2 are the command's stdout and stderr, written to
// and left open.
func signalReady(st *State, fd int, url string) error {
	line := url + "\n"
	switch fd {
	case 1:
		_, err := io.WriteString(st.Stdout, line)
		return err
	case 2:
		_, err := io.WriteString(st.Stderr, line)
		return err
	}
	f := os.NewFile(uintptr(fd), "ready-fd")
	if f == nil {
		return usagef("--ready-fd %d: not a file descriptor", fd)
	}
	_, err := f.WriteString(line)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("--ready-fd %d: %w", fd, err)
	}
	return nil
}

// startServeProfile starts serve's --cpuprofile; stop ends it and commits
// the file.
func startServeProfile(st *State, name string) (stop func() error, err error) {
	if name == "-" {
		return nil, usagef("--cpuprofile: give a file (a profile is binary)")
	}
	out, err := createOutput(st, name)
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(out.w); err != nil {
		out.abort()
		return nil, fmt.Errorf("--cpuprofile: %w", err)
	}
	return func() error {
		pprof.StopCPUProfile()
		return out.close()
	}, nil
}
