package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/tasksim/tasksim/check"
	"github.com/tasksim/tasksim/faults"
	"github.com/tasksim/tasksim/sim/replay"
	"github.com/tasksim/tasksim/timeline"
	"github.com/tasksim/tasksim/traces"
)

// ReplayOptions are the flags of tasksim replay.
type ReplayOptions struct {
	Server    string
	ServerCmd string
	ClientCmd string
	Faults    []string
	NoFaults  bool
	Seed      uint64
	SeedGiven bool
	Speed     string
	Record    string
	JSON      string
	HTML      string
	Wait      time.Duration
	Timeout   time.Duration
}

// NewCmdReplay builds tasksim replay.
func NewCmdReplay(st *State) *cobra.Command {
	o := &ReplayOptions{}
	cmd := &cobra.Command{
		Use:   "replay FILE (--server URL | --server-cmd \"CMD ARGS\" | --client-cmd \"CMD ARGS\")",
		Short: "Replay a trace against a server (or a client): the first divergence, and a verdict",
		Long: `Replay a recorded trace. With --server URL (Streamable HTTP) or --server-cmd
"CMD ARGS" (stdio, one process per recorded connection), the client half of
the trace is sent to the server, request by request in the recorded order;
each recorded answer is awaited on its stream and compared structurally
with the live one. What differs from run to run by design is mapped or
ignored: session ids, task ids and SSE event ids (a request that used a
recorded id sends the live one), createdAt, lastUpdatedAt and other
timestamps, a non-terminal task status, pollInterval. A SEP-1905 streaming
task's segments are compared merged by seqNr over every message that
carried them (initial response, SSE events, tasks/result), since how a
server splits them is timing. The first difference is reported with both sides: the record
number of the recorded message, its stream, the JSON path that differs.

With --client-cmd "CMD ARGS" the server half is served to a client: CMD
ARGS URL runs (URL also in TASKSIM_SERVER_URL, as tasksim check
--client-cmd does), each of its requests gets the recorded answer of the
same method in the same order (its request id and the ids it sent mapped),
and the client is judged by the rule catalog's client rules; a request
with no recorded counterpart, or params that differ, is the divergence.

The trace's recorded faults (its header's --fault specs, with its seed)
act again, on the same messages; --no-faults leaves them out, --fault adds
more (Streamable HTTP only). --speed paces the requests: 1 as recorded
(default), 4 four times faster, max as fast as the answers come.

The replay is recorded as a new trace (--record FILE; otherwise a
temporary file, removed unless something failed) and judged by the rule
catalog, as tasksim trace check would; --html FILE draws it as a
timeline, the divergence as a note. --record FILE is written beside FILE
(FILE.partial-N) and renamed over FILE once the target was reached and
something recorded, a replay cut short by --timeout or an interrupt
included; a target that cannot be reached leaves FILE as it was.

Exit codes: 0 no divergence and no rule failed, 1 a divergence or a rule
failed, 2 bad input (not a trace, a trace with nothing to replay, bad
flags), 3 the target cannot be reached or started.`,
		Example: `  tasksim replay bug.trace --server http://127.0.0.1:7070/mcp
  tasksim replay run.trace --server-cmd "tasksim serve --stdio" --speed max
  tasksim replay run.trace --server http://127.0.0.1:7070/mcp --no-faults --fault drop-sse-event:nth=2 --record replay.trace
  tasksim replay run.trace --client-cmd "tasksim call --tool slow_text --mode streaming --server"`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.SeedGiven = cmd.Flags().Changed("seed")
			return runReplay(cmd.Context(), st, o, args[0])
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.Server, "server", "", "Streamable HTTP endpoint URL of the server to replay against")
	f.StringVar(&o.ServerCmd, "server-cmd", "", "command that runs the stdio server to replay against (quoted words allowed)")
	f.StringVar(&o.ClientCmd, "client-cmd", "", "serve the trace's server half to this client command, the URL appended as its last argument")
	f.StringArrayVar(&o.Faults, "fault", nil, "add a fault spec (repeatable; tasksim proxy --help lists them)")
	f.BoolVar(&o.NoFaults, "no-faults", false, "leave out the faults the trace was recorded with")
	f.Uint64Var(&o.Seed, "seed", 0, "seed of the fault decisions (default: the trace's)")
	f.StringVar(&o.Speed, "speed", "1", "pace of the requests: 1 as recorded, k k times faster, max as fast as the answers come")
	f.StringVar(&o.Record, "record", "", "write the replay's trace to this file")
	f.StringVar(&o.JSON, "json", "", "also write the result as JSON to this file (- for stdout)")
	f.StringVar(&o.HTML, "html", "", "also write the replay's timeline (its trace, its verdict, the divergence) to this HTML file")
	f.DurationVar(&o.Wait, "wait", replay.DefaultReplayWait, "how long to wait for one recorded answer before calling it missing")
	f.DurationVar(&o.Timeout, "timeout", 10*time.Minute, "bound on the whole replay")
	return cmd
}

