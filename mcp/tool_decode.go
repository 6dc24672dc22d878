package mcp

import (
	"bytes"
	"encoding/json"
	"strconv"
	"unicode/utf8"
)

// plainToolCallResponse is ToolCallResponse without its UnmarshalJSON:
// encoding/json's own decoding, which UnmarshalJSON falls back to.
type plainToolCallResponse ToolCallResponse

// UnmarshalJSON implements json.Unmarshaler. It decodes as encoding/json
// would decode the struct (FuzzToolCallResponse holds it to that), in one
// pass over the bytes: a client following thousands of SEP-1905 streams
// decodes a response per segment, and encoding/json's reflection, its
// second pass over each segment (for Segment's own UnmarshalJSON) and its
// generic decoding of _meta were a third of a load generator's CPU. What
// the one pass does not handle exactly (a member name matching only
// case-insensitively, a value of an unexpected type, invalid UTF-8, a
// response decoded into one already holding values) goes to encoding/json.
func (r *ToolCallResponse) UnmarshalJSON(b []byte) error {
	if utf8.Valid(b) && json.Valid(b) {
		return r.unmarshalValid(b, false)
	}
	return json.Unmarshal(b, (*plainToolCallResponse)(r))
}

// UnmarshalValid is UnmarshalJSON for a result DecodeMessage has checked
// already (valid JSON, valid UTF-8): it does not check the bytes again,
// which was a tenth of a client's CPU following thousands of streams. On
// other bytes the outcome is unspecified, but it never panics
// (FuzzToolCallResponse).
func (r *ToolCallResponse) UnmarshalValid(b []byte) error {
	return r.unmarshalValid(b, false)
}

// UnmarshalValidNoMeta is UnmarshalValid that leaves Meta nil, for a
// client that reads _meta only from some answers: a SEP-1905 response in
// the middle of a stream carries the related-task key, which the client
// knows by then, and decoding it into maps was a fifth of the
// allocations of a generator following thousands of streams. What is
// wrong inside _meta alone goes unseen.
func (r *ToolCallResponse) UnmarshalValidNoMeta(b []byte) error {
	return r.unmarshalValid(b, true)
}

func (r *ToolCallResponse) unmarshalValid(b []byte, noMeta bool) error {
	if t := bytes.TrimSpace(b); r.isZero() && len(t) > 0 && t[0] == '{' {
		var fast ToolCallResponse
		if fast.decodeValid(t, noMeta) {
			*r = fast
			return nil
		}
	}
	err := json.Unmarshal(b, (*plainToolCallResponse)(r))
	if noMeta {
		r.Meta = nil
	}
	return err
}

func (r *ToolCallResponse) isZero() bool {
	return r.Content == nil && r.StructuredContent == nil && !r.IsError && r.Task == nil &&
		r.PartialContent == nil && r.IsComplete == nil && r.Meta == nil
}

// toolCallResponseNames are ToolCallResponse's JSON member names.
var toolCallResponseNames = []string{"content", "structuredContent", "isError", "task", "partial-content", "isComplete", "_meta"}

// decodeValid decodes t, a valid JSON object in valid UTF-8, into the
// zero r (without _meta when noMeta), and reports false where
// encoding/json must decide instead.
func (r *ToolCallResponse) decodeValid(t []byte, noMeta bool) bool {
	return eachMember(t, func(name, v []byte) bool {
		switch string(name) {
		case `"content"`:
			return decodeSlice(v, &r.Content, func(b *ContentBlock, e []byte) error { return b.decodeValid(e) })
		case `"partial-content"`:
			return decodeSlice(v, &r.PartialContent, (*Segment).decodeValid)
		case `"isError"`:
			return decodeBool(v, &r.IsError)
		case `"isComplete"`:
			switch string(v) {
			case "null":
				r.IsComplete = nil
				return true
			case "true", "false":
				b := v[0] == 't'
				r.IsComplete = &b
				return true
			}
			return false
		case `"task"`:
			switch {
			case string(v) == "null":
				r.Task = nil
				return true
			case v[0] == '{':
				if r.Task == nil {
					r.Task = &Task{}
				}
				return r.Task.decodeValid(v)
			}
			return false
		case `"_meta"`:
			switch {
			case noMeta:
				return true
			case string(v) == "null":
				r.Meta = nil
				return true
			case v[0] == '{':
				if r.Meta == nil {
					r.Meta = Meta{}
				}
				return decodeObjectInto(v, r.Meta)
			}
			return false
		case `"structuredContent"`:
			if string(v) == "null" {
				return false
			}
			r.StructuredContent = bytes.Clone(v)
			return true
		}
		return !foldsToAny(name, toolCallResponseNames)
	})
}

// taskNames are Task's JSON member names.
var taskNames = []string{"taskId", "status", "statusMessage", "createdAt", "lastUpdatedAt", "ttl", "pollInterval"}

// decodeValid decodes the valid object t into t's fields as encoding/json
// would into an existing Task (members absent stay as they are), and
// reports false where encoding/json must decide instead.
func (task *Task) decodeValid(t []byte) bool {
	return eachMember(t, func(name, v []byte) bool {
		switch string(name) {
		case `"taskId"`:
			return decodeStringMember(v, &task.TaskID)
		case `"status"`:
			return decodeStringMember(v, (*string)(&task.Status))
		case `"statusMessage"`:
			return decodeStringMember(v, &task.StatusMessage)
		case `"createdAt"`:
			return decodeStringMember(v, &task.CreatedAt)
		case `"lastUpdatedAt"`:
			return decodeStringMember(v, &task.LastUpdatedAt)
		case `"ttl"`:
			return decodeIntPtr(v, &task.TTL)
		case `"pollInterval"`:
			return decodeIntPtr(v, &task.PollInterval)
		}
		return !foldsToAny(name, taskNames)
	})
}

