package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"github.com/tasksim/tasksim/mcp"
	"github.com/tasksim/tasksim/mcp/client"
	"github.com/tasksim/tasksim/mcp/stdio"
	"github.com/tasksim/tasksim/mcp/streamhttp"
)

// CallOptions are the flags of tasksim call.
type CallOptions struct {
	Server      string
	ServerCmd   string
	Tool        string
	Args        string
	Mode        string
	TTL         time.Duration
	Poll        time.Duration
	CancelAfter time.Duration
	Timeout     time.Duration
	JSON        bool
	NoPartial   bool
	NoModes     bool
	// Revision is 2025-11-25, 2026-07-28 or auto (call_stateless.go).
	Revision string
	// Answer and AnswersFile answer input requests (2026-07-28).
	Answer      []string
	AnswersFile string
	// Listen follows the task by push, subscriptions/listen
	// (2026-07-28 only).
	Listen bool
	// legacy says a flag only 2025-11-25 has was given: --revision auto
	// then speaks 2025-11-25 without asking the server.
	legacy bool
	HeaderOptions
}

// NewCmdCall builds tasksim call.
func NewCmdCall(st *State, runF func(context.Context, *State, *CallOptions) error) *cobra.Command {
	o := &CallOptions{}
	if runF == nil {
		runF = runCall
	}
	cmd := &cobra.Command{
		Use:   "call --server URL | --server-cmd \"CMD ARGS\" --tool NAME",
		Short: "Call one tool with the reference client, in any response mode",
		Long: `Call one tool with tasksim's reference client and follow the answer to its end.

Modes:
  plain      no task
  immediate  task with responseModes [immediate] (SEP-1905 Case 1, or its fallback)
  streaming  task with responseModes [streaming]: segments by seqNr, resumed and merged
  task       task with responseModes [task]: tasks/get at the server's pollInterval, then tasks/result
  poll       task mode by polling alone (--poll-interval replaces the server's interval)
  partial    task mode following SEP-2679 partial notifications, then tasks/result

On a terminal, streamed text is printed as it arrives; otherwise the final
result's text is printed. --json prints the result and the call's timeline.

Exit codes: 0 the result arrived (or the call was cancelled as asked), 1 the
tool reported an error or the result is incomplete (task expired or lost),
2 usage or bad input, 3 the server could not be reached or broke the protocol.`,
		Example: `  tasksim call --server http://127.0.0.1:7070/mcp --tool slow_text --args '{"chunks":5}' --mode streaming
  tasksim call --server-cmd "tasksim serve --stdio" --tool sleep --mode task --json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			for _, name := range []string{"mode", "ttl", "no-partial", "no-modes"} {
				o.legacy = o.legacy || cmd.Flags().Changed(name)
			}
			return runF(cmd.Context(), st, o)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.Server, "server", "", "Streamable HTTP endpoint URL")
	f.StringVar(&o.ServerCmd, "server-cmd", "", "command that runs a stdio server (quoted words allowed)")
	AddHeaderFlags(f, &o.HeaderOptions)
	f.StringVar(&o.Tool, "tool", "", "tool name (required)")
	f.StringVar(&o.Args, "args", "", "tool arguments as a JSON object")
	f.StringVar(&o.Mode, "mode", "task", "plain, immediate, streaming, task, poll or partial")
	f.DurationVar(&o.TTL, "ttl", 0, "task ttl to ask for (0: the server's default)")
	f.DurationVar(&o.Poll, "poll-interval", 0, "replace the server's pollInterval")
	f.DurationVar(&o.CancelAfter, "cancel-after", 0, "cancel the task after this long")
	f.DurationVar(&o.Timeout, "timeout", 5*time.Minute, "give up after this long")
	f.BoolVar(&o.JSON, "json", false, "print the result and the timeline as JSON")
	f.BoolVar(&o.NoPartial, "no-partial", false, "do not declare tasks.streaming.partial")
	f.BoolVar(&o.NoModes, "no-modes", false, "declare no SEP-1905 response modes (an old client)")
	f.StringVar(&o.Revision, "revision", revisionAuto, "protocol revision: 2025-11-25, 2026-07-28 or auto (server/discover decides)")
	f.StringArrayVar(&o.Answer, "answer", nil, "2026-07-28: answer input KEY (or * for any): KEY=accept[:JSON object], KEY=decline or KEY=cancel; repeatable")
	f.StringVar(&o.AnswersFile, "answers", "", "2026-07-28: JSON file mapping input keys (or *) to ElicitResults")
	f.BoolVar(&o.Listen, "listen", false, "2026-07-28: follow the task by push (subscriptions/listen with its id) instead of polling tasks/get; tasks/get only if the listen fails")
	return cmd
}

// transportFor builds the transport the flags name.
func transportFor(st *State, server, serverCmd string) (mcp.Transport, error) {
	switch {
	case server != "" && serverCmd != "":
		return nil, usagef("give --server or --server-cmd, not both")
	case server != "":
		if !strings.HasPrefix(server, "http://") && !strings.HasPrefix(server, "https://") {
			return nil, usagef("--server %q: want an http:// or https:// URL", server)
		}
		return &streamhttp.ClientTransport{URL: server}, nil
	case serverCmd != "":
		words, err := splitCommand(serverCmd)
		if err != nil {
			return nil, usagef("--server-cmd: %v", err)
		}
		if len(words) == 0 {
			return nil, usagef("--server-cmd is empty")
		}
		return &stdio.CommandTransport{Command: words[0], Args: words[1:], Stderr: st.Stderr}, nil
	}
	return nil, usagef("give --server URL or --server-cmd \"CMD ARGS\"")
}

func runCall(ctx context.Context, st *State, o *CallOptions) error {
	mode, args, err := callFlags(o)
	if err != nil {
		return err
	}
	tr, err := callTransport(st, o)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, o.Timeout)
	defer cancel()
	revision, err := chooseRevision(ctx, st, o)
	if err != nil {
		return err
	}
	if revision.IsStateless() {
		return runStatelessCall(ctx, st, o)
	}
	if o.Listen {
		return usagef("--listen follows a task with subscriptions/listen, which only 2026-07-28 has (the server, or --revision, chose 2025-11-25)")
	}
	sess, err := client.New(&client.Options{Version: Version, NoPartial: o.NoPartial, NoModes: o.NoModes, Clock: st.Clock}).Connect(ctx, tr)
	if err != nil {
		return connectError(ctx, o.Timeout, err)
	}
	defer sess.Close()

	p := &callPrinter{w: st.Stdout}
	co := client.CallOptions{Name: o.Tool, Args: args, Mode: mode, TTL: o.TTL, PollInterval: o.Poll, CancelAfter: o.CancelAfter}
	if st.StdoutTTY && !o.JSON {
		p.live(&co)
	}
	res, callErr := sess.CallTool(ctx, co)
	// Cancelled as asked: the task ended cancelled, or a plain call was
	// cancelled before its answer.
	cancelled := o.CancelAfter > 0 && res != nil &&
		(res.Task != nil && res.Task.Status == mcp.StatusCancelled || errors.Is(callErr, client.ErrCancelled))
	if res == nil || (callErr != nil && res.Answer == "" && !cancelled) {
		// Refused or never answered: there is no call to report.
		return callFailure(ctx, o.Timeout, callErr)
	}
	if err := reportCall(st, o, p, res, callErr, cancelled); err != nil {
		return err
	}
	return callVerdict(ctx, o, res, callErr, cancelled)
}

// callVerdict maps a call that was answered to the command's result: a
// cancel as asked or a complete result passes; an incomplete result or a
// tool error is a finding.
func callVerdict(ctx context.Context, o *CallOptions, res *client.CallResult, callErr error, cancelled bool) error {
	switch {
	case cancelled:
		return nil
	case callErr != nil && !res.Complete:
		var te *client.TaskError
		if errors.As(callErr, &te) {
			return &FindingsError{Summary: "incomplete result: " + callErr.Error()}
		}
		return callFailure(ctx, o.Timeout, callErr)
	case !res.Complete:
		return &FindingsError{Summary: "the result is incomplete"}
	case res.IsError:
		return &FindingsError{Summary: fmt.Sprintf("tool %s reported an error", o.Tool)}
	}
	return nil
}

// callFlags checks the flags of the call itself and returns its mode and
// arguments.
func callFlags(o *CallOptions) (client.Mode, json.RawMessage, error) {
	if o.Tool == "" {
		return "", nil, usagef("--tool is required")
	}
	mode, err := client.ParseMode(o.Mode)
	if err != nil {
		return "", nil, usagef("--mode: %v", err)
	}
	var args json.RawMessage
	if o.Args != "" {
		if !json.Valid([]byte(o.Args)) || !strings.HasPrefix(strings.TrimSpace(o.Args), "{") {
			return "", nil, usagef("--args: not a JSON object: %.60s", o.Args)
		}
		args = json.RawMessage(o.Args)
	}
	if o.Timeout <= 0 {
		return "", nil, usagef("--timeout must be positive")
	}
	return mode, args, nil
}

// callTransport is the transport to the server, with the header fields
// of --header and --bearer-token-env (HTTP only).
func callTransport(st *State, o *CallOptions) (mcp.Transport, error) {
	tr, err := transportFor(st, o.Server, o.ServerCmd)
	if err != nil {
		return nil, err
	}
	header, err := o.Header(st)
	if err != nil {
		return nil, err
	}
	if header != nil {
		ht, ok := tr.(*streamhttp.ClientTransport)
		if !ok {
			return nil, usagef("--header and --bearer-token-env need --server (a stdio server has no HTTP headers)")
		}
		ht.Header = header
	}
	return tr, nil
}

// callPrinter prints a call's content blocks; printed says it printed
// any.
type callPrinter struct {
	w       io.Writer
	printed bool
}

func (p *callPrinter) show(blocks ...mcp.ContentBlock) {
	for _, b := range blocks {
		fmt.Fprint(p.w, blockText(b))
		p.printed = true
	}
}

// live prints the blocks as they arrive (stdout a terminal, no --json).
func (p *callPrinter) live(co *client.CallOptions) {
	// A streaming call with partials declared receives the same
	// blocks twice: as segments on its POST stream and as partials
	// on the standalone stream, in the same order. The n-th block
	// of either channel is printed once, by whichever brings it
	// first, so a channel that stops early loses nothing.
	var mu sync.Mutex
	var shown, fromSegments, fromPartials int
	showNext := func(from *int, b mcp.ContentBlock) {
		mu.Lock()
		defer mu.Unlock()
		if *from++; *from > shown {
			shown = *from
			p.show(b)
		}
	}
	co.OnSegment = func(s mcp.Segment) { showNext(&fromSegments, s.ContentBlock) }
	co.OnPartial = func(part mcp.TaskPartialParams) {
		for _, b := range part.Content {
			showNext(&fromPartials, b)
		}
	}
}

// reportCall prints the call: its JSON (--json), or its content (unless
// printed live) and a summary line.
func reportCall(st *State, o *CallOptions, p *callPrinter, res *client.CallResult, callErr error, cancelled bool) error {
	if o.JSON {
		return writeJSON(st.Stdout, callJSON(res, callErr))
	}
	if !p.printed {
		p.show(res.Content...)
	}
	if p.printed {
		fmt.Fprintln(st.Stdout)
	}
	fmt.Fprintln(st.Stderr, summaryLine(res))
	if cancelled && callErr != nil {
		fmt.Fprintln(st.Stderr, callErr)
	}
	return nil
}

func connectError(ctx context.Context, timeout time.Duration, err error) error {
	if ctx.Err() == context.DeadlineExceeded {
		return fmt.Errorf("no answer to initialize within %v: %w", timeout, err)
	}
	return fmt.Errorf("connect: %w", err)
}

func callFailure(ctx context.Context, timeout time.Duration, err error) error {
	if ctx.Err() == context.DeadlineExceeded {
		return fmt.Errorf("no complete answer within %v (--timeout): %w", timeout, err)
	}
	var rpc *mcp.Error
	if errors.As(err, &rpc) && (rpc.Code == mcp.CodeInvalidParams || rpc.Code == mcp.CodeMethodNotFound) {
		return &UsageError{Err: err} // the server refused what was asked
	}
	return err
}

// blockText is how a content block prints.
func blockText(b mcp.ContentBlock) string {
	switch b.Type {
	case mcp.ContentText:
		return b.Text
	case mcp.ContentResourceLink:
		return fmt.Sprintf("[resource_link %s]", b.URI)
	}
	return fmt.Sprintf("[%s]", b.Type)
}

func summaryLine(r *client.CallResult) string {
	var b strings.Builder
	status := "no task"
	if r.Task != nil {
		status = "task " + r.TaskID + " " + string(r.Task.Status)
	}
	if r.Answer == "" {
		fmt.Fprintf(&b, "%s · mode %s, not answered", status, r.Mode)
	} else {
		fmt.Fprintf(&b, "%s · mode %s, answered %s", status, r.Mode, r.Answer)
	}
	if r.Fallback {
		b.WriteString(" (server fell back to task)")
	}
	if r.Segments > 0 {
		fmt.Fprintf(&b, " · %d segments", r.Segments)
	}
	if r.Partials > 0 {
		fmt.Fprintf(&b, " · %d partials", r.Partials)
	}
	if r.Duplicates > 0 || r.Gaps > 0 || r.DataLoss > 0 {
		fmt.Fprintf(&b, " · %d duplicates, %d gaps, %d lost", r.Duplicates, r.Gaps, r.DataLoss)
	}
	if r.Counts.HTTPRequests > 0 {
		fmt.Fprintf(&b, " · %d HTTP requests", r.Counts.HTTPRequests)
	}
	fmt.Fprintf(&b, " · %d B sent, %d B received · %v", r.Counts.BytesSent, r.Counts.BytesReceived, r.End.Sub(r.Start).Round(time.Millisecond))
	if !r.Complete {
		b.WriteString(" · INCOMPLETE")
	}
	return b.String()
}

type eventJSON struct {
	At          time.Time      `json:"at"`
	Kind        string         `json:"kind"`
	Method      string         `json:"method,omitempty"`
	RequestID   *mcp.ID        `json:"requestId,omitempty"`
	TaskID      string         `json:"taskId,omitempty"`
	SeqNr       int64          `json:"seqNr,omitempty"`
	Seq         *int64         `json:"seq,omitempty"`
	Status      mcp.TaskStatus `json:"status,omitempty"`
	Source      string         `json:"source,omitempty"`
	Bytes       int64          `json:"bytes,omitempty"`
	HTTPStatus  int            `json:"httpStatus,omitempty"`
	LastEventID string         `json:"lastEventId,omitempty"`
	Detail      string         `json:"detail,omitempty"`
	Error       string         `json:"error,omitempty"`
}

// CallSchema names the layout of call --json (docs/cli.md); a change that
// breaks readers bumps it.
const CallSchema = "tasksim.call/v1"

func callJSON(r *client.CallResult, err error) any {
	events := make([]eventJSON, len(r.Timeline))
	for i, e := range r.Timeline {
		j := eventJSON{At: e.At, Kind: string(e.Kind), Method: e.Method, TaskID: e.TaskID, SeqNr: e.SeqNr, Status: e.Status,
			Source: e.Source, Bytes: e.Bytes, HTTPStatus: e.HTTPStatus, LastEventID: e.LastEventID, Detail: e.Detail}
		if !e.RequestID.IsZero() {
			id := e.RequestID
			j.RequestID = &id
		}
		if e.Kind == client.EventPartial || e.Kind == client.EventDataLoss || (e.Kind == client.EventDuplicate && e.SeqNr == 0) {
			seq := e.Seq
			j.Seq = &seq
		}
		if e.Err != nil {
			j.Error = e.Err.Error()
		}
		events[i] = j
	}
	out := map[string]any{
		"schema": CallSchema,
		"result": map[string]any{
			"content":           nonNil(r.Content),
			"structuredContent": r.StructuredContent,
			"isError":           r.IsError,
			"complete":          r.Complete,
		},
		"mode":        r.Mode,
		"answer":      r.Answer,
		"fallback":    r.Fallback,
		"taskId":      r.TaskID,
		"task":        r.Task,
		"segments":    r.Segments,
		"duplicates":  r.Duplicates,
		"gaps":        r.Gaps,
		"resumes":     r.Resumes,
		"streamLost":  r.StreamLost,
		"partials":    r.Partials,
		"dataLoss":    r.DataLoss,
		"discarded":   r.Discarded,
		"start":       r.Start,
		"end":         r.End,
		"counts":      r.Counts,
		"timeline":    events,
		"completedAt": nil,
	}
	if !r.CompletedAt.IsZero() {
		out["completedAt"] = r.CompletedAt
	}
	if err != nil {
		out["error"] = err.Error()
	}
	return out
}

func nonNil(c []mcp.ContentBlock) []mcp.ContentBlock {
	if c == nil {
		return []mcp.ContentBlock{}
	}
	return c
}

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return fmt.Errorf("write JSON: %w", err)
	}
	return nil
}
