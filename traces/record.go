package traces

import (
	"slices"
	"strconv"
	"strings"
	"time"
)

// Direction says which way a record's bytes travelled.
type Direction uint8

// Directions.
const (
	DirNone           Direction = iota // connection events, annotations
	DirClientToServer                  // requests, stdin
	DirServerToClient                  // responses, SSE events, stdout
)

func (d Direction) String() string {
	switch d {
	case DirClientToServer:
		return "c>s"
	case DirServerToClient:
		return "s>c"
	}
	return "-"
}

// Kind says what a record is.
type Kind uint8

// Record kinds. The numbers are part of the file format: never reuse one.
const (
	KindConnOpen     Kind = 1  // a connection (TCP, or a stdio child) opened
	KindConnClose    Kind = 2  // it closed (End: how)
	KindConnError    Kind = 3  // it broke (End: who cut it; Note: the details)
	KindRequestHead  Kind = 4  // an HTTP request line and headers (HTTP)
	KindResponseHead Kind = 5  // an HTTP status line and headers (HTTP)
	KindBodyChunk    Kind = 6  // bytes of an HTTP body as they passed (Raw)
	KindSSEEvent     Kind = 7  // one whole SSE event (SSE; Raw is its bytes on the wire)
	KindMessage      Kind = 8  // one JSON-RPC message (RPC; Raw is its JSON)
	KindStdioLine    Kind = 9  // one line of a stdio stream (Raw, without the newline)
	KindFault        Kind = 10 // a fault tasksim injected (Fault; Note: the same for a human)
	KindAnnotation   Kind = 11 // free text (Note)
	KindBodyEnd      Kind = 12 // an HTTP body ended (End: how; Note: the details)
)

var kindNames = map[Kind]string{
	KindConnOpen: "conn-open", KindConnClose: "conn-close", KindConnError: "conn-error",
	KindRequestHead: "request-head", KindResponseHead: "response-head", KindBodyChunk: "body-chunk",
	KindSSEEvent: "sse-event", KindMessage: "message", KindStdioLine: "stdio-line",
	KindFault: "fault", KindAnnotation: "annotation", KindBodyEnd: "body-end",
}

func (k Kind) String() string {
	if s, ok := kindNames[k]; ok {
		return s
	}
	return "kind-" + itoa(int(k))
}

// ParseKind returns the kind named s (as String writes it, including
// "kind-N" for a number this version does not name).
func ParseKind(s string) (Kind, bool) {
	for k, n := range kindNames {
		if n == s {
			return k, true
		}
	}
	if rest, ok := strings.CutPrefix(s, "kind-"); ok {
		if n, err := strconv.ParseUint(rest, 10, 8); err == nil && n > 0 {
			return Kind(n), true
		}
	}
	return 0, false
}

// ParseDirection returns the direction named s (as String writes it).
func ParseDirection(s string) (Direction, bool) {
	switch s {
	case "c>s":
		return DirClientToServer, true
	case "s>c":
		return DirServerToClient, true
	case "-", "":
		return DirNone, true
	}
	return 0, false
}

func itoa(n int) string {
	if n == 0 {
		return "0"
	}
	var b [20]byte
	i := len(b)
	neg := n < 0
	if neg {
		n = -n
	}
	for n > 0 {
		i--
		b[i] = byte('0' + n%10)
		n /= 10
	}
	if neg {
		i--
		b[i] = '-'
	}
	return string(b[i:])
}

