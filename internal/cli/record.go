package cli

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os/exec"
	"strings"

	"github.com/spf13/cobra"

	"github.com/tasksim/tasksim/internal/httplimit"
	"github.com/tasksim/tasksim/mcp/streamhttp"
	"github.com/tasksim/tasksim/recorder"
	"github.com/tasksim/tasksim/traces"
)

// RecordOptions are the flags and arguments of tasksim record.
type RecordOptions struct {
	Upstream string
	Listen   string
	Output   string
	RedactFlags
	// Front are the flags shared with serve and proxy: --allow-remote,
	// --allow-origin, --allow-host, --max-conns, --body-timeout,
	// --idle-timeout.
	Front ListenFlags
	// Command is the stdio server to run, from the arguments after "--".
	Command []string
}

// NewCmdRecord builds tasksim record.
func NewCmdRecord(st *State) *cobra.Command {
	o := &RecordOptions{}
	cmd := &cobra.Command{
		Use:   "record (--upstream URL [--listen ADDR] | -- CMD [ARGS...]) -o FILE",
		Short: "Record the traffic between any MCP client and server into a trace",
		Long: `Record an MCP conversation into a trace file, every byte passed on unchanged
and in time.

HTTP: a reverse proxy on --listen forwards every request to --upstream and
records request and response heads, JSON-RPC bodies, and every SSE event whole
(id, event, data, retry, its exact bytes and when it passed), POST and GET
streams, resumptions with Last-Event-ID, DELETE, many sessions at once, and
disconnects on either side. Point the client at the URL logged on stderr: the
listen address with the upstream's path. It stops on SIGINT/SIGTERM and closes
the trace cleanly.

stdio: runs the server command given after --, passes stdin and stdout
through, records each line with its direction (stdin c>s, stdout s>c) and
stderr's lines, passes stderr through, and exits with the server's exit code.

Secrets: Authorization, Proxy-Authorization, Cookie and Set-Cookie values are
always redacted; --redact-header, --redact-json and --redact-regexp add more.
The values of query parameters named token, access_token, api_key, key,
password, secret, sig, code (and a few more; --redact-query adds names) are
redacted in the request URLs recorded; in the --upstream URL they, and its
user and password, are written as "redacted" in the trace header and the
log (the upstream gets them: its query first, then the client's).

The proxy listens on loopback: a non-loopback --listen is refused unless
--allow-remote. Like tasksim serve it checks Origin and Host against DNS
rebinding (--allow-origin, --allow-host), caps connections (--max-conns)
and cuts slow bodies (--body-timeout, 408) and idle connections
(--idle-timeout); see docs/security.md.`,
		Example: `  tasksim record --upstream http://127.0.0.1:7070/mcp --listen 127.0.0.1:7071 -o run.trace
  tasksim call --server-cmd "tasksim record -o run.trace -- tasksim serve --stdio" --tool slow_text --mode task`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if dash := cmd.ArgsLenAtDash(); dash > 0 {
				return usagef("unexpected argument %q: put the server command after --", args[0])
			}
			o.Command = args
			return runRecord(cmd.Context(), st, o)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.Upstream, "upstream", "", "the server's Streamable HTTP endpoint URL (HTTP proxy mode)")
	f.StringVar(&o.Listen, "listen", "127.0.0.1:7071", "address the proxy listens on (HTTP proxy mode)")
	f.StringVarP(&o.Output, "output", "o", "", "trace file to write (required)")
	AddRedactFlags(f, &o.RedactFlags)
	o.Front.add(f, "--listen")
	return cmd
}

func runRecord(ctx context.Context, st *State, o *RecordOptions) error {
	if o.Output == "" {
		return usagef("-o FILE is required: the trace to write")
	}
	switch {
	case o.Upstream != "" && len(o.Command) > 0:
		return usagef("give --upstream URL (HTTP) or a server command after -- (stdio), not both")
	case o.Upstream == "" && len(o.Command) == 0:
		return usagef("give --upstream URL --listen ADDR (HTTP proxy) or -- CMD ARGS (stdio server)")
	}
	red, err := o.Redactor()
	if err != nil {
		return err
	}
	h := traces.Header{
		TasksimVersion: Version,
		Command:        append([]string{"tasksim"}, st.Args...),
	}
	if len(o.Command) > 0 {
		return recordStdio(ctx, st, o, h, red)
	}
	return recordHTTP(ctx, st, o, h, red)
}

// createTrace opens the -o file.
func createTrace(o *RecordOptions, h traces.Header, red *traces.Redactor) (*traceFile, error) {
	w, err := createTraceFile(o.Output, h, &traces.WriterOptions{Redactor: red})
	if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return nil, usagef("-o %s: cannot write the trace: %v", o.Output, err)
	}
	return w, nil
}

