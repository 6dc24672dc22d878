package mcp

import (
	"bytes"
	"encoding/json"
	"unicode/utf8"
)

// ObjectMembers returns the members of raw as json.Unmarshal into a
// map[string]json.RawMessage returns them, or nil when raw is not a JSON
// object (null, another value, invalid JSON, nothing). A valid UTF-8 object
// is read in one pass (objectMembers); the values share one copy of raw.
func ObjectMembers(raw json.RawMessage) map[string]json.RawMessage {
	if i := skipSpace(raw, 0); i < len(raw) && raw[i] == '{' && json.Valid(raw) && utf8.Valid(raw) {
		return objectMembers(raw[i:])
	}
	var members map[string]json.RawMessage
	if len(raw) == 0 || json.Unmarshal(raw, &members) != nil {
		return nil
	}
	return members
}

// objectMembers returns the members of the JSON object data as a map of
// raw values, as json.Unmarshal into a map[string]json.RawMessage would
// (the last of duplicate names wins), in one pass over data instead of
// encoding/json's two and without copying each value: the values share
// one copy of data. data must be valid UTF-8 and valid JSON (json.Valid)
// whose first byte is '{'.
func objectMembers(data []byte) map[string]json.RawMessage {
	return objectMembersShared(bytes.Clone(data))
}

// objectMembersShared is objectMembers without the copy: the values are
// slices of data, for a caller that copies what it keeps.
func objectMembersShared(data []byte) map[string]json.RawMessage {
	members := make(map[string]json.RawMessage, 8)
	eachMember(data, func(name, value []byte) bool {
		members[unquoteKey(name)] = value
		return true
	})
	return members
}

// eachMember calls f with each member of the JSON object data, in order:
// its name as written (quotes included) and its raw value, without
// surrounding space. data must be as objectMembers wants it for the
// members to be right; on other bytes eachMember stops, reporting false,
// at the first thing out of place, and never reads past data. It stops,
// reporting false, when f returns false.
func eachMember(data []byte, f func(name, value []byte) bool) bool {
	i := skipSpace(data, 1)
	if i < len(data) && data[i] == '}' {
		return true
	}
	for {
		if i >= len(data) || data[i] != '"' {
			return false
		}
		end := endOfString(data, i)
		if end-1 <= i || data[end-1] != '"' {
			return false
		}
		name := data[i:end]
		i = skipSpace(data, end) // at ':'
		if i >= len(data) || data[i] != ':' {
			return false
		}
		i = skipSpace(data, i+1) // at the value
		if i >= len(data) {
			return false
		}
		end = endOfValue(data, i)
		if end == i || !f(name, data[i:end:end]) {
			return false
		}
		i = skipSpace(data, end) // at ',' or '}'
		switch {
		case i < len(data) && data[i] == '}':
			return true
		case i >= len(data) || data[i] != ',':
			return false
		}
		i = skipSpace(data, i+1)
	}
}

// envelopeNames are the members of a JSON-RPC message DecodeMessage reads.
var envelopeNames = [...]string{"jsonrpc", "id", "method", "params", "result", "error"}

// envelope holds a message's envelopeNames members as objectMembers would
// map them (the last of duplicate names wins), without the map: a map was
// the largest allocation of DecodeMessage.
type envelope struct {
	vals [len(envelopeNames)]json.RawMessage
	has  [len(envelopeNames)]bool
}

// get returns the member named key, one of envelopeNames.
func (e *envelope) get(key string) (json.RawMessage, bool) {
	for i, n := range envelopeNames {
		if n == key {
			return e.vals[i], e.has[i]
		}
	}
	return nil, false
}

// envelopeMembers reads the envelope members of data, which must be as
// objectMembers wants it; the values are slices of data.
func envelopeMembers(data []byte) (e envelope) {
	eachMember(data, func(name, value []byte) bool {
		key := unquoteKey(name)
		for k, n := range envelopeNames {
			if n == key {
				e.vals[k], e.has[k] = value, true
				break
			}
		}
		return true
	})
	return e
}

// skipSpace returns the index of the first byte at or after i that is not
// JSON whitespace.
func skipSpace(data []byte, i int) int {
	for i < len(data) {
		switch data[i] {
		case ' ', '\t', '\r', '\n':
			i++
		default:
			return i
		}
	}
	return i
}

// endOfString returns the index after the string that starts at i.
func endOfString(data []byte, i int) int {
	for j := i + 1; j < len(data); j++ {
		switch data[j] {
		case '\\':
			j++
		case '"':
			return j + 1
		}
	}
	return len(data)
}

// endOfValue returns the index after the value that starts at i.
func endOfValue(data []byte, i int) int {
	switch data[i] {
	case '"':
		return endOfString(data, i)
	case '{', '[':
		depth := 0
		for j := i; j < len(data); j++ {
			switch data[j] {
			case '"':
				j = endOfString(data, j) - 1
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return j + 1
				}
			}
		}
		return len(data)
	}
	j := i
	for j < len(data) {
		switch data[j] {
		case ',', '}', ']', ' ', '\t', '\r', '\n':
			return j
		}
		j++
	}
	return j
}

// unquoteKey decodes a member name (a valid JSON string with its quotes).
func unquoteKey(raw []byte) string {
	inner := raw[1 : len(raw)-1]
	switch string(inner) { // the envelope's names, without allocating
	case "jsonrpc":
		return "jsonrpc"
	case "id":
		return "id"
	case "method":
		return "method"
	case "params":
		return "params"
	case "result":
		return "result"
	case "error":
		return "error"
	case "type": // a content block's
		return "type"
	case "text":
		return "text"
	case "seqNr":
		return "seqNr"
	}
	if bytes.IndexByte(inner, '\\') < 0 {
		return string(inner)
	}
	var s string
	_ = json.Unmarshal(raw, &s) // valid JSON: cannot fail
	return s
}

// decodeString decodes the JSON value raw into *s as json.Unmarshal does,
// without its second pass over a string that has no escapes.
func decodeString(raw []byte, s *string) error {
	if n := len(raw); n >= 2 && raw[0] == '"' && raw[n-1] == '"' {
		if inner := raw[1 : n-1]; bytes.IndexByte(inner, '\\') < 0 && bytes.IndexByte(inner, '"') < 0 && utf8.Valid(inner) && !hasControl(inner) {
			*s = string(inner)
			return nil
		}
	}
	return json.Unmarshal(raw, s)
}

// hasControl reports whether b holds a byte below 0x20, which a JSON
// string may not hold unescaped.
func hasControl(b []byte) bool {
	for _, c := range b {
		if c < 0x20 {
			return true
		}
	}
	return false
}