// Record is one entry of a trace.
//
// Streams are named by the recorder: over HTTP "post:<exchange>" for the
// response stream of a POST, "get:<exchange>" for a GET stream (standalone
// or resumed), "req:<exchange>" for a request body; over stdio "stdin",
// "stdout" and "stderr".
type Record struct {
	// Index counts records from 0 in file order.
	Index uint64
	// Offset is the monotonic time since the trace started.
	Offset time.Duration
	// Wall is the wall-clock time of the record.
	Wall time.Time
	// Conn identifies the connection (from 1; 0: none).
	Conn uint64
	// Exchange identifies an HTTP request and its response (from 1; 0:
	// none, e.g. over stdio).
	Exchange uint64
	Stream   string
	Dir      Direction
	Kind     Kind
	// Raw is the bytes as they were on the wire (after redaction).
	Raw []byte
	// HTTP is set on request and response heads.
	HTTP *HTTPHead
	// SSE is set on SSE events.
	SSE *SSEFields
	// RPC is set on JSON-RPC messages.
	RPC *RPCFields
	// Note is free text for a human: the error of a conn-error, a fault's
	// description, an annotation. Nothing reads meaning out of it: that
	// is in the typed fields (End, Fault, Batch, SSE.NoData).
	Note string
	// Fault is set on fault records: which fault, with which parameters,
	// on which message, doing what.
	Fault *Fault
	// Side says where the record was observed when a fault layer sits
	// between client and server (format version 2); SideWire otherwise.
	Side Side
	// Oversize marks bytes of a message too long to be taken whole (an
	// SSE event over sse.MaxBlock, a stdio line over its bound): they
	// passed on as they came, in pieces, unparsed, and unseen by any
	// fault layer. A message's pieces are consecutive records of its
	// stream (body chunks, or stdio lines); the last ends it.
	Oversize bool
	// End says how the body, stream or connection of an end record
	// (body-end, conn-close, conn-error) ended (format version 3; read
	// from the Note of older traces).
	End End
	// Batch is the position, counted from 1, of a message taken out of a
	// JSON-RPC batch; 0 for a message that was not in one (format
	// version 3).
	Batch uint32
	// Revision is the MCP revision (era) the record belongs to, when the
	// recorder knew it: "2025-11-25" for a message of a session opened
	// with initialize, "2026-07-28" for a request that carries that
	// revision's per-request _meta and for what answers it. A dual-era
	// endpoint mixes them in one trace; "" is unknown, and then the
	// header's Protocol is the default (format version 3, added later: a
	// record without it reads "").
	Revision string
}

// Side says on which side of a fault layer a record was observed.
//
// Without a fault layer, client and server see the same messages and a
// recorder records each once, on the wire (SideWire). With one, what the
// server sent and what the client received may differ: a recorder on each
// side of the fault layer records what it sees, SideServer between the
// fault layer and the server, SideClient between the client and the fault
// layer. The client's view of a run is its SideWire and SideClient
// records; the server's view is its SideWire and SideServer records.
type Side uint8

// Sides. The numbers are part of the file format.
const (
	SideWire   Side = 0 // no fault layer between: both ends saw this
	SideClient Side = 1 // between the client and the fault layer
	SideServer Side = 2 // between the fault layer and the server
)

func (s Side) String() string {
	switch s {
	case SideWire:
		return "wire"
	case SideClient:
		return "client"
	case SideServer:
		return "server"
	}
	return "side-" + itoa(int(s))
}

// ParseSide returns the side named s (as String writes it, "" for wire).
func ParseSide(s string) (Side, bool) {
	switch s {
	case "wire", "":
		return SideWire, true
	case "client":
		return SideClient, true
	case "server":
		return SideServer, true
	}
	if rest, ok := strings.CutPrefix(s, "side-"); ok {
		if n, err := strconv.ParseUint(rest, 10, 8); err == nil {
			return Side(n), true
		}
	}
	return 0, false
}

// InView reports whether a record observed on side s belongs to the view
// of the given end (SideClient or SideServer): its own side's records and
// the wire's.
func (s Side) InView(end Side) bool { return s == SideWire || s == end }

// HTTPHead is an HTTP request or response head.
type HTTPHead struct {
	Method string // request
	URL    string // request: path and query as sent
	Proto  string
	Status int // response
	// Header keeps header fields in wire order, names as sent.
	Header []HeaderField
}