func recordHTTP(ctx context.Context, st *State, o *RecordOptions, h traces.Header, red *traces.Redactor) error {
	up, err := parseUpstream(o.Upstream, o.Query)
	if err != nil {
		return err
	}
	if err := o.Front.check(); err != nil {
		return err
	}
	ln, err := listen("--listen", o.Listen, o.Front.AllowRemote)
	if err != nil {
		return err
	}
	defer ln.Close()
	h.Command = up.redactArgs(h.Command)
	h.Labels = []traces.Label{{Key: "recorder", Value: "http"}, {Key: "upstream", Value: up.safe}}
	w, err := createTrace(o, h, red)
	if err != nil {
		return err
	}
	log := slog.New(slog.NewTextHandler(st.Stderr, nil))
	p, err := recorder.NewProxy(up.URL, w.Writer, &recorder.ProxyOptions{Logger: log})
	if err != nil {
		w.Close()
		return usagef("--upstream %s: %s", up.safe, strings.ReplaceAll(err.Error(), up.String(), up.safe))
	}
	log.Info("recording", "url", up.endpoint(ln), "upstream", up.safe, "trace", o.Output)
	serveErr := o.Front.serveFront(ctx, ln, p, p)
	n := w.Written()
	closeErr := w.Close()
	if serveErr != nil {
		return fmt.Errorf("record: %w", serveErr)
	}
	if closeErr != nil {
		return fmt.Errorf("record: %w", closeErr)
	}
	log.Info("recorded", "records", n, "trace", o.Output)
	return nil
}

// upstream is an --upstream URL (of record or proxy) and what the trace
// header and the log say of it.
type upstream struct {
	*url.URL
	raw  string // as given
	safe string // its user, password and secret query values redacted
}

// parseUpstream reads --upstream; redactQuery are more secret query
// parameters (--redact-query).
func parseUpstream(raw string, redactQuery []string) (*upstream, error) {
	safe := redactURL(raw, redactQuery)
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, usagef("--upstream %q: want an http:// or https:// URL with a host", safe)
	}
	return &upstream{URL: u, raw: raw, safe: safe}, nil
}

// redactArgs returns a command line with the upstream's secrets redacted.
func (u *upstream) redactArgs(args []string) []string { return redactArgs(args, u.raw, u.safe) }

// endpoint is the URL a client uses: the listen address with the
// upstream's path.
func (u *upstream) endpoint(ln net.Listener) string {
	path := u.EscapedPath()
	if path == "" {
		path = "/"
	}
	return "http://" + ln.Addr().String() + path
}

// serveFront serves h on ln for record and proxy until ctx ends, behind
// the DNS-rebinding guard (streamhttp.Guard: the upstream's own check
// cannot see the client's Host, which the proxy replaces) and within the
// limits (httplimit.Serve). p, when not nil, is the recorder h leads to:
// it records connections opening and closing, the requests still open at
// the end are cut as stopped by the recorder, and it is closed (every
// record written) before serveFront returns.
func (l *ListenFlags) serveFront(ctx context.Context, ln net.Listener, h http.Handler, p *recorder.Proxy) error {
	o := &httplimit.ServeOptions{Limits: l.limits()}
	if p != nil {
		o.ConnState, o.StopCause = p.ConnState, recorder.ErrStopped
	}
	err := httplimit.Serve(ctx, ln, streamhttp.Guard(h, l.Origins, l.Hosts), o)
	if p != nil {
		if cerr := p.Close(); err == nil {
			err = cerr
		}
	}
	return err
}

func recordStdio(ctx context.Context, st *State, o *RecordOptions, h traces.Header, red *traces.Redactor) error {
	if _, err := exec.LookPath(o.Command[0]); err != nil {
		return usagef("server command: %v", err)
	}
	cmd := exec.Command(o.Command[0], o.Command[1:]...)
	h.Labels = []traces.Label{{Key: "recorder", Value: "stdio"}}
	w, err := createTrace(o, h, red)
	if err != nil {
		return err
	}
	code, runErr := recorder.RunStdio(ctx, cmd, st.Stdin, st.Stdout, st.Stderr, w.Writer)
	closeErr := w.Close()
	switch {
	case runErr != nil:
		return fmt.Errorf("record: %w", runErr)
	case closeErr != nil:
		return fmt.Errorf("record: %w", closeErr)
	case code != 0:
		return &ExitStatusError{Code: code}
	}
	return nil
}
