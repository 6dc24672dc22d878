package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/tasksim/tasksim/mcp"
	"github.com/tasksim/tasksim/mcp/client"
	rev "github.com/tasksim/tasksim/mcp/rev20260728"
	"github.com/tasksim/tasksim/mcp/streamhttp"
)

// call --revision: which era the call speaks. "auto" asks server/discover
// and speaks 2026-07-28 when the server lists it, else opens a 2025-11-25
// session (docs/cli.md, "Revisions").
const revisionAuto = "auto"

// chooseRevision returns the revision the call speaks, asking the server
// when o.Revision is auto. A server that does not answer server/discover
// with 2026-07-28 in supportedVersions gets a 2025-11-25 session, and so
// does a call given a flag only 2025-11-25 has (--mode, --ttl,
// --no-partial, --no-modes).
func chooseRevision(ctx context.Context, st *State, o *CallOptions) (mcp.Revision, error) {
	if o.Revision != revisionAuto {
		r, err := mcp.ParseRevision(o.Revision)
		if err != nil {
			return "", usagef("--revision: %v (or auto)", err)
		}
		return r, nil
	}
	if o.legacy {
		return mcp.Revision20251125, nil
	}
	tr, err := statelessTransport(st, o)
	if err != nil {
		return "", err
	}
	conn, err := client.New(&client.Options{Version: Version, Clock: st.Clock, MaxReissues: -1}).ConnectStateless(ctx, tr)
	if err != nil {
		return "", connectError(ctx, o.Timeout, err)
	}
	d, derr := conn.Discover(ctx)
	conn.Close()
	if derr == nil && client.SupportsRevision(d) {
		return mcp.Revision20260728, nil
	}
	return mcp.Revision20251125, nil
}

// statelessTransport is callTransport speaking 2026-07-28.
func statelessTransport(st *State, o *CallOptions) (mcp.Transport, error) {
	tr, err := callTransport(st, o)
	if err != nil {
		return nil, err
	}
	if ht, ok := tr.(*streamhttp.ClientTransport); ok {
		ht.Revision = mcp.Revision20260728
	}
	return tr, nil
}

// runStatelessCall is tasksim call in the 2026-07-28 era.
func runStatelessCall(ctx context.Context, st *State, o *CallOptions) error {
	if o.Mode != "" && o.Mode != "task" && o.Mode != "plain" {
		return usagef("--mode %s is a 2025-11-25 mode: in 2026-07-28 the server decides whether a call is a task (--mode plain declares no tasks extension)", o.Mode)
	}
	answer, err := callAnswers(st, o)
	if err != nil {
		return err
	}
	var args any
	if o.Args != "" {
		args = json.RawMessage(o.Args)
	}
	tr, err := statelessTransport(st, o)
	if err != nil {
		return err
	}
	conn, err := client.New(&client.Options{Version: Version, Clock: st.Clock}).ConnectStateless(ctx, tr)
	if err != nil {
		return connectError(ctx, o.Timeout, err)
	}
	defer conn.Close()
	res, callErr := conn.CallTool(ctx, client.StatelessCallOptions{Name: o.Tool, Args: args, Answer: answer,
		PollInterval: o.Poll, CancelAfter: o.CancelAfter, NoTasks: o.Mode == "plain", Listen: o.Listen})
	for _, r := range res.Reissues {
		fmt.Fprintf(st.Stderr, "re-issued %s: request %s lost with its stream, sent again as %s", r.Method, r.Old, r.New)
		if r.Method == mcp.MethodToolsCall {
			fmt.Fprint(st.Stderr, " (the tool may have run twice)")
		}
		fmt.Fprintln(st.Stderr)
	}
	if o.JSON {
		if err := writeJSON(st.Stdout, statelessJSON(res, callErr)); err != nil {
			return err
		}
	} else {
		if len(res.Content) > 0 {
			p := &callPrinter{w: st.Stdout}
			p.show(res.Content...)
			fmt.Fprintln(st.Stdout)
		}
		fmt.Fprintln(st.Stderr, statelessSummary(res))
	}
	return statelessVerdict(ctx, o, res, callErr)
}

// statelessVerdict maps the call's end to the command's result
// (docs/cli.md exit codes).
func statelessVerdict(ctx context.Context, o *CallOptions, res *client.StatelessResult, err error) error {
	var te *client.TaskError
	switch {
	case res.Cancelled && (errors.Is(err, client.ErrCancelled) || err == nil):
		return nil
	case errors.Is(err, client.ErrInvalidResult):
		return fmt.Errorf("the server broke the protocol: %w", err)
	case errors.Is(err, client.ErrNoAnswer):
		return usagef("%v: give it with --answer KEY=ACTION[:CONTENT] or --answers FILE", err)
	case errors.As(err, &te):
		return &FindingsError{Summary: "incomplete result: " + err.Error()}
	case err != nil && res.Task != nil && res.Task.Status == mcp.StatusFailed:
		return &FindingsError{Summary: err.Error()}
	case err != nil:
		return callFailure(ctx, o.Timeout, err)
	case !res.Complete:
		return &FindingsError{Summary: "the result is incomplete"}
	case res.IsError:
		return &FindingsError{Summary: fmt.Sprintf("tool %s reported an error", o.Tool)}
	}
	return nil
}

