package check

import (
	"bytes"
	"encoding/json"
	"time"
)

// The checker decodes only what its rules need, leniently: a trace shows
// traffic that breaks the protocol too, and a field it cannot read is
// simply absent.

type wireMsg struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
	Result json.RawMessage `json:"result"`
	Error  *wireError      `json:"error"`
}

type wireError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

func decodeWire(raw []byte) *wireMsg {
	var m wireMsg
	if json.Unmarshal(raw, &m) != nil {
		return nil
	}
	return &m
}

// wireTask is a Task object, with the presence of ttl kept.
type wireTask struct {
	TaskID        *string         `json:"taskId"`
	Status        *string         `json:"status"`
	CreatedAt     *string         `json:"createdAt"`
	LastUpdatedAt *string         `json:"lastUpdatedAt"`
	TTL           json.RawMessage `json:"ttl"` // "null" when null, empty when absent
	PollInterval  *float64        `json:"pollInterval"`
}

func (t *wireTask) id() string {
	if t == nil || t.TaskID == nil {
		return ""
	}
	return *t.TaskID
}

func (t *wireTask) status() string {
	if t == nil || t.Status == nil {
		return ""
	}
	return *t.Status
}

type wireSegment struct {
	SeqNr   json.RawMessage `json:"seqNr"`
	Content json.RawMessage `json:"content"`
}

// UnmarshalJSON reads a segment as SEP-1905 shapes it: a ContentBlock
// with a seqNr member ("Response Format"). Content is then the block
// without seqNr, keys sorted, as it appears once merged; a segment that
// wraps its block in a content member keeps that member.
func (s *wireSegment) UnmarshalJSON(b []byte) error {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		return err
	}
	s.SeqNr = m["seqNr"]
	if c, ok := m["content"]; ok {
		s.Content = c
		return nil
	}
	delete(m, "seqNr")
	s.Content, _ = json.Marshal(m)
	return nil
}

// sortedJSON is raw re-encoded with object keys sorted, to compare JSON
// values whatever their key order.
func sortedJSON(raw json.RawMessage) string {
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return canonical(raw)
	}
	b, _ := json.Marshal(v)
	return string(b)
}

// wireResult is the union of the results the rules read: a tools/call
// result (immediate, CreateTaskResult, SEP-1905 streaming), a tasks/get
// result (a Task), a tasks/list result, a tasks/result result.
type wireResult struct {
	Task           *wireTask                  `json:"task"`
	PartialContent []wireSegment              `json:"partial-content"`
	HasPartial     bool                       `json:"-"`
	Content        json.RawMessage            `json:"content"`
	IsComplete     *bool                      `json:"isComplete"`
	IsError        *bool                      `json:"isError"`
	Tasks          []wireTask                 `json:"tasks"`
	Meta           map[string]any             `json:"_meta"`
	Raw            map[string]json.RawMessage `json:"-"`
	// As a Task itself (tasks/get, tasks/cancel).
	wireTask
}

func decodeResult(raw json.RawMessage) *wireResult {
	if len(raw) == 0 {
		return nil
	}
	var r wireResult
	if json.Unmarshal(raw, &r) != nil {
		return nil
	}
	if json.Unmarshal(raw, &r.Raw) != nil {
		return nil
	}
	_, r.HasPartial = r.Raw["partial-content"]
	return &r
}

// relatedTask returns the related-task meta's taskId of a result.
func (r *wireResult) relatedTask() string {
	rt, ok := r.Meta["io.modelcontextprotocol/related-task"].(map[string]any)
	if !ok {
		return ""
	}
	s, _ := rt["taskId"].(string)
	return s
}

func (r *wireResult) hasFallbackWarning() bool {
	_, ok := r.Meta["io.modelcontextprotocol/fallback-mode"]
	return ok
}

type wireParams struct {
	TaskID    string          `json:"taskId"`
	LastSeqNr json.RawMessage `json:"lastSeqNr"`
	Seq       json.RawMessage `json:"seq"`
	Content   json.RawMessage `json:"content"`
	Task      *struct {
		TTL           json.RawMessage `json:"ttl"`
		ResponseModes []string        `json:"responseModes"`
	} `json:"task"`
	Capabilities *struct {
		Tasks *struct {
			Responses *struct {
				Modes []string `json:"modes"`
			} `json:"responses"`
			Streaming *struct {
				Partial json.RawMessage `json:"partial"`
			} `json:"streaming"`
		} `json:"tasks"`
	} `json:"capabilities"`
}

func decodeParams(raw json.RawMessage) *wireParams {
	var p wireParams
	if len(raw) == 0 || json.Unmarshal(raw, &p) != nil {
		return &wireParams{}
	}
	return &p
}

// canonical compacts JSON so that two encodings of one value compare equal
// when they differ only in white space.
func canonical(raw json.RawMessage) string {
	var b bytes.Buffer
	if json.Compact(&b, raw) != nil {
		return string(raw)
	}
	return b.String()
}

// isISO8601 accepts RFC 3339 timestamps, the profile of ISO 8601 the
// protocol's examples use.
func isISO8601(s string) bool {
	_, err := time.Parse(time.RFC3339Nano, s)
	return err == nil
}

func isTerminal(status string) bool {
	return status == "completed" || status == "failed" || status == "cancelled"
}

var knownStatus = map[string]bool{"working": true, "input_required": true, "completed": true, "failed": true, "cancelled": true}

// legalTransition is the Task Status Lifecycle (2025-11-25 Tasks, Behavior
// Requirements): working and input_required move to any other status; a
// terminal status moves nowhere. Repeating a status is no transition.
func legalTransition(from, to string) bool {
	if from == to {
		return true
	}
	switch from {
	case "working", "input_required":
		return knownStatus[to]
	}
	return false
}