func runReplay(ctx context.Context, st *State, o *ReplayOptions, path string) error {
	if ctx == nil {
		ctx = context.Background()
	}
	speed, err := replay.ParseSpeed(o.Speed)
	if err != nil {
		return usagef("--speed: %v", err)
	}
	if o.Wait <= 0 || o.Timeout <= 0 {
		return usagef("--wait and --timeout must be positive")
	}
	target, clientCmd, err := replayTarget(o)
	if err != nil {
		return err
	}
	if _, err := faults.Builtin().ParseAll(o.Faults); err != nil {
		return usagef("--fault: %v", err)
	}
	if err := checkRecordPath(o.Record); err != nil {
		return err
	}
	r, err := openTrace(st, path)
	if err != nil {
		return err
	}
	defer r.Close()
	ctx, cancel := context.WithTimeout(ctx, o.Timeout)
	defer cancel()
	ro := &replay.ReplayOptions{
		Speed: speed, Faults: o.Faults, NoFaults: o.NoFaults, Seed: o.Seed, HasSeed: o.SeedGiven,
		Record: o.Record, Wait: o.Wait, Command: append([]string{"tasksim"}, st.Args...),
	}
	var res *replay.ReplayResult
	if clientCmd != nil {
		res, err = replay.ReplayClient(ctx, r, clientCmd, ro)
	} else {
		res, err = replay.Replay(ctx, r, target, ro)
	}
	if err != nil {
		return replayError(path, err)
	}
	return reportReplay(st, o, path, res)
}

// replayTarget is what the replay runs against: exactly one of --server
// and --server-cmd (target), or --client-cmd (clientCmd).
func replayTarget(o *ReplayOptions) (target replay.Target, clientCmd []string, err error) {
	n := 0
	for _, s := range []string{o.Server, o.ServerCmd, o.ClientCmd} {
		if s != "" {
			n++
		}
	}
	if n != 1 {
		return target, nil, usagef("give one of --server URL, --server-cmd \"CMD ARGS\" or --client-cmd \"CMD ARGS\"")
	}
	switch {
	case o.Server != "":
		if !strings.HasPrefix(o.Server, "http://") && !strings.HasPrefix(o.Server, "https://") {
			return target, nil, usagef("--server %q: want an http:// or https:// URL", o.Server)
		}
		target.URL = o.Server
	case o.ServerCmd != "":
		words, err := splitCommand(o.ServerCmd)
		if err != nil || len(words) == 0 {
			return target, nil, usagef("--server-cmd: %v", orEmpty(err))
		}
		target.Command, target.Stderr = words, io.Discard
	default:
		words, err := splitCommand(o.ClientCmd)
		if err != nil || len(words) == 0 {
			return target, nil, usagef("--client-cmd: %v", orEmpty(err))
		}
		clientCmd = words
	}
	return target, clientCmd, nil
}

// reportReplay prints the replay, writes --json and --html, drops the
// replay's own trace when it passed and nobody asked for it (--record),
// and maps a divergence or a failed rule to a finding.
func reportReplay(st *State, o *ReplayOptions, path string, res *replay.ReplayResult) error {
	if res.Cut != "" {
		fmt.Fprintf(st.Stderr, "tasksim: warning: %s: %s; replayed up to its last whole record\n", path, res.Cut)
	}
	if err := writeReplayText(st.Stdout, path, res); err != nil {
		return fmt.Errorf("write: %w", err)
	}
	if o.JSON != "" {
		err := writeOutput(st, o.JSON, func(w io.Writer) error {
			return writeJSON(w, map[string]any{"schema": "tasksim.replay/v1", "file": path, "failed": res.Failed(), "result": res})
		})
		if err != nil {
			return fmt.Errorf("--json %s: %w", o.JSON, err)
		}
	}
	if o.HTML != "" {
		if err := writeReplayTimeline(st, o.HTML, path, res); err != nil {
			return err
		}
	}
	if o.Record == "" && !res.Failed() {
		os.Remove(res.Trace)
	}
	if res.Failed() {
		what := []string{}
		if res.Divergence != nil {
			what = append(what, fmt.Sprintf("diverged at record %d", res.Divergence.Record))
		}
		if res.Verdict != nil && res.Verdict.Failed() {
			what = append(what, "rules failed: "+strings.Join(failedRules(res), ", "))
		}
		return &FindingsError{Summary: "replay of " + path + ": " + strings.Join(what, "; ")}
	}
	return nil
}

