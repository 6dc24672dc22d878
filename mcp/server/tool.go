package server

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/tasksim/tasksim/clock"
	"github.com/tasksim/tasksim/mcp"
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
	clock    clock.Clock
	emit     func(ctx context.Context, blocks []mcp.ContentBlock) error
	progress func(ctx context.Context, p mcp.ProgressParams) error
	// conn is the answer whose connection CloseConnection ends, if any.
	conn mcp.Replier
}

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
