package cli

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/spf13/cobra"

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

	Origins           []string
	Hosts             []string
	AllowRemote       bool
	MaxBody           int64
	Retry             time.Duration
	MaxStreamDuration time.Duration
	SessionIdle       time.Duration

	// Ready, when set, is called with the bound address once the server
	// listens (tests use it).
	Ready func(addr string)
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
interface) is warned about unless --allow-remote; the Origin and Host checks
against DNS rebinding apply on every address (docs/security.md).

To serve an "old" server, without the streaming extensions:
  tasksim serve --modes none --partial=false`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runF(cmd.Context(), st, o)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.Addr, "addr", "127.0.0.1:7070", "HTTP listen address (endpoint /mcp)")
	f.BoolVar(&o.Stdio, "stdio", false, "serve over stdin/stdout instead of HTTP")
	f.StringVar(&o.Modes, "modes", "immediate,streaming,task", `SEP-1905 response modes offered, comma-separated, or "none" for a server without SEP-1905`)
	f.BoolVar(&o.Partial, "partial", true, "offer SEP-2679 partial notifications (tasks.streaming.partial)")
	f.BoolVar(&o.Status, "status-notifications", true, "send notifications/tasks/status on status changes")
	f.DurationVar(&o.Poll, "poll-interval", server.DefaultPollInterval, "pollInterval suggested in tasks")
	f.DurationVar(&o.TTL, "default-ttl", server.DefaultTTL, "ttl of a task whose request asks for none")
	f.DurationVar(&o.MaxTTL, "max-ttl", server.DefaultMaxTTL, "largest ttl granted")
	f.IntVar(&o.MaxTasks, "max-tasks-per-session", server.DefaultMaxTasksPerSession, "live tasks allowed per session")
	f.StringSliceVar(&o.Origins, "allow-origin", nil, `Origin header values accepted besides loopback ones ("*" for any)`)
	f.StringSliceVar(&o.Hosts, "allow-host", nil, "Host header values accepted besides loopback ones and the address a connection arrived on")
	f.BoolVar(&o.AllowRemote, "allow-remote", false, "confirm that --addr may listen on a non-loopback address (else a warning; see docs/security.md)")
	f.Int64Var(&o.MaxBody, "max-body", 4<<20, "largest POST body in bytes (413 above)")
	f.DurationVar(&o.Retry, "retry", time.Second, "SSE retry field sent on each stream (0: none)")
	f.DurationVar(&o.MaxStreamDuration, "max-stream-duration", 0, "close SSE connections after this long and let clients resume (0: never)")
	f.DurationVar(&o.SessionIdle, "session-idle-timeout", streamhttp.DefaultSessionIdle, "end a session with no request and no open stream for this long (negative: never)")
	f.StringVar(&o.LogLevel, "log-level", "info", "debug, info, warn or error (logs go to stderr)")
	return cmd
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

func runServe(ctx context.Context, st *State, o *ServeOptions) error {
	modes, noModes, err := parseModes(o.Modes)
	if err != nil {
		return err
	}
	log, err := newLogger(st, o.LogLevel)
	if err != nil {
		return err
	}
	if o.MaxTasks <= 0 || o.Poll <= 0 || o.TTL <= 0 || o.MaxTTL <= 0 || o.MaxBody <= 0 {
		return usagef("--max-tasks-per-session, --poll-interval, --default-ttl, --max-ttl and --max-body must be positive")
	}
	srv := server.New(&server.Options{
		Version:               Version,
		Modes:                 modes,
		NoModes:               noModes,
		NoPartial:             !o.Partial,
		NoStatusNotifications: !o.Status,
		DefaultTTL:            o.TTL,
		MaxTTL:                o.MaxTTL,
		PollInterval:          o.Poll,
		MaxTasksPerSession:    o.MaxTasks,
		Logger:                log,
	})
	defer srv.Close()
	if o.Stdio {
		err := stdio.Serve(ctx, srv, st.Stdin, st.Stdout, &stdio.ServerOptions{Logger: log})
		if errors.Is(err, context.Canceled) {
			return nil
		}
		return err
	}
	ln, err := net.Listen("tcp", o.Addr)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", o.Addr, err)
	}
	h := streamhttp.NewHandler(srv, &streamhttp.Options{
		AllowedOrigins:     o.Origins,
		AllowedHosts:       o.Hosts,
		MaxBodyBytes:       o.MaxBody,
		Retry:              o.Retry,
		MaxStreamDuration:  o.MaxStreamDuration,
		SessionIdleTimeout: o.SessionIdle,
		Logger:             log,
	})
	defer h.Close()
	mux := http.NewServeMux()
	mux.Handle("/mcp", h)
	hs := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	addr := ln.Addr().String()
	warnRemoteBind(log, ln.Addr(), o.AllowRemote)
	log.Info("serving", "url", "http://"+addr+"/mcp")
	if o.Ready != nil {
		o.Ready(addr)
	}
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	select {
	case err := <-errc:
		return fmt.Errorf("serve: %w", err)
	case <-ctx.Done():
	}
	h.Close()
	shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = hs.Shutdown(shutdown)
	return nil
}
