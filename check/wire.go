package check

import (
	"bytes"
	"encoding/json"
	"strconv"
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

// decodeWire splits a message into its members without copying them: ID,
// Params and Result alias raw. A message that is not a valid JSON object,
// or whose method or error has the wrong type, is nil.
func decodeWire(raw []byte) *wireMsg {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || raw[0] != '{' || !json.Valid(raw) {
		return nil
	}
	var m wireMsg
	ok := true
	members(raw, func(name, v []byte) {
		switch string(name) {
		case `"id"`:
			m.ID = v
		case `"method"`:
			if v[0] != '"' {
				ok = false
			} else if bytes.IndexByte(v, '\\') < 0 {
				m.Method = string(v[1 : len(v)-1])
			} else {
				ok = ok && json.Unmarshal(v, &m.Method) == nil
			}
		case `"params"`:
			m.Params = v
		case `"result"`:
			m.Result = v
		case `"error"`:
			m.Error = nil
			if string(v) != "null" {
				m.Error = &wireError{}
				ok = ok && json.Unmarshal(v, m.Error) == nil
			}
		}
	})
	if !ok {
		return nil
	}
	return &m
}

// members calls f with the name (quoted, as on the wire) and the value of
// each member of obj, a valid JSON object, in order.
func members(obj []byte, f func(name, value []byte)) {
	i := skipSpace(obj, 1)
	for i < len(obj) && obj[i] == '"' {
		end := skipValue(obj, i)
		name := obj[i:end]
		i = skipSpace(obj, end)
		i = skipSpace(obj, i+1) // the colon
		end = skipValue(obj, i)
		f(name, obj[i:end])
		i = skipSpace(obj, end)
		if i < len(obj) && obj[i] == ',' {
			i = skipSpace(obj, i+1)
		}
	}
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// skipString returns the end of the valid JSON string at b[i]: the
// closing quote is the first one not escaped by an odd run of
// backslashes.
func skipString(b []byte, i int) int {
	i++
	for {
		q := bytes.IndexByte(b[i:], '"')
		if q < 0 {
			return len(b)
		}
		i += q
		n := 0
		for n < i && b[i-1-n] == '\\' {
			n++
		}
		i++
		if n%2 == 0 {
			return i
		}
	}
}

// skipValue returns the end of the valid JSON value at b[i].
func skipValue(b []byte, i int) int {
	depth := 0
	for i < len(b) {
		switch b[i] {
		case '"':
			i = skipString(b, i)
		case '{', '[':
			depth++
			i++
		case '}', ']':
			if depth == 0 {
				return i
			}
			depth--
			i++
		case ',', ' ', '\t', '\n', '\r', ':':
			if depth == 0 {
				return i
			}
			i++
		default:
			i++
		}
		if depth == 0 && i > 0 && (b[i-1] == '"' || b[i-1] == '}' || b[i-1] == ']') {
			return i
		}
	}
	return i
}

// wireTask is a Task object, with the presence of ttl kept.
type wireTask struct {
	TaskID        *string          `json:"taskId"`
	Status        *string          `json:"status"`
	CreatedAt     *string          `json:"createdAt"`
	LastUpdatedAt *string          `json:"lastUpdatedAt"`
	TTL           *json.RawMessage `json:"ttl"`
	PollInterval  *float64         `json:"pollInterval"`
	StatusMessage *string          `json:"statusMessage"`
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

// wireSegment is one entry of partial-content: a content block with its
// seqNr (SEP-1905, Case 3). Raw is its text, seqNr included.
type wireSegment struct {
	SeqNr json.RawMessage
	Raw   string
}

func (s *wireSegment) UnmarshalJSON(b []byte) error {
	s.Raw = string(b)
	if len(b) > 0 && b[0] == '{' {
		members(b, func(name, v []byte) {
			if string(name) == `"seqNr"` {
				s.SeqNr = v
			}
		})
	}
	return nil
}

// segmentBlock returns a segment as the content block it carries: without
// its seqNr, members sorted.
func segmentBlock(raw string) string {
	var m map[string]json.RawMessage
	if json.Unmarshal([]byte(raw), &m) != nil {
		return raw
	}
	delete(m, "seqNr")
	out, _ := json.Marshal(m)
	return string(out)
}

// canonicalBlocks returns a content array in the form merged segments
// take (each block's members sorted), or its compact text if it is not an
// array of objects.
func canonicalBlocks(raw json.RawMessage) string {
	var blocks []map[string]json.RawMessage
	if json.Unmarshal(raw, &blocks) != nil {
		return canonical(raw)
	}
	out, err := json.Marshal(blocks)
	if err != nil {
		return canonical(raw)
	}
	return string(out)
}

// wireResult is the union of the results the rules read: a tools/call
// result (immediate, CreateTaskResult, SEP-1905 streaming), a tasks/get
// result (a Task), a tasks/list result, a tasks/result result.
type wireResult struct {
	Task           *wireTask       `json:"task"`
	PartialContent []wireSegment   `json:"partial-content"`
	HasPartial     bool            `json:"-"`
	Content        json.RawMessage `json:"content"`
	IsComplete     *bool           `json:"isComplete"`
	IsError        *bool           `json:"isError"`
	Tasks          []wireTask      `json:"tasks"`
	Capabilities   json.RawMessage `json:"capabilities"`
	// related is the related-task meta's taskId; fallback: the meta
	// carries the fallback-mode warning.
	related  string
	fallback bool
	// As a Task itself (tasks/get, tasks/cancel).
	wireTask
}

// decodeResult reads a result object member by member (the message was
// validated whole by decodeWire). A member of the wrong type is absent; a
// result that is not an object is nil.
func decodeResult(raw json.RawMessage) *wireResult {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || raw[0] != '{' {
		return nil
	}
	var r wireResult
	members(raw, func(name, v []byte) {
		switch string(name) {
		case `"task"`:
			r.Task = decodeTask(v)
		case `"partial-content"`:
			if v[0] == '[' {
				r.HasPartial = true
				r.PartialContent = make([]wireSegment, 0, 2)
				elements(v, func(e []byte) {
					var seg wireSegment
					_ = seg.UnmarshalJSON(e)
					r.PartialContent = append(r.PartialContent, seg)
				})
			}
		case `"content"`:
			r.Content = v
		case `"isComplete"`:
			r.IsComplete = jsonBool(v)
		case `"isError"`:
			r.IsError = jsonBool(v)
		case `"tasks"`:
			if v[0] == '[' {
				elements(v, func(e []byte) {
					if t := decodeTask(e); t != nil {
						r.Tasks = append(r.Tasks, *t)
					}
				})
			}
		case `"_meta"`:
			if v[0] == '{' {
				members(v, func(name, v []byte) {
					switch string(name) {
					case `"io.modelcontextprotocol/related-task"`:
						if v[0] == '{' {
							members(v, func(name, v []byte) {
								if string(name) == `"taskId"` {
									r.related, _ = jsonString(v)
								}
							})
						}
					case `"io.modelcontextprotocol/fallback-mode"`:
						r.fallback = true
					}
				})
			}
		case `"capabilities"`:
			r.Capabilities = v
		default:
			r.wireTask.member(name, v)
		}
	})
	return &r
}

// decodeTask reads a Task object; nil if v is not an object.
func decodeTask(v []byte) *wireTask {
	v = bytes.TrimSpace(v)
	if len(v) == 0 || v[0] != '{' {
		return nil
	}
	var t wireTask
	members(v, t.member)
	return &t
}

// member reads one member of a Task.
func (t *wireTask) member(name, v []byte) {
	str := func() *string {
		s, ok := jsonString(v)
		if !ok {
			return nil
		}
		return &s
	}
	switch string(name) {
	case `"taskId"`:
		t.TaskID = str()
	case `"status"`:
		t.Status = str()
	case `"createdAt"`:
		t.CreatedAt = str()
	case `"lastUpdatedAt"`:
		t.LastUpdatedAt = str()
	case `"ttl"`:
		ttl := json.RawMessage(v)
		t.TTL = &ttl
	case `"pollInterval"`:
		if f, err := strconv.ParseFloat(string(v), 64); err == nil {
			t.PollInterval = &f
		}
	case `"statusMessage"`:
		t.StatusMessage = str()
	}
}

// elements calls f with each element of arr, a valid JSON array.
func elements(arr []byte, f func(e []byte)) {
	i := skipSpace(arr, 1)
	for i < len(arr) && arr[i] != ']' {
		end := skipValue(arr, i)
		f(arr[i:end])
		i = skipSpace(arr, end)
		if i < len(arr) && arr[i] == ',' {
			i = skipSpace(arr, i+1)
		}
	}
}

// jsonString returns the string a valid JSON string token holds.
func jsonString(v []byte) (string, bool) {
	if len(v) < 2 || v[0] != '"' {
		return "", false
	}
	if bytes.IndexByte(v, '\\') < 0 {
		return string(v[1 : len(v)-1]), true
	}
	var s string
	return s, json.Unmarshal(v, &s) == nil
}

func jsonBool(v []byte) *bool {
	var b bool
	switch string(v) {
	case "true":
		b = true
	case "false":
	default:
		return nil
	}
	return &b
}

// relatedTask returns the related-task meta's taskId of a result.
func (r *wireResult) relatedTask() string { return r.related }

// hasFallbackWarning reports whether a task-mode answer says it fell back:
// in the fallback-mode meta, or in the created task's statusMessage
// (SEP-1905, Capability Negotiation: "The warning MAY be included in the
// _meta field of the response ... or in a statusMessage field if a task
// is created").
func (r *wireResult) hasFallbackWarning() bool {
	return r.fallback || r.Task != nil && r.Task.StatusMessage != nil && *r.Task.StatusMessage != ""
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
	Capabilities *wireCaps `json:"capabilities"`
}

// wireCaps are the task capabilities a side declares in initialize.
type wireCaps struct {
	Tasks *struct {
		Responses *struct {
			Modes []string `json:"modes"`
		} `json:"responses"`
		Streaming *struct {
			Partial json.RawMessage `json:"partial"`
		} `json:"streaming"`
	} `json:"tasks"`
}

// decodeParams reads the params the rules need; the nested task and
// capabilities (one per call or session) the slow way.
func decodeParams(raw json.RawMessage) *wireParams {
	var p wireParams
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || raw[0] != '{' {
		return &p
	}
	members(raw, func(name, v []byte) {
		switch string(name) {
		case `"taskId"`:
			p.TaskID, _ = jsonString(v)
		case `"lastSeqNr"`:
			p.LastSeqNr = v
		case `"seq"`:
			p.Seq = v
		case `"content"`:
			p.Content = v
		case `"task"`:
			if json.Unmarshal(v, &p.Task) != nil {
				p.Task = nil
			}
		case `"capabilities"`:
			if json.Unmarshal(v, &p.Capabilities) != nil {
				p.Capabilities = nil
			}
		}
	})
	return &p
}

// canonical compacts JSON so that two encodings of one value compare equal
// when they differ only in white space.
func canonical(raw json.RawMessage) string {
	if bytes.IndexAny(raw, " \t\r\n") < 0 {
		return string(raw)
	}
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