// callAnswers builds the answers to input requests from --answer and
// --answers. Each answer is an ElicitResult, chosen by the input
// request's key, or by "*" for any key not named (docs/cli.md, "Answering
// input").
func callAnswers(st *State, o *CallOptions) (client.Answerer, error) {
	answers := map[string]json.RawMessage{}
	if o.AnswersFile != "" {
		data, err := os.ReadFile(o.AnswersFile)
		if err != nil {
			return nil, usagef("--answers: %v", err)
		}
		var file map[string]json.RawMessage
		if err := json.Unmarshal(data, &file); err != nil {
			return nil, usagef("--answers %s: want a JSON object of key to ElicitResult: %v", o.AnswersFile, err)
		}
		for k, v := range file {
			if err := checkElicitResult(v); err != nil {
				return nil, usagef("--answers %s: %q: %v", o.AnswersFile, k, err)
			}
			answers[k] = v
		}
	}
	for _, a := range o.Answer {
		key, v, err := parseAnswer(a)
		if err != nil {
			return nil, usagef("--answer %q: %v", a, err)
		}
		answers[key] = v
	}
	if len(answers) == 0 {
		return nil, nil
	}
	return func(key string, _ rev.InputRequest) (json.RawMessage, error) {
		if v, ok := answers[key]; ok {
			return v, nil
		}
		if v, ok := answers["*"]; ok {
			return v, nil
		}
		return nil, fmt.Errorf("%w: %s", client.ErrNoAnswer, key)
	}, nil
}

// parseAnswer reads KEY=accept:JSON-OBJECT, KEY=accept, KEY=decline or
// KEY=cancel.
func parseAnswer(s string) (string, json.RawMessage, error) {
	key, rest, ok := strings.Cut(s, "=")
	if !ok || key == "" {
		return "", nil, errors.New("want KEY=ACTION[:CONTENT], KEY an input key or *")
	}
	action, content, hasContent := strings.Cut(rest, ":")
	switch action {
	case "accept", "decline", "cancel":
	default:
		return "", nil, fmt.Errorf("action %q: want accept, decline or cancel", action)
	}
	res := map[string]json.RawMessage{"action": json.RawMessage(`"` + action + `"`)}
	if hasContent {
		if action != "accept" || !json.Valid([]byte(content)) || !strings.HasPrefix(strings.TrimSpace(content), "{") {
			return "", nil, errors.New("content must be a JSON object, and only with accept")
		}
		res["content"] = json.RawMessage(content)
	}
	b, _ := json.Marshal(res)
	return key, b, nil
}

func checkElicitResult(v json.RawMessage) error {
	var r struct {
		Action  string          `json:"action"`
		Content json.RawMessage `json:"content"`
	}
	if err := json.Unmarshal(v, &r); err != nil {
		return fmt.Errorf("not an ElicitResult: %v", err)
	}
	switch r.Action {
	case "accept", "decline", "cancel":
		return nil
	}
	return fmt.Errorf("action %q: want accept, decline or cancel", r.Action)
}

func statelessSummary(r *client.StatelessResult) string {
	var b strings.Builder
	b.WriteString("2026-07-28 · ")
	if r.Task != nil {
		fmt.Fprintf(&b, "task %s %s · %d polls", r.TaskID, r.Task.Status, r.Polls)
		if r.Listens > 0 {
			fmt.Fprintf(&b, " · %d listen, %d notifications/tasks", r.Listens, r.Notifications)
		}
		if r.ListenFallback != "" {
			fmt.Fprintf(&b, " (polled: %s)", r.ListenFallback)
		}
	} else {
		fmt.Fprintf(&b, "no task · answered %s", r.Answer)
	}
	if r.InputRounds > 0 {
		fmt.Fprintf(&b, " · %d input rounds", r.InputRounds)
	}
	if r.Updates > 0 {
		fmt.Fprintf(&b, " · %d tasks/update", r.Updates)
	}
	if len(r.Reissues) > 0 {
		fmt.Fprintf(&b, " · %d re-issued", len(r.Reissues))
	}
	fmt.Fprintf(&b, " · %v", r.End.Sub(r.Start).Round(time.Millisecond))
	if r.Cancelled {
		b.WriteString(" · cancelled by the client")
	} else if !r.Complete {
		b.WriteString(" · INCOMPLETE")
	}
	return b.String()
}

// CallSchema2026 names the layout of call --json in the 2026-07-28 era.
const CallSchema2026 = "tasksim.call.2026/v1"

func statelessJSON(r *client.StatelessResult, err error) any {
	events := make([]eventJSON, len(r.Timeline))
	for i, e := range r.Timeline {
		j := eventJSON{At: e.At, Kind: string(e.Kind), Method: e.Method, TaskID: e.TaskID, Status: e.Status, Source: e.Source, Detail: e.Detail}
		if !e.RequestID.IsZero() {
			id := e.RequestID
			j.RequestID = &id
		}
		if e.Err != nil {
			j.Error = e.Err.Error()
		}
		events[i] = j
	}
	reissues := make([]map[string]any, len(r.Reissues))
	for i, x := range r.Reissues {
		reissues[i] = map[string]any{"method": x.Method, "old": x.Old, "new": x.New, "mayHaveRunTwice": x.Method == mcp.MethodToolsCall}
	}
	out := map[string]any{
		"schema":   CallSchema2026,
		"revision": mcp.Revision20260728,
		"result": map[string]any{
			"content": nonNil(r.Content), "structuredContent": r.StructuredContent, "isError": r.IsError, "complete": r.Complete,
		},
		"resultType":     r.Answer,
		"taskId":         r.TaskID,
		"task":           r.Task,
		"polls":          r.Polls,
		"listens":        r.Listens,
		"notifications":  r.Notifications,
		"listenFallback": r.ListenFallback,
		"inputRounds":    r.InputRounds,
		"updates":        r.Updates,
		"reissues":       reissues,
		"cancelled":      r.Cancelled,
		"start":          r.Start,
		"end":            r.End,
		"timeline":       events,
	}
	if err != nil {
		out["error"] = err.Error()
	}
	return out
}
