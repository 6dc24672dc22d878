package server

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"time"

	"github.com/tasksim/tasksim/clock"
	"github.com/tasksim/tasksim/mcp"
	rev "github.com/tasksim/tasksim/mcp/rev20260728"
)

// Tool is a tool the server offers: its tools/list entry and how to run it.
type Tool struct {
	mcp.Tool
	// Incremental says the tool produces its result in parts. A call
	// negotiated as immediate whose result is not ready in time falls back
	// to streaming for such a tool, to task otherwise (SEP-1905, "Server
	// Response Decision Process").
	Incremental bool
	// Prepare checks the arguments and returns what runs the call. An error
	// becomes the call's -32602 error; nothing runs.
	Prepare func(args json.RawMessage) (RunFunc, error)
	// Size, when set, says how many bytes of result the arguments ask for
	// (after Prepare accepted them), so that a call asking for more than
	// Options.MaxTaskBytes is refused before it runs.
	Size func(args json.RawMessage) int64
	// Revisions are the protocol revisions whose requests list and call
	// the tool; empty means every revision. A tool left out of a revision
	// is unknown to its requests (-32602 "Unknown tool").
	Revisions []mcp.Revision
	// Input, when set, says what a call of the stateless era needs from
	// the client before it runs, as a multi round-trip request (2026-07-28
	// Multi Round-Trip Requests): given the call's arguments, the answers
	// the request carries (nil on the first round) and the capabilities it
	// declares (nil for none), it returns the requests still open. It may
	// leave out what the capabilities do not cover; an open request they
	// do not cover answers the call with -32021 naming the capability
	// ("Server Requirements" 7). While some are open, the call is answered
	// with an InputRequiredResult; once none are, it runs (as a task when
	// the server makes it one) and Call.Answers returns the answers. A
	// 2025-11-25 call never asks.
	Input func(args json.RawMessage, answers rev.InputResponses, caps *rev.ClientCapabilities) rev.InputRequests
}

// servedTo reports whether requests of revision r list and call the tool.
func (t *Tool) servedTo(r mcp.Revision) bool {
	return len(t.Revisions) == 0 || slices.Contains(t.Revisions, r)
}

// RunFunc runs one call. Its result is everything it emitted through
// Call.Emit followed by the content it returns. An *mcp.Error return ends
// the call with that JSON-RPC error; any other error ends it as a tool
// execution error (a result with isError and the error's text).
type RunFunc func(ctx context.Context, c *Call) (*mcp.CallToolResult, error)

// ErrTaskEnded is returned by Call.Emit and Call.Progress once the call's
// task is terminal (cancelled, expired): the tool should stop.
var ErrTaskEnded = errors.New("task ended")

// Call is what a running tool sees of its call.
type Call struct {
	clock clock.Clock
	// taskID is the task the call runs as; empty for a call without one.
	taskID   string
	emit     func(ctx context.Context, blocks []mcp.ContentBlock) error
	progress func(ctx context.Context, p mcp.ProgressParams) error
	// conn is the answer whose connection CloseConnection ends, if any.
	conn mcp.Replier
	// answers are the inputResponses of the multi round-trip request
	// that started the call (Tool.Input), or nil.
	answers rev.InputResponses
	// ask parks the call's task until the client answers reqs; nil when
	// the call is no task of the stateless era.
	ask func(ctx context.Context, reqs []rev.InputRequest) ([]json.RawMessage, error)
}

// ErrNoInput is returned by Call.Ask when the call cannot ask the client
// for input: it is not a task of the 2026-07-28 era, where a task asks
// through tasks/get and tasks/update (Tasks, "Task Update Requests").
var ErrNoInput = errors.New("this call cannot ask the client for input: it is not a 2026-07-28 task")

// Ask asks the client for input while the call runs as a task of the
// stateless era: the task turns input_required with reqs in its
// inputRequests, under keys the server mints, and Ask returns the
// answers, in the order of reqs, once the client sent every one with
// tasks/update. It fails with ErrNoInput outside such a task, with an
// *mcp.Error when the creating request did not declare the capability a
// request needs, and with ctx's error when the task ends first.
func (c *Call) Ask(ctx context.Context, reqs ...rev.InputRequest) ([]json.RawMessage, error) {
	if c.ask == nil {
		return nil, ErrNoInput
	}
	if len(reqs) == 0 {
		return nil, nil
	}
	return c.ask(ctx, reqs)
}

// TaskID returns the id of the task the call runs as (a 2025-11-25
// task-augmented call or a 2026-07-28 task), or "" for a call answered
// without a task.
func (c *Call) TaskID() string { return c.taskID }

// Answers returns the inputResponses the call's multi round-trip request
// carried on its last round (Tool.Input), or nil.
func (c *Call) Answers() rev.InputResponses { return c.answers }

// CloseConnection ends the network connection that carries the call's
// answer, when the transport can (mcp.ConnectionCloser); the answer goes on
// and the client resumes. Elsewhere it does nothing.
func (c *Call) CloseConnection() {
	if cc, ok := c.conn.(mcp.ConnectionCloser); ok {
		cc.CloseConnection()
	}
}

// Emit delivers part of the result: as SEP-1905 segments to a streaming
// client, as SEP-2679 partial notifications to a client that declared them,
// and in every case as part of the final result.
func (c *Call) Emit(ctx context.Context, blocks ...mcp.ContentBlock) error {
	if len(blocks) == 0 {
		return nil
	}
	return c.emit(ctx, blocks)
}

// Progress sends notifications/progress if the request asked for progress
// (it carried a progressToken); otherwise it does nothing.
func (c *Call) Progress(ctx context.Context, progress float64, total *float64, message string) error {
	return c.progress(ctx, mcp.ProgressParams{Progress: progress, Total: total, Message: message})
}

// Sleep waits d on the server's clock, or until the call is stopped.
func (c *Call) Sleep(ctx context.Context, d time.Duration) error { return clock.Sleep(ctx, c.clock, d) }

// Now returns the server clock's time.
func (c *Call) Now() time.Time { return c.clock.Now() }

// decodeArgs unmarshals tool arguments, answering -32602 on a mismatch.
func decodeArgs(raw json.RawMessage, v any) error {
	return mcp.DecodeParams(raw, v)
}
