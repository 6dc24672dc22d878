package load

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
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

// tally is what a task needs of its call's timeline, counted as the
// events come (client.CallOptions.OnEvent) so that the call keeps no
// timeline: the HTTP requests made for this call alone (the transport
// attributes each request to the JSON-RPC id it carries, so calls sharing
// a session do not see each other's requests, unlike CallResult.Counts)
// and the first content's arrival. The client calls OnEvent one event at
// a time, in timeline order; the fields are atomic because the
// transport's goroutine may still report a request while the task reads
// them.
type tally struct {
	intended time.Time
	requests atomic.Int64
	first    atomic.Int64 // the first segment or partial, in ns after intended, plus 1; 0: none
}

// event counts one timeline event.
func (t *tally) event(e client.Event) {
	switch e.Kind {
	case client.EventHTTPRequest:
		t.requests.Add(1)
	case client.EventSegment, client.EventPartial:
		if t.first.Load() == 0 {
			t.first.CompareAndSwap(0, int64(e.At.Sub(t.intended))+1)
		}
	}
}

// firstContent returns the first content's arrival, zero when none came.
func (t *tally) firstContent() time.Time {
	if f := t.first.Load(); f != 0 {
		return t.intended.Add(time.Duration(f - 1))
	}
	return time.Time{}
}

// measure turns a call's result into a sample. Latencies count from the
// intended start (t.intended); t gives the first content and the call's
// HTTP requests.
func measure(res *client.CallResult, err error, t *tally, timedOut, interrupted bool) sample {
	var s sample
	if res == nil {
		s.errKind = errorKind(nil, err, timedOut, interrupted)
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
	intended, first, requests := t.intended, t.firstContent(), t.requests.Load()
	if err != nil || !res.Complete || res.IsError {
		s.errKind = errorKind(res, err, timedOut, interrupted)
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
