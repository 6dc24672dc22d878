package faults

import (
	"encoding/json"
	"strconv"

	"github.com/tasksim/tasksim/mcp"
	"github.com/tasksim/tasksim/traces"
)

// Stream kinds a fault can be addressed to (stream=...).
const (
	// StreamRequest is an HTTP request on its way to the server, before it
	// reaches it.
	StreamRequest = "request"
	// StreamPost is the answer to a POST: a JSON body or an SSE stream.
	StreamPost = "post"
	// StreamGet is a GET stream: the standalone stream or a resumed one.
	StreamGet = "get"
	// StreamStdin and StreamStdout are the two directions of stdio, and of
	// an in-process Conn (client to server, server to client).
	StreamStdin  = "stdin"
	StreamStdout = "stdout"
)

// Places where faults act.
const (
	PlaceHTTP  = "http"  // the HTTP middleware: requests, response heads, SSE events, JSON bodies
	PlaceStdio = "stdio" // the stdio line filter, both directions
	PlaceConn  = "conn"  // the mcp.Conn decorator of in-process runs
)

// Msg is one protocol message as the fault layer sees it: an HTTP request,
// one SSE event, a JSON body, a stdio line, or a message through a Conn.
// The place that saw it fills what it knows.
type Msg struct {
	// Place is where the message was seen (PlaceHTTP, ...).
	Place string
	// SSE marks an SSE event.
	SSE bool
	// Stream is the stream's kind (StreamPost, ...); StreamID names this
	// one stream in the run, stably: "post:<session>/<request id>",
	// "get:<session>/<n>", "stdout".
	Stream   string
	StreamID string
	// N is the message's position in its stream, from 1.
	N int
	// Dir is the way the message travels.
	Dir traces.Direction
	// EventID is the SSE event id, if any.
	EventID string
	// Raw is the JSON-RPC message (an SSE event's data, a line, a body);
	// nil for an HTTP request without a JSON-RPC body.
	Raw []byte
	// RPC describes Raw (traces.DescribeMessage); nil when Raw is not a
	// JSON-RPC message.
	RPC *traces.RPCFields
	// ReqMethod is, for a response or an event of a request's stream, the
	// method of that request; for a request, its own method.
	ReqMethod string
	// Revision is the protocol revision (era) the message belongs to, by
	// the rules of package rev20260728 (ClaimedRevision, Eras): over HTTP,
	// its request's, which the request's _meta claims (2026-07-28 by its
	// per-request protocolVersion, 2025-11-25 for initialize) or else its
	// head says (MCP-Protocol-Version, or a session's Mcp-Session-Id:
	// 2025-11-25); over stdio and through a Conn, the line's or message's
	// own claim, else its request's, else the connection's (through a
	// Conn, the one it reports, mcp.RevisionOfConn). Zero when none of
	// these says.
	Revision mcp.Revision
}

// NewMsg returns a Msg for raw, described.
func NewMsg(place, stream, streamID string, n int, dir traces.Direction, raw []byte) *Msg {
	m := &Msg{Place: place, Stream: stream, StreamID: streamID, N: n, Dir: dir, Raw: raw}
	if raw != nil {
		m.RPC = traces.DescribeMessage(raw)
	}
	if m.RPC != nil && m.RPC.Type == "request" {
		m.ReqMethod = m.RPC.Method
	}
	return m
}

// paramsOf returns the params of raw when rpc describes it as a request or
// a notification (by them a client's message claims a revision,
// rev20260728.ClaimedRevision), else nil.
func paramsOf(rpc *traces.RPCFields, raw []byte) json.RawMessage {
	if rpc == nil || rpc.Method == "" {
		return nil
	}
	var m struct {
		Params json.RawMessage `json:"params"`
	}
	if json.Unmarshal(raw, &m) != nil {
		return nil
	}
	return m.Params
}

// Method is the JSON-RPC method the message carries, or of the request it
// answers.
func (m *Msg) Method() string {
	if m.RPC != nil && m.RPC.Method != "" {
		return m.RPC.Method
	}
	return m.ReqMethod
}

// identity is what names the message across runs: its stream, position and
// ids, never when it passed.
func (m *Msg) identity() string {
	s := m.StreamID + "#" + strconv.Itoa(m.N) + "#" + m.EventID
	if m.RPC != nil {
		s += "#" + m.RPC.ID + "#" + m.RPC.Method
	}
	return s
}

// Target names the message a fault acted on, for the trace and the
// schedule.
type Target struct {
	Stream  string  `json:"stream,omitempty"`
	N       int     `json:"n,omitempty"`
	EventID string  `json:"eventId,omitempty"`
	Method  string  `json:"method,omitempty"`
	RPCID   string  `json:"id,omitempty"`
	TaskID  string  `json:"taskId,omitempty"`
	SeqNrs  []int64 `json:"seqNrs,omitempty"`
	Seq     int64   `json:"seq,omitempty"`
	HasSeq  bool    `json:"hasSeq,omitempty"`
}

// String is the target on one line: "post:s1/7#3 id=7 tools/call seqNr=2".
func (t Target) String() string {
	s := t.Stream + "#" + strconv.Itoa(t.N)
	if t.EventID != "" {
		s += " event=" + t.EventID
	}
	if t.RPCID != "" {
		s += " id=" + t.RPCID
	}
	if t.Method != "" {
		s += " " + t.Method
	}
	if t.TaskID != "" {
		s += " task=" + t.TaskID
	}
	for _, n := range t.SeqNrs {
		s += " seqNr=" + strconv.FormatInt(n, 10)
	}
	if t.HasSeq {
		s += " seq=" + strconv.FormatInt(t.Seq, 10)
	}
	return s
}

// Target describes the message for a trace fault record.
func (m *Msg) Target() Target {
	t := Target{Stream: m.StreamID, N: m.N, EventID: m.EventID, Method: m.Method()}
	if m.RPC != nil {
		t.RPCID = m.RPC.ID
		t.TaskID = m.RPC.TaskID
		t.SeqNrs = m.RPC.SeqNrs
		if m.RPC.HasSeq {
			t.Seq, t.HasSeq = m.RPC.Seq, true
		}
	}
	return t
}