// HeaderField is one header line.
type HeaderField struct {
	Name, Value string
}

// SSEFields are the fields of one SSE event.
type SSEFields struct {
	ID       string
	HasID    bool
	Event    string
	Data     string
	Retry    time.Duration
	HasRetry bool
	// NoData marks a block with fields but no data: a reader dispatches
	// no event, yet its id sets the resume point and its retry the
	// reconnection time (format version 3).
	NoData bool
}

// RPCFields are what a trace reader wants to find in a JSON-RPC message
// without parsing it again.
type RPCFields struct {
	// Type is "request", "notification" or "response".
	Type   string
	Method string
	// ID is the id as on the wire (`7`, `"a"`), "" when absent.
	ID string
	// TaskID is the task the message is about: params.taskId,
	// result.task.taskId, result.taskId, or the related-task meta.
	TaskID string
	// Status is a task status the message carries, if any.
	Status string
	// SeqNrs are the SEP-1905 seqNr values of the partial-content
	// segments it carries; Seq is a SEP-2679 partial's seq (HasSeq).
	SeqNrs []int64
	Seq    int64
	HasSeq bool
	// IsComplete is SEP-1905's isComplete, when present (HasIsComplete).
	IsComplete    bool
	HasIsComplete bool
	// ErrorCode is the JSON-RPC error code of an error response.
	ErrorCode int
	// ResultType is result.resultType, what kind of result a response of
	// MCP 2026-07-28 is: "complete", "input_required", "task"
	// (2026-07-28 Overview, "Result types"); "" when it has none.
	ResultType string
}

// Label is one free-form key/value of a trace header.
type Label struct {
	Key, Value string
}

// Header opens every trace.
type Header struct {
	// FormatVersion is the trace format version the file was written in.
	FormatVersion int
	Created       time.Time
	// TasksimVersion is the version of tasksim that wrote it.
	TasksimVersion string
	// Command is the command line that made the trace.
	Command []string
	// Protocol is the MCP revision of the traffic, when known.
	Protocol string
	// Seed is the seed of the run's random choices (faults); 0 if none.
	// Format version 1 stored it as an int64: a negative seed of such a
	// file reads as its two's complement.
	Seed uint64
	// Labels are free-form, in order.
	Labels []Label
	// Faults is the run's resolved fault schedule; nil when the run had
	// no fault layer.
	Faults *Schedule
}

// Schedule is what a run's fault layer was told and what it decided
// before the run. Decisions taken during the run are fault records.
type Schedule struct {
	// Specs are the fault specs as given (--fault), in order.
	Specs []string
	// Decisions are the decisions taken up front, one line each, in the
	// order they were taken: the resolved schedule.
	Decisions []string
	// Note is free text, such as "decisions are in the fault records".
	Note string
}

// Param is one parameter of a fault ("nth" = "3").
type Param struct {
	Key, Value string
}

// Fault is what a fault record says: which fault acted, with which
// parameters, on which message, and what it did.
type Fault struct {
	// Name is the fault's name in the catalog: "drop-sse-event",
	// "disconnect", "delay".
	Name string
	// Params are the fault's parameters, in the order of its spec.
	Params []Param
	// Target is the message (or stream, or connection) it acted on.
	Target Target
	// Action says what it did, for a human: "dropped", "duplicated",
	// "delayed 200ms". Nothing reads it back: Verb and its parameters
	// say the same.
	Action string
	// Verb is what it did (format version 3; read from Action in older
	// traces), Delay how long it held the message (VerbDelay) or moved
	// the clock (VerbAdvance), Status the HTTP status it answered with
	// (VerbStatus).
	Verb   Verb
	Delay  time.Duration
	Status int
}

