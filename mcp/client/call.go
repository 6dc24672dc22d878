package client

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"github.com/tasksim/tasksim/mcp"
)

// Mode is how CallTool calls a tool.
type Mode string

// Call modes. The mode is what the client asks for; the server's answer
// decides what happens next (CallResult.Answer), since a server may fall
// back to another response mode (SEP-1905, "Capability Negotiation": the
// requestor MUST be prepared to handle the negotiated mode).
const (
	// ModePlain calls without a task: the result is the answer.
	ModePlain Mode = "plain"
	// ModeImmediate asks for responseModes [immediate]: the result in the
	// answer's content when the server has it at once (SEP-1905 Case 1),
	// else whatever the server falls back to.
	ModeImmediate Mode = "immediate"
	// ModeStreaming asks for responseModes [streaming]: segments from the
	// initial answer, later answers with the same id, and tasks/result
	// with lastSeqNr, merged by seqNr (SEP-1905 Case 3).
	ModeStreaming Mode = "streaming"
	// ModeTask asks for responseModes [task]: CreateTaskResult, tasks/get
	// polling at the task's pollInterval (cut short by a terminal
	// notifications/tasks/status), then tasks/result.
	ModeTask Mode = "task"
	// ModePoll is task mode relying on polling alone: notifications are
	// recorded but never acted on; CallOptions.PollInterval, when set,
	// replaces the server's interval. It is the baseline of benchmarks.
	ModePoll Mode = "poll"
	// ModePartial is task mode following SEP-2679 partial notifications
	// (the session must declare tasks.streaming.partial, the default),
	// then tasks/result for the canonical result (§1.3 rule 6).
	ModePartial Mode = "partial"
)

// callModes is the list Modes copies.
var callModes = []Mode{ModePlain, ModeImmediate, ModeStreaming, ModeTask, ModePoll, ModePartial}

// Modes lists every call mode, in a slice of the caller's own.
func Modes() []Mode { return slices.Clone(callModes) }

// ParseMode returns the mode named s.
func ParseMode(s string) (Mode, error) {
	for _, m := range callModes {
		if string(m) == s {
			return m, nil
		}
	}
	return "", fmt.Errorf("unknown call mode %q (want plain, immediate, streaming, task, poll or partial)", s)
}

// Answers: how the server answered a call, in CallResult.Answer.
const (
	AnswerPlain     = "plain"     // a tool result, no task
	AnswerImmediate = "immediate" // a tool result with a related task (SEP-1905 Case 1)
	AnswerTask      = "task"      // CreateTaskResult (Case 2)
	AnswerStreaming = "streaming" // partial-content responses (Case 3)
)

// CallOptions describe one tool call.
type CallOptions struct {
	// Name is the tool.
	Name string
	// Args are the tool's arguments, marshalled to JSON (a
	// json.RawMessage goes as is); nil sends none.
	Args any
	// Mode is how to call; "" means ModeTask.
	Mode Mode
	// ResponseModes, when set, is the task.responseModes list sent
	// instead of the one mode Mode names: SEP-1905 ("Capability
	// Negotiation") lets a client offer several, of which the server
	// picks by priority. The answer is followed whatever its shape.
	ResponseModes []mcp.ResponseMode
	// TTL is the task lifetime asked for; 0 asks for none (the server's
	// default).
	TTL time.Duration
	// PollInterval, when positive, replaces the interval the task
	// suggests for every tasks/get poll (and, in streaming mode, every
	// resume poll).
	PollInterval time.Duration
	// QuietPoll, when longer than the poll interval, is how long a
	// streaming call's stream may be silent before the call asks
	// tasks/get (SEP-1905 "Client Implementation Guide": keep monitoring
	// the status). By default it asks after one poll interval. A load
	// generator sets it long: under load a server's segments come late,
	// and a poll per late segment adds requests (and connections, while
	// every pooled one carries a stream) just when the server is busiest.
	QuietPoll time.Duration
	// CancelAfter, when positive, cancels the task that long after the
	// call started, with tasks/cancel; a cancel due before the server
	// named the task waits for its id. A plain call is cancelled with
	// notifications/cancelled and ends at once with ErrCancelled.
	CancelAfter time.Duration
	// Progress asks for progress notifications (a progressToken); they
	// appear on the timeline.
	Progress bool
	// OnSegment is called for every new SEP-1905 segment, duplicates
	// excluded, one at a time in arrival order (not necessarily seqNr
	// order), from the goroutine running CallTool. Like OnPartial, it
	// should not block: the call takes nothing else meanwhile.
	OnSegment func(mcp.Segment)
	// OnPartial is called for every accepted SEP-2679 partial, one at a
	// time and in arrival order, from the goroutine running CallTool. It
	// should not block: the call takes nothing else meanwhile.
	OnPartial func(mcp.TaskPartialParams)
	// OnEvent is called for every timeline event, one at a time, from the
	// goroutine running CallTool or the transport's; it must not block.
	OnEvent func(Event)
	// NoTimeline leaves CallResult.Timeline empty: the events still reach
	// OnEvent, but the call does not keep them. A load generator holding
	// thousands of calls open saves an event (~250 bytes) per segment,
	// partial and request of each.
	NoTimeline bool
	// NoContent keeps no content of SEP-1905 segments or SEP-2679
	// partials: they are still counted, checked for order, gaps and
	// duplicates, and passed to OnSegment and OnPartial, but
	// CallResult.Content (when it would be merged from segments) and
	// CallResult.PartialContent stay empty. A load generator holding
	// thousands of calls open saves ~250 bytes per segment of each.
	NoContent bool
}

