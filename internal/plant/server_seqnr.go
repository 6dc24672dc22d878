package plant

import (
	"bytes"
	"context"
	"encoding/json"
	"slices"
	"strconv"
	"sync"

	"github.com/tasksim/tasksim/mcp"
)

// Planted bugs of SEP-1905's sequence numbers: how segments are numbered
// and what a resume (tasks/result with lastSeqNr) returns.

// SeqNrFromZero numbers SEP-1905 segments from 0 (S1905-SEQNR: "seqNr
// values start from 1", Sequence Number Requirements). Every segment the
// server sends says one less than it is, and a resume after lastSeqNr k
// is read as after k+1, as a server that numbered from 0 would.
func SeqNrFromZero(inner mcp.Endpoint) mcp.Endpoint {
	return &endpoint{inner: inner, hooks: hooks{
		handle: func(ctx context.Context, msg *mcp.Message, r mcp.Replier, next func(*mcp.Message, mcp.Replier)) {
			if k, ok := lastSeqNrOf(msg); ok && k >= 1 {
				msg = withLastSeqNr(msg, k+1)
			}
			next(msg, r)
		},
		reply: func(ctx context.Context, msg *mcp.Message, final bool, next mcp.Replier) error {
			if msg != nil && isSegmentResponse(msg) {
				c := *msg
				c.Result = editSegments(msg.Result, func(n int64) int64 { return n - 1 })
				msg = &c
			}
			return next.Reply(ctx, msg, final)
		},
	}}
}

// LastSeqNrZero accepts tasks/result with lastSeqNr 0 and answers with
// every segment, instead of -32602 (S1905-LASTSEQNR-INVALID: "lastSeqNr
// of 0 or less is invalid", Case 3 › Resuming Streaming).
func LastSeqNrZero(inner mcp.Endpoint) mcp.Endpoint {
	return resumeFrom(inner, func(msg *mcp.Message) (int64, bool) {
		p := paramsOf(msg)
		return 1, string(bytes.TrimSpace(p.LastSeqNr)) == "0"
	})
}

// ResumeOffByOne answers tasks/result with lastSeqNr k from segment k
// instead of k+1: the client gets segment k twice (S1905-RESUME:
// "return segments with seqNr > lastSeqNr").
func ResumeOffByOne(inner mcp.Endpoint) mcp.Endpoint {
	return resumeFrom(inner, func(msg *mcp.Message) (int64, bool) {
		k, ok := lastSeqNrOf(msg)
		return k, ok && k >= 1
	})
}

// maxFirstSegments bounds the first segments resumeFrom keeps.
const maxFirstSegments = 10_000

// resumeFrom answers each tasks/result for which from says so with the
// segments from seqNr n on (n >= 1) where the server would give those
// after lastSeqNr. A correct server gives no segment 1 to any lastSeqNr,
// so the decorator keeps the first segment of each task as the server
// sent it and puts it in front where n is 1.
func resumeFrom(inner mcp.Endpoint, from func(*mcp.Message) (int64, bool)) mcp.Endpoint {
	var mu sync.Mutex
	first := map[string]json.RawMessage{} // task id -> its segment 1
	firstOf := func(id string) json.RawMessage {
		mu.Lock()
		defer mu.Unlock()
		return first[id]
	}
	return &endpoint{inner: inner, hooks: hooks{
		handle: func(ctx context.Context, msg *mcp.Message, r mcp.Replier, next func(*mcp.Message, mcp.Replier)) {
			n, ok := from(msg)
			if msg.Method != mcp.MethodTasksResult || !ok || r == nil {
				next(msg, r)
				return
			}
			if n >= 2 {
				next(withLastSeqNr(msg, n-1), r)
				return
			}
			id := paramsOf(msg).TaskID
			next(withLastSeqNr(msg, 1), replier{inner: r, reply: func(ctx context.Context, m *mcp.Message, final bool, out mcp.Replier) error {
				if seg := firstOf(id); seg != nil && m != nil && isSegmentResponse(m) {
					if res := decodeObject(m.Result); res != nil {
						var segs []json.RawMessage
						if json.Unmarshal(res[fieldPartialContent], &segs) == nil {
							res[fieldPartialContent], _ = json.Marshal(append([]json.RawMessage{seg}, segs...))
							m = withResult(m, res)
						}
					}
				}
				return out.Reply(ctx, m, final)
			}})
		},
		reply: func(ctx context.Context, msg *mcp.Message, final bool, next mcp.Replier) error {
			if msg != nil && isSegmentResponse(msg) {
				if id, seg := segmentOne(msg.Result); seg != nil {
					mu.Lock()
					if first[id] == nil && len(first) < maxFirstSegments {
						first[id] = seg
					}
					mu.Unlock()
				}
			}
			return next.Reply(ctx, msg, final)
		},
	}}
}

// segmentOne returns the task a streaming response names (its task, or
// its related-task meta) and the response's segment with seqNr 1, if any.
func segmentOne(result json.RawMessage) (string, json.RawMessage) {
	var r struct {
		Task *struct {
			TaskID string `json:"taskId"`
		} `json:"task"`
		Segments []json.RawMessage `json:"partial-content"`
		Meta     json.RawMessage   `json:"_meta"`
	}
	if json.Unmarshal(result, &r) != nil {
		return "", nil
	}
	id := relatedTask(r.Meta)
	if r.Task != nil && r.Task.TaskID != "" {
		id = r.Task.TaskID
	}
	i := slices.IndexFunc(r.Segments, func(s json.RawMessage) bool {
		var seg struct {
			SeqNr int64 `json:"seqNr"`
		}
		return json.Unmarshal(s, &seg) == nil && seg.SeqNr == 1
	})
	if id == "" || i < 0 {
		return "", nil
	}
	return id, r.Segments[i]
}

// lastSeqNrOf returns the lastSeqNr of a tasks/result as a JSON integer,
// as the server reads it; false for any other message or value.
func lastSeqNrOf(msg *mcp.Message) (int64, bool) {
	if msg.Method != mcp.MethodTasksResult {
		return 0, false
	}
	raw := bytes.TrimSpace(paramsOf(msg).LastSeqNr)
	if len(raw) == 0 {
		return 0, false
	}
	n, err := strconv.ParseInt(string(raw), 10, 64)
	return n, err == nil
}

// withLastSeqNr returns a copy of msg with lastSeqNr n.
func withLastSeqNr(msg *mcp.Message, n int64) *mcp.Message {
	p := decodeObject(msg.Params)
	if p == nil {
		return msg
	}
	p["lastSeqNr"] = json.RawMessage(strconv.FormatInt(n, 10))
	return withParams(msg, p)
}