// Target names what a fault acted on, as far as the fault layer knows it;
// zero fields are unknown or do not apply.
type Target struct {
	Conn, Exchange uint64
	Stream         string
	// EventID is the SSE event id (HasEventID: the event had one).
	EventID    string
	HasEventID bool
	// RPCID is the JSON-RPC id as on the wire (`7`, `"a"`); Method the
	// JSON-RPC method (of the request, for a response).
	RPCID  string
	Method string
	TaskID string
	// SeqNr is a SEP-1905 segment's seqNr (HasSeqNr); Seq a SEP-2679
	// partial's seq (HasSeq).
	SeqNr    int64
	HasSeqNr bool
	Seq      int64
	HasSeq   bool
	// Record is the index of the message's record in this trace, when the
	// fault layer knows it (HasRecord).
	Record    uint64
	HasRecord bool
}

// String is the fault on one line: name, parameters, target and action,
// `drop-sse-event nth=3 on stream=post:2 event-id=5 id=7 seqNr=3 record=12: dropped`.
func (f *Fault) String() string {
	if f == nil {
		return ""
	}
	var b strings.Builder
	b.WriteString(f.Name)
	for _, p := range f.Params {
		b.WriteString(" " + p.Key + "=" + p.Value)
	}
	if t := f.Target.String(); t != "" {
		b.WriteString(" on " + t)
	}
	if f.Action != "" {
		b.WriteString(": " + f.Action)
	}
	return b.String()
}

// String lists the known fields of t, `stream=post:2 event-id=5 id=7`.
func (t Target) String() string {
	var parts []string
	add := func(k, v string) { parts = append(parts, k+"="+v) }
	if t.Conn != 0 {
		add("conn", strconv.FormatUint(t.Conn, 10))
	}
	if t.Exchange != 0 {
		add("exchange", strconv.FormatUint(t.Exchange, 10))
	}
	if t.Stream != "" {
		add("stream", t.Stream)
	}
	if t.HasEventID {
		add("event-id", t.EventID)
	}
	if t.RPCID != "" {
		add("id", t.RPCID)
	}
	if t.Method != "" {
		add("method", t.Method)
	}
	if t.TaskID != "" {
		add("task", t.TaskID)
	}
	if t.HasSeqNr {
		add("seqNr", strconv.FormatInt(t.SeqNr, 10))
	}
	if t.HasSeq {
		add("seq", strconv.FormatInt(t.Seq, 10))
	}
	if t.HasRecord {
		add("record", strconv.FormatUint(t.Record, 10))
	}
	return strings.Join(parts, " ")
}

// Clone returns a deep copy of f.
func (f *Fault) Clone() *Fault {
	if f == nil {
		return nil
	}
	c := *f
	c.Params = slices.Clone(f.Params)
	return &c
}

// Clone returns a deep copy of s.
func (s *Schedule) Clone() *Schedule {
	if s == nil {
		return nil
	}
	return &Schedule{Specs: slices.Clone(s.Specs), Decisions: slices.Clone(s.Decisions), Note: s.Note}
}

// Clone returns a deep copy of r: its Raw, HTTP, SSE and RPC are its own.
func (r Record) Clone() Record {
	c := r
	if r.Raw != nil {
		c.Raw = slices.Clone(r.Raw)
	}
	if r.HTTP != nil {
		h := *r.HTTP
		h.Header = slices.Clone(r.HTTP.Header)
		c.HTTP = &h
	}
	if r.SSE != nil {
		s := *r.SSE
		c.SSE = &s
	}
	if r.RPC != nil {
		p := *r.RPC
		p.SeqNrs = slices.Clone(r.RPC.SeqNrs)
		c.RPC = &p
	}
	c.Fault = r.Fault.Clone()
	return c
}

// Get returns the value of the first header field named name (case
// insensitive), and whether there is one.
func (h *HTTPHead) Get(name string) (string, bool) {
	if h == nil {
		return "", false
	}
	for _, f := range h.Header {
		if strings.EqualFold(f.Name, name) {
			return f.Value, true
		}
	}
	return "", false
}
