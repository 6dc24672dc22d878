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
	KindConnClose    Kind = 2  // it closed cleanly
	KindConnError    Kind = 3  // it broke (Note says how): a disconnect on either side
	KindRequestHead  Kind = 4  // an HTTP request line and headers (HTTP)
	KindResponseHead Kind = 5  // an HTTP status line and headers (HTTP)
	KindBodyChunk    Kind = 6  // bytes of an HTTP body as they passed (Raw)
	KindSSEEvent     Kind = 7  // one whole SSE event (SSE; Raw is its bytes on the wire)
	KindMessage      Kind = 8  // one JSON-RPC message (RPC; Raw is its JSON)
	KindStdioLine    Kind = 9  // one line of a stdio stream (Raw, without the newline)
	KindFault        Kind = 10 // a fault tasksim injected (Note describes it)
	KindAnnotation   Kind = 11 // free text (Note)
	KindBodyEnd      Kind = 12 // an HTTP body ended (Note: "eof" or the error)
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
	// Note is free text: the error of a conn-error, a fault's description,
	// an annotation.
	Note string
}

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
	Seed int64
	// Labels are free-form, in order.
	Labels []Label
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
