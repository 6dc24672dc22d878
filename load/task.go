package load

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/tasksim/tasksim/mcp"
	"github.com/tasksim/tasksim/mcp/client"
)

// Error kinds of ModeResult.Errors.
const (
	ErrKindTimeout     = "timeout"        // no complete result within Config.Timeout
	ErrKindInterrupted = "interrupted"    // the run was stopped (Ctrl-C)
	ErrKindExpired     = "task-expired"   // the task's ttl ran out
	ErrKindNotFound    = "task-not-found" // the server forgot the task
	ErrKindStreamLost  = "stream-lost"    // a stream broke and could not be resumed
	ErrKindSessionGone = "session-gone"   // the server ended the session (404)
	ErrKindClosed      = "session-closed" // the session's connection failed
	ErrKindTransport   = "transport"      // an HTTP or network error
	ErrKindToolError   = "tool-error"     // the result has isError
	ErrKindIncomplete  = "incomplete"     // the call ended without the whole result
	errKindRPCPrefix   = "rpc"            // a JSON-RPC error answer: rpc-32603
)

// measure turns a call's result into a sample. Latencies count from the
// intended start; the result gives the first content's arrival and the
// HTTP requests made for this call alone (the transport attributes each
// request to the JSON-RPC id it carries, so calls sharing a session do
// not see each other's requests, unlike CallResult.Counts), which the
// client counts without keeping the timeline (CallOptions.NoTimeline).
func measure(res *client.CallResult, err error, intended time.Time, timedOut, interrupted bool) sample {
	var s sample
	if res == nil {
		s.errKind = errorKind(nil, err, timedOut, interrupted)
		s.errMsg = errMessage(err)
		return s
	}
	s.answer = res.Answer
	s.segments = int64(res.Segments)
	s.partials = int64(res.Partials)
	s.duplicates = int64(res.Duplicates)
	s.gaps = int64(res.Gaps)
	s.dataLoss = res.DataLoss
	s.resumes = int64(res.Resumes)
	s.streamLost = res.StreamLost
	first, requests := res.FirstContent, int64(res.HTTPRequests)
	if err != nil || !res.Complete || res.IsError {
		s.errKind = errorKind(res, err, timedOut, interrupted)
		s.errMsg = errMessage(err)
		return s
	}
	s.ok = true
	s.ttr = res.End.Sub(intended)
	if first.IsZero() {
		first = res.End // the content came with the result
	}
	s.ttfp = first.Sub(intended)
	if !res.CompletedAt.IsZero() {
		s.hasDiscovery = true
		s.discoveryUpdated = res.CompletedAtSource == client.CompletedAtLastUpdated
		s.discovery = res.End.Sub(res.CompletedAt)
	}
	s.requests = requests
	return s
}

// errorKind classifies a failed call.
// errMessage is err's message for ModeResult.ErrorSamples, cut to a line
// a table note can hold.
func errMessage(err error) string {
	if err == nil {
		return ""
	}
	msg := strings.Join(strings.Fields(err.Error()), " ")
	if len(msg) > maxErrorSample {
		msg = msg[:maxErrorSample] + "…"
	}
	return msg
}

// maxErrorSample bounds an error sample's length in bytes.
const maxErrorSample = 200

func errorKind(res *client.CallResult, err error, timedOut, interrupted bool) string {
	var rpc *mcp.Error
	var se *mcp.StreamError
	switch {
	case interrupted:
		return ErrKindInterrupted
	case timedOut:
		return ErrKindTimeout
	case errors.Is(err, client.ErrTaskExpired):
		return ErrKindExpired
	case errors.Is(err, client.ErrTaskNotFound):
		return ErrKindNotFound
	case errors.As(err, &rpc):
		return fmt.Sprintf("%s%d", errKindRPCPrefix, rpc.Code)
	case errors.As(err, &se):
		return ErrKindStreamLost
	case errors.Is(err, mcp.ErrSessionGone):
		return ErrKindSessionGone
	case errors.Is(err, mcp.ErrClosed):
		return ErrKindClosed
	case errors.Is(err, context.DeadlineExceeded):
		return ErrKindTimeout
	case err != nil:
		return ErrKindTransport
	case res != nil && res.Complete && res.IsError:
		return ErrKindToolError
	}
	return ErrKindIncomplete
}
