package mcp

import (
	"bytes"
	"encoding/json"
	"strconv"
	"unicode/utf8"
)

// A partial notification is the one message a streaming task sends many
// of (SEP-2679 §1.2), so its params are encoded and decoded without
// encoding/json's reflection and its second validating pass: at 50,000
// partials a second those were the largest items in the CPU profiles of
// both the server and the load generator.

// MarshalJSON implements json.Marshaler with AppendJSON: the same bytes as
// encoding/json writes for the struct.
func (p TaskPartialParams) MarshalJSON() ([]byte, error) {
	n := 64
	for i := range p.Content {
		n += 32 + len(p.Content[i].Text) + len(p.Content[i].Data)
	}
	return p.AppendJSON(make([]byte, 0, n))
}

// AppendJSON appends the params' JSON encoding to dst: the members in the
// order of the struct, "content" null when nil, "_meta" only when it has
// keys.
func (p TaskPartialParams) AppendJSON(dst []byte) ([]byte, error) {
	dst = append(dst, `{"taskId":`...)
	dst = appendString(dst, p.TaskID)
	dst = append(dst, `,"content":`...)
	if p.Content == nil {
		dst = append(dst, "null"...)
	} else {
		dst = append(dst, '[')
		for i := range p.Content {
			if i > 0 {
				dst = append(dst, ',')
			}
			var err error
			if dst, err = p.Content[i].appendJSON(dst, nil); err != nil {
				return nil, err
			}
		}
		dst = append(dst, ']')
	}
	dst = append(dst, `,"seq":`...)
	dst = strconv.AppendInt(dst, p.Seq, 10)
	if len(p.Meta) > 0 {
		b, err := json.Marshal(p.Meta)
		if err != nil {
			return nil, err
		}
		dst = append(dst, `,"_meta":`...)
		dst = append(dst, b...)
	}
	return append(dst, '}'), nil
}

// encodesCompact reports whether AppendJSON writes what json.Marshal would
// write, compacted and checked: true unless a content block carries raw
// JSON members (annotations, _meta, resource), which encoding/json checks
// and compacts and AppendJSON copies as they are.
func (p *TaskPartialParams) encodesCompact() bool {
	for i := range p.Content {
		c := &p.Content[i]
		if len(c.Annotations) > 0 || len(c.Meta) > 0 || len(c.Resource) > 0 || len(c.Extra) > 0 {
			return false
		}
	}
	return true
}

// UnmarshalJSON implements json.Unmarshaler: the params are checked once
// and read in one pass, each content block from the same checked bytes.
// Anything but the usual shape (a member other than the four, a
// duplicate, a null, a seq that is not a plain integer, a bad block) is
// decoded by encoding/json, so the result, error included, is the one
// encoding/json gives.
func (p *TaskPartialParams) UnmarshalJSON(b []byte) error {
	if t := bytes.TrimSpace(b); len(t) > 0 && t[0] == '{' && utf8.Valid(t) && json.Valid(t) {
		q := *p
		if q.decodeValid(t) {
			*p = q
			return nil
		}
	}
	return json.Unmarshal(b, (*taskPartialParams)(p))
}

// taskPartialParams is TaskPartialParams without its JSON methods: what
// encoding/json makes of the struct.
type taskPartialParams TaskPartialParams

// decodeValid reads valid JSON whose first byte is '{' into p and reports
// whether it could; on false p is partly filled and must be dropped.
func (p *TaskPartialParams) decodeValid(data []byte) bool {
	var seen [4]bool // taskId, content, seq, _meta
	return eachMember(data, func(name, v []byte) bool {
		if v[0] == 'n' { // null: encoding/json leaves the field as it was
			return false
		}
		var k int
		switch string(name) {
		case `"taskId"`:
			k = 0
			if decodeString(v, &p.TaskID) != nil {
				return false
			}
		case `"content"`:
			k = 1
			if !p.decodeContent(v) {
				return false
			}
		case `"seq"`:
			k = 2
			n, err := strconv.ParseInt(string(v), 10, 64)
			if err != nil {
				return false
			}
			p.Seq = n
		case `"_meta"`:
			k = 3
			if json.Unmarshal(v, &p.Meta) != nil {
				return false
			}
		default: // unknown, or a name encoding/json would match ignoring case
			return false
		}
		if seen[k] {
			return false
		}
		seen[k] = true
		return true
	})
}

// decodeContent reads a valid JSON array of content blocks.
func (p *TaskPartialParams) decodeContent(v []byte) bool {
	if v[0] != '[' {
		return false
	}
	n := 0 // count the blocks first: one allocation for the slice
	for i := skipSpace(v, 1); v[i] != ']'; {
		i = skipSpace(v, endOfValue(v, i))
		n++
		if v[i] == ',' {
			i = skipSpace(v, i+1)
		}
	}
	blocks := make([]ContentBlock, n)
	i := skipSpace(v, 1)
	for k := range blocks {
		end := endOfValue(v, i)
		if v[i] != '{' || blocks[k].decodeValid(v[i:end]) != nil {
			return false
		}
		i = skipSpace(v, end)
		if v[i] == ',' {
			i = skipSpace(v, i+1)
		}
	}
	p.Content = blocks
	return true
}

// NewPartialNotification builds notifications/tasks/partial with p as its
// params, encoded without reflection when it can be (see encodesCompact).
func NewPartialNotification(p TaskPartialParams) (*Message, error) {
	if !p.encodesCompact() {
		return NewNotification(NotificationTaskPartial, p)
	}
	raw, err := p.MarshalJSON()
	if err != nil {
		return nil, err
	}
	return &Message{Method: NotificationTaskPartial, Params: raw}, nil
}
