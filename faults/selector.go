package faults

import (
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/tasksim/tasksim/mcp"
	"github.com/tasksim/tasksim/traces"
)

// Selector is the part of a spec every fault shares: which messages it is
// addressed to. A zero field matches everything.
//
//	stream=request|post|get|stdin|stdout   the stream's kind
//	method=NAME      the JSON-RPC method, or of the request a response answers
//	id=ID            the JSON-RPC id as on the wire (7, "a")
//	task=ID          the task the message is about
//	seqnr=N          a SEP-1905 segment number the message carries
//	seq=N            a SEP-2679 partial's seq
//	nth=N            the message's position in its stream, from 1
//	revision=R       the protocol revision the message belongs to
//	                 (2025-11-25, 2026-07-28: Msg.Revision)
//	p=P              act with probability P, drawn from the seed and the message
//	count=N          act at most N times in the run
type Selector struct {
	Stream, Method, ID, Task string
	Revision                 mcp.Revision
	SeqNr, Seq, Nth          int64 // -1: any
	P                        float64
	Count                    int64 // 0: no limit
}

// selectorKeys are the shared parameter names.
var selectorKeys = []string{"stream", "method", "id", "task", "seqnr", "seq", "nth", "revision", "p", "count"}

func isSelectorKey(k string) bool {
	for _, s := range selectorKeys {
		if s == k {
			return true
		}
	}
	return false
}

func parseSelector(p *Params) Selector {
	return Selector{
		Stream:   p.Choice("stream", "", StreamRequest, StreamPost, StreamGet, StreamStdin, StreamStdout),
		Method:   p.String("method", ""),
		ID:       p.String("id", ""),
		Task:     p.String("task", ""),
		SeqNr:    p.Int("seqnr", -1, 1, math.MaxInt64),
		Seq:      p.Int("seq", -1, 0, math.MaxInt64),
		Nth:      p.Int("nth", -1, 1, math.MaxInt32),
		Revision: p.Revision("revision"),
		P:        p.Prob("p", 1),
		Count:    p.Int("count", 0, 1, math.MaxInt32),
	}
}

// matches reports whether m is addressed, before the probability draw and
// the count.
func (s *Selector) matches(m *Msg) bool {
	return s.matchesPlace(m) && s.matchesRPC(m.RPC)
}

// matchesPlace looks at where m is: its stream, method, position and
// revision.
func (s *Selector) matchesPlace(m *Msg) bool {
	if s.Stream != "" && s.Stream != m.Stream {
		return false
	}
	if s.Revision != "" && s.Revision != m.Revision {
		return false
	}
	if s.Method != "" && s.Method != m.Method() && s.Method != m.ReqMethod {
		return false
	}
	return s.Nth < 0 || int64(m.N) == s.Nth
}

// matchesRPC looks at what the message says, rpc (nil: not JSON-RPC): its
// id, task and sequence numbers.
func (s *Selector) matchesRPC(rpc *traces.RPCFields) bool {
	if s.ID == "" && s.Task == "" && s.SeqNr < 0 && s.Seq < 0 {
		return true
	}
	switch {
	case rpc == nil:
		return false
	case s.ID != "" && !sameID(rpc.ID, s.ID):
		return false
	case s.Task != "" && rpc.TaskID != s.Task:
		return false
	case s.SeqNr >= 0 && !slices.Contains(rpc.SeqNrs, s.SeqNr):
		return false
	case s.Seq >= 0 && (!rpc.HasSeq || rpc.Seq != s.Seq):
		return false
	}
	return true
}

// sameID compares a wire id with one given in a spec, where quotes are
// optional: id=a matches "a", id=7 matches 7.
func sameID(wire, given string) bool {
	if wire == given {
		return true
	}
	if u, err := strconv.Unquote(wire); err == nil && u == given {
		return true
	}
	return strings.Trim(given, `"`) == strings.Trim(wire, `"`) && wire != ""
}