// eachElement calls f with each element of the JSON array t, in order,
// until f returns false. Like eachMember, it stops at anything out of
// place on bytes that are not valid JSON, and never reads past t.
func eachElement(t []byte, f func(e []byte) bool) bool {
	i := skipSpace(t, 1)
	if i < len(t) && t[i] == ']' {
		return true
	}
	for {
		if i >= len(t) {
			return false
		}
		end := endOfValue(t, i)
		if end == i || !f(t[i:end]) {
			return false
		}
		i = skipSpace(t, end) // at ',' or ']'
		switch {
		case i < len(t) && t[i] == ']':
			return true
		case i >= len(t) || t[i] != ',':
			return false
		}
		i = skipSpace(t, i+1)
	}
}

// decodeSlice decodes the valid array v of objects, each with decode, into
// a new slice (null: nil), as encoding/json does into a nil slice; any
// other element, or an error, is for encoding/json to report.
func decodeSlice[T any](v []byte, into *[]T, decode func(*T, []byte) error) bool {
	switch v[0] {
	case 'n':
		*into = nil
		return true
	case '[':
	default:
		return false
	}
	out := make([]T, 0, 1)
	ok := eachElement(v, func(e []byte) bool {
		if e[0] != '{' {
			return false
		}
		var x T
		if decode(&x, e) != nil {
			return false
		}
		out = append(out, x)
		return true
	})
	if ok {
		*into = out
	}
	return ok
}

func decodeBool(v []byte, into *bool) bool {
	switch string(v) {
	case "true":
		*into = true
	case "false":
		*into = false
	case "null": // leaves it as it was, as encoding/json does
	default:
		return false
	}
	return true
}

// decodeStringMember decodes a string member; null leaves it unchanged.
func decodeStringMember(v []byte, into *string) bool {
	switch v[0] {
	case '"':
		return decodeString(v, into) == nil
	case 'n':
		return true
	}
	return false
}

// decodeIntPtr decodes an integer member into a new int64 (null: nil), as
// encoding/json does into a nil *int64.
func decodeIntPtr(v []byte, into **int64) bool {
	if string(v) == "null" {
		*into = nil
		return true
	}
	n, err := strconv.ParseInt(string(v), 10, 64)
	if err != nil {
		return false
	}
	*into = &n
	return true
}

// decodeObjectInto decodes the valid object t into m as encoding/json
// decodes into a map[string]any: values as in decodeAny, the last of
// duplicate names winning.
func decodeObjectInto(t []byte, m map[string]any) bool {
	return eachMember(t, func(name, v []byte) bool {
		x, ok := decodeAny(v)
		m[unquoteKey(name)] = x
		return ok
	})
}

// decodeAny decodes the valid JSON value v as encoding/json decodes into
// an any: map[string]any, []any, string, float64, bool or nil.
func decodeAny(v []byte) (any, bool) {
	switch v[0] {
	case '{':
		m := map[string]any{}
		return m, decodeObjectInto(v, m)
	case '[':
		a := []any{}
		ok := eachElement(v, func(e []byte) bool {
			x, ok := decodeAny(e)
			a = append(a, x)
			return ok
		})
		return a, ok
	case '"':
		var s string
		return s, decodeString(v, &s) == nil
	case 't':
		return true, true
	case 'f':
		return false, true
	case 'n':
		return nil, true
	}
	f, err := strconv.ParseFloat(string(v), 64)
	return f, err == nil
}

// foldsToAny reports whether a member name as written (quotes included),
// not one of names exactly, could still be matched to one by
// encoding/json, which matches names without regard to case: a name
// with an escape or outside ASCII is treated as a possible match.
func foldsToAny(name []byte, names []string) bool {
	key := name[1 : len(name)-1]
	for _, c := range key {
		if c >= utf8.RuneSelf || c == '\\' {
			return true
		}
	}
	for _, n := range names {
		if bytes.EqualFold(key, []byte(n)) {
			return true
		}
	}
	return false
}

// MoreToFollow reports whether a tools/call result says "isComplete":
// false: a SEP-1905 streaming response after which more responses with
// the same id follow ("Response Format"). It answers as decoding the
// result with encoding/json into a struct of that one member would
// (FuzzMoreToFollow), without decoding the rest: a client's transport
// asks it of every response on a stream.
//
// result must be valid JSON, as DecodeMessage leaves a message's result:
// the client's transport asks about every message it decoded, and a
// second check of the bytes was a tenth of a load generator's CPU. On
// other bytes the answer is unspecified (but it never panics).
func MoreToFollow(result json.RawMessage) bool {
	t := bytes.TrimSpace(result)
	if len(t) == 0 || t[0] != '{' {
		var r struct {
			IsComplete *bool `json:"isComplete"`
		}
		return json.Unmarshal(result, &r) == nil && r.IsComplete != nil && !*r.IsComplete
	}
	var isComplete []byte
	typeError := false
	eachMember(t, func(name, v []byte) bool {
		key := name[1 : len(name)-1]
		if bytes.IndexByte(key, '\\') >= 0 {
			key = []byte(unquoteKey(name))
		}
		if bytes.EqualFold(key, isCompleteName) { // encoding/json matches names so
			switch string(v) {
			case "true", "false":
				isComplete = v
			case "null":
				isComplete = nil
			default:
				typeError = true
			}
		}
		return true
	})
	return !typeError && string(isComplete) == "false"
}

var isCompleteName = []byte("isComplete")