// CallResult is what a call produced, complete or not, with its timeline.
type CallResult struct {
	// Content is the result: the canonical content from the answer or
	// tasks/result, or the merged segments of a complete stream. For an
	// incomplete call it holds what arrived: merged segments, or the
	// partial content.
	Content           []mcp.ContentBlock
	StructuredContent json.RawMessage
	IsError           bool
	// Complete says the whole result arrived.
	Complete bool
	// Mode is the mode asked for; Answer how the server answered
	// (Answer* constants); Fallback that it announced a fallback to task
	// mode (SEP-1905 MetaFallbackMode).
	Mode     Mode
	Answer   string
	Fallback bool
	// TaskID and Task are the call's task and its last known state: the
	// newest report from any source, where a terminal status is final and
	// an older lastUpdatedAt never replaces a newer one.
	TaskID string
	Task   *mcp.Task
	// Segments counts distinct SEP-1905 segments received; Duplicates the
	// segments and partials received again (by any mechanism, including
	// the overlap of a gap-filling tasks/result); Gaps the seqNr gaps
	// detected; Resumes the tasks/result requests with lastSeqNr;
	// StreamLost that the stream broke for good.
	Segments, Duplicates, Gaps, Resumes int
	StreamLost                          bool
	// Partials counts accepted SEP-2679 partials, PartialContent their
	// content in order (a hint, not the result), DataLoss the seq values
	// skipped, Discarded the partials after a terminal status and the
	// segments with an invalid seqNr.
	Partials       int
	PartialContent []mcp.ContentBlock
	DataLoss       int64
	Discarded      int
	// Start and End bound the call on the client's clock. CompletedAt is
	// when the server says the task reached its terminal status: the
	// result's mcp.MetaCompletedAt, else the terminal task's
	// lastUpdatedAt; zero when unknown.
	Start, End, CompletedAt time.Time
	// CompletedAtSource says where CompletedAt came from:
	// CompletedAtMeta, CompletedAtLastUpdated or "" (unknown).
	CompletedAtSource string
	// FirstContent is when the first segment or partial arrived (zero:
	// none did), and HTTPRequests the HTTP requests the transport made
	// for this call: what Timeline shows (its first EventSegment or
	// EventPartial, its EventHTTPRequest events), kept also with
	// NoTimeline.
	FirstContent time.Time
	HTTPRequests int
	Timeline     []Event
	// Counts is the transport's traffic during the call.
	Counts Counts
}

// CallTool calls a tool and follows the answer to its end, in the way
// o.Mode asks and the server's answer requires. It returns a result
// whenever the call was sent, also with an error: then the result says
// what arrived (Complete false). A task that expired or vanished is a
// *TaskError (errors.Is ErrTaskExpired / ErrTaskNotFound); a JSON-RPC
// error answer is the *mcp.Error, wrapped.
func (s *Session) CallTool(ctx context.Context, o CallOptions) (*CallResult, error) {
	mode := o.Mode
	if mode == "" {
		mode = ModeTask
	}
	if _, err := ParseMode(string(mode)); err != nil {
		return nil, err
	}
	if o.Name == "" {
		return nil, fmt.Errorf("tools/call: no tool name")
	}
	var args json.RawMessage
	if o.Args != nil {
		b, err := json.Marshal(o.Args)
		if err != nil {
			return nil, fmt.Errorf("tools/call %s: arguments: %w", o.Name, err)
		}
		args = b
	}
	c := &call{
		s:     s,
		o:     o,
		mode:  mode,
		rec:   &recorder{now: s.opts.Clock.Now, onEvent: o.OnEvent, discard: o.NoTimeline},
		res:   &CallResult{Mode: mode, Start: s.opts.Clock.Now()},
		async: make(chan asyncResult, 4),
	}
	c.par.noContent = o.NoContent
	before := s.transportCounts()
	err := c.run(ctx, args)
	c.res.End = s.opts.Clock.Now()
	c.res.Counts = s.transportCounts().Sub(before)
	c.res.Timeline, c.res.FirstContent, c.res.HTTPRequests = c.rec.timeline()
	return c.res, err
}

// request params of the call in its mode.
func (c *call) params(args json.RawMessage) mcp.CallToolParams {
	p := mcp.CallToolParams{Name: c.o.Name, Arguments: args}
	if c.mode == ModePlain {
		return p
	}
	p.Task = &mcp.TaskParams{}
	if c.o.TTL > 0 {
		ttl := c.o.TTL.Milliseconds()
		p.Task.TTL = &ttl
	}
	if len(c.s.opts.Modes) > 0 {
		// SEP-1905, "Capability Negotiation": the client MUST list the
		// modes it accepts in the request.
		switch {
		case len(c.o.ResponseModes) > 0:
			p.Task.ResponseModes = c.o.ResponseModes
		case c.mode == ModeImmediate:
			p.Task.ResponseModes = []mcp.ResponseMode{mcp.ModeImmediate}
		case c.mode == ModeStreaming:
			p.Task.ResponseModes = []mcp.ResponseMode{mcp.ModeStreaming}
		default:
			p.Task.ResponseModes = []mcp.ResponseMode{mcp.ModeTask}
		}
	}
	return p
}

// Sources of CallResult.CompletedAt.
const (
	CompletedAtMeta        = "meta"          // the result's mcp.MetaCompletedAt (ns)
	CompletedAtLastUpdated = "lastUpdatedAt" // the terminal task's lastUpdatedAt (the server's resolution, often ms)
)