// writeReplayTimeline writes the --html page of a replay: its own trace
// with its verdict (whose findings are highlighted), the divergence as a
// note. The divergence names a record of the replayed trace, not of this
// one, so it is a note rather than a highlighted row.
func writeReplayTimeline(st *State, out, path string, res *replay.ReplayResult) error {
	data, err := os.ReadFile(res.Trace)
	if err != nil {
		return fmt.Errorf("--html %s: %w", out, err)
	}
	title := "replay of " + path + " against " + res.Target
	run, err := timeline.FromTrace(data, title, nil)
	if err != nil {
		return fmt.Errorf("--html %s: %w", out, err)
	}
	run.Verdict = res.Verdict
	run.Notes = append(run.Notes, fmt.Sprintf("sent %d, compared %d recorded answers (speed %s)", res.Sent, res.Compared, res.Speed))
	if d := res.Divergence; d != nil {
		run.Notes = append(run.Notes, strings.TrimSuffix(strings.SplitN(d.String(), "\n", 2)[0], "\n"),
			"recorded: "+abbreviateLine(d.Recorded), "live: "+abbreviateLine(d.Live))
	} else {
		run.Notes = append(run.Notes, "no divergence")
	}
	for _, f := range res.Faults {
		run.Notes = append(run.Notes, "fault: "+f)
	}
	return writeTimeline(st, out, "tasksim replay: "+path, []*timeline.Run{run})
}

func abbreviateLine(s string) string {
	s = strings.TrimSpace(s)
	if len(s) > 400 {
		return s[:400] + "…"
	}
	return s
}

// checkRecordPath refuses a --record path no trace can be written to (a
// directory, a path in a directory that does not exist) before the replay
// starts.
func checkRecordPath(path string) error {
	if path == "" {
		return nil
	}
	return checkOutPath("--record", path)
}

func orEmpty(err error) error {
	if err == nil {
		return errors.New("empty command")
	}
	return err
}

// replayError maps a replay's error: bad input (the trace, a fault spec)
// is a usage error; an unreachable target or an I/O error a runtime one.
func replayError(path string, err error) error {
	var c *traces.CorruptError
	switch {
	case errors.Is(err, context.Canceled):
		return err
	case replay.IsReplayInputError(err) || errors.As(err, &c):
		return &UsageError{Err: fmt.Errorf("%s: %w", path, err)}
	case errors.Is(err, replay.ErrUnreachable):
		return err
	}
	return fmt.Errorf("replay %s: %w", path, err)
}

func failedRules(res *replay.ReplayResult) []string {
	var ids []string
	for _, rr := range res.Verdict.Rules {
		if rr.Status == check.Fail {
			ids = append(ids, rr.Rule.ID)
		}
	}
	return ids
}

func writeReplayText(w io.Writer, path string, res *replay.ReplayResult) error {
	var b strings.Builder
	fmt.Fprintf(&b, "tasksim replay %s against %s (speed %s", path, res.Target, res.Speed)
	if len(res.Faults) > 0 {
		fmt.Fprintf(&b, ", faults %s, seed %d", strings.Join(res.Faults, " "), res.Seed)
	}
	b.WriteString(")\n")
	fmt.Fprintf(&b, "sent %d, compared %d recorded answers\n", res.Sent, res.Compared)
	if res.Divergence != nil {
		b.WriteString(res.Divergence.String())
	} else {
		b.WriteString("no divergence\n")
	}
	fmt.Fprintf(&b, "\nverdict of the replay (trace %s):\n", res.Trace)
	if _, err := io.WriteString(w, b.String()); err != nil {
		return err
	}
	if res.Verdict == nil {
		return nil
	}
	return res.Verdict.WriteText(w)
}
