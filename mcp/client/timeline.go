package client

import (
	"sync"
	"time"

	"github.com/tasksim/tasksim/mcp"
)

// EventKind says what an Event records.
type EventKind string

// Event kinds of a call's timeline.
const (
	// EventRequestSent: a JSON-RPC request or notification went out
	// (Method, RequestID).
	EventRequestSent EventKind = "request-sent"
	// EventResponse: an answer to one of the call's requests arrived
	// (Method, RequestID, Err for an error response).
	EventResponse EventKind = "response"
	// EventHTTPRequest: the transport made an HTTP request for the call
	// (Method is POST or GET, HTTPStatus, Bytes sent, LastEventID).
	EventHTTPRequest EventKind = "http-request"
	// EventTaskCreated: the call's task id became known (TaskID, Status).
	EventTaskCreated EventKind = "task-created"
	// EventSegment: a new SEP-1905 segment (SeqNr, Bytes, Source).
	EventSegment EventKind = "segment"
	// EventDuplicate: a segment or partial already received, ignored
	// (SeqNr or Seq, Source).
	EventDuplicate EventKind = "duplicate"
	// EventGap: seqNrs missing below the highest received (Detail lists
	// them); a tasks/result with lastSeqNr follows to fill them.
	EventGap EventKind = "gap"
	// EventPartial: an accepted SEP-2679 partial notification (Seq, Bytes).
	EventPartial EventKind = "partial"
	// EventDataLoss: a partial whose seq skipped values (Seq; Detail says
	// how many were lost).
	EventDataLoss EventKind = "data-loss"
	// EventDiscarded: a partial after a terminal status, or a segment
	// with an invalid seqNr, dropped; or a task status report ignored
	// (Status, Source, Detail says why): one after a terminal status, or
	// with a lastUpdatedAt older than the status known. Only partials and
	// segments count in CallResult.Discarded: an overtaken status is the
	// ordinary race of polls and notifications, not a fault.
	EventDiscarded EventKind = "discarded"
	// EventStatus: the task's status as seen (Status, Source).
	EventStatus EventKind = "status"
	// EventProgress: a progress notification for the call.
	EventProgress EventKind = "progress"
	// EventStreamLost: the stream carrying the call's answer broke for
	// good; the call resumes with tasks/result.
	EventStreamLost EventKind = "stream-lost"
	// EventResume: a tasks/result with lastSeqNr (SeqNr is lastSeqNr).
	EventResume EventKind = "resume"
	// EventCancel: the call asked for tasks/cancel (or, without a task,
	// sent notifications/cancelled).
	EventCancel EventKind = "cancel"
	// EventResult: the call ended with a result (Complete or not).
	EventResult EventKind = "result"
	// EventReissued: a request whose stream broke before its answer was
	// sent again with a new id (stateless era; RequestID is the new id,
	// Detail names both). For tools/call the tool may run twice.
	EventReissued EventKind = "reissued"
	// EventInput: input requests answered (stateless era; Detail names
	// the keys and actions, Source says how: input_required or
	// tasks/update).
	EventInput EventKind = "input"
	// EventError: something went wrong (Err); the call may go on.
	EventError EventKind = "error"
)

// Sources: which mechanism brought a segment, a partial or a status.
const (
	SourceResponse     = "response"     // the tools/call answer (first or later, same id)
	SourceTasksResult  = "tasks/result" // tasks/result (with or without lastSeqNr)
	SourceTasksGet     = "tasks/get"    // a tasks/get poll
	SourceNotification = "notification" // notifications/tasks/status or /partial
	SourceCancel       = "tasks/cancel" // the tasks/cancel answer
)

// Event is one entry of a call's timeline. Only the fields its Kind names
// are set.
type Event struct {
	At   time.Time
	Kind EventKind
	// Method is the JSON-RPC method, or for EventHTTPRequest the HTTP
	// method.
	Method    string
	RequestID mcp.ID
	TaskID    string
	// SeqNr is a SEP-1905 sequence number (from 1); Seq a SEP-2679 one
	// (from 0).
	SeqNr  int64
	Seq    int64
	Status mcp.TaskStatus
	// Source is the mechanism that brought it (Source* constants).
	Source string
	// Bytes is the size of the content (text or data) for a segment or
	// partial, the request size for an HTTP request.
	Bytes       int64
	HTTPStatus  int
	LastEventID string
	Detail      string
	Err         error
}

// recorder keeps one call's timeline. add may be called from several
// goroutines (the transport reports HTTP requests from its own); OnEvent
// is called under the lock, one event at a time, in timeline order.
type recorder struct {
	now     func() time.Time
	onEvent func(Event)
	discard bool // keep no events (CallOptions.NoTimeline)
	mu      sync.Mutex
	events  []Event
	// What CallResult reports of the timeline even without it.
	firstContent time.Time
	httpRequests int
}

func (r *recorder) add(e Event) {
	if r == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	e.At = r.now()
	switch e.Kind {
	case EventHTTPRequest:
		r.httpRequests++
	case EventSegment, EventPartial:
		if r.firstContent.IsZero() {
			r.firstContent = e.At
		}
	}
	if !r.discard {
		r.events = append(r.events, e)
	}
	if r.onEvent != nil {
		r.onEvent(e)
	}
}

// timeline returns a copy of the events so far, the first content's
// arrival and the HTTP requests counted.
func (r *recorder) timeline() ([]Event, time.Time, int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]Event, len(r.events))
	copy(out, r.events)
	return out, r.firstContent, r.httpRequests
}

// contentBytes is the size of a block's payload: text, data or resource.
func contentBytes(blocks ...mcp.ContentBlock) int64 {
	var n int64
	for _, b := range blocks {
		n += int64(len(b.Text) + len(b.Data) + len(b.Resource))
	}
	return n
}
