package mcp

import (
	"encoding/json"
	"strconv"
)

// plainPartialResult is PartialResult without its MarshalJSON:
// encoding/json's own encoding, which MarshalJSON falls back to.
type plainPartialResult PartialResult

// MarshalJSON implements json.Marshaler. It writes the bytes encoding/json
// writes for the struct (TestPartialResultMarshal and
// FuzzPartialResultMarshal hold it to that) without reflection: a server
// streaming to thousands of clients encodes one of these per segment.
// Blocks with raw members (annotations, _meta, resource, others) and a
// _meta other than the related-task key alone go to encoding/json, which
// compacts and escapes raw JSON.
func (p PartialResult) MarshalJSON() ([]byte, error) {
	n := 160
	for i := range p.PartialContent {
		n += 48 + len(p.PartialContent[i].Text) + len(p.PartialContent[i].Data)
	}
	if b, ok := p.appendJSON(make([]byte, 0, n)); ok {
		return b, nil
	}
	return json.Marshal(plainPartialResult(p))
}

func (p *PartialResult) appendJSON(dst []byte) ([]byte, bool) {
	dst = append(dst, '{')
	if p.Task != nil {
		dst = append(dst, `"task":`...)
		dst = p.Task.appendJSON(dst)
		dst = append(dst, ',')
	}
	dst = append(dst, `"partial-content":`...)
	if p.PartialContent == nil {
		dst = append(dst, "null"...)
	} else {
		dst = append(dst, '[')
		for i := range p.PartialContent {
			s := &p.PartialContent[i]
			if !s.plain() {
				return nil, false
			}
			if i > 0 {
				dst = append(dst, ',')
			}
			var err error
			if dst, err = s.ContentBlock.appendJSON(dst, &s.SeqNr); err != nil {
				return nil, false
			}
		}
		dst = append(dst, ']')
	}
	if len(p.Content) > 0 {
		dst = append(dst, `,"content":[`...)
		for i := range p.Content {
			if !p.Content[i].plain() {
				return nil, false
			}
			if i > 0 {
				dst = append(dst, ',')
			}
			var err error
			if dst, err = p.Content[i].appendJSON(dst, nil); err != nil {
				return nil, false
			}
		}
		dst = append(dst, ']')
	}
	dst = append(dst, `,"isError":`...)
	dst = strconv.AppendBool(dst, p.IsError)
	dst = append(dst, `,"isComplete":`...)
	dst = strconv.AppendBool(dst, p.IsComplete)
	if len(p.Meta) > 0 {
		rt, ok := p.Meta[MetaRelatedTask].(RelatedTask)
		if !ok || len(p.Meta) != 1 {
			return nil, false
		}
		dst = append(dst, `,"_meta":{`...)
		dst = appendString(dst, MetaRelatedTask)
		dst = append(dst, `:{"taskId":`...)
		dst = appendString(dst, rt.TaskID)
		dst = append(dst, "}}"...)
	}
	return append(dst, '}'), true
}

// plain reports whether the block has no raw JSON members, so that its
// appendJSON is what encoding/json writes for it.
func (c *ContentBlock) plain() bool {
	return c.Resource == nil && c.Annotations == nil && c.Meta == nil && c.Extra == nil
}

// appendJSON writes the task as encoding/json does.
func (t *Task) appendJSON(dst []byte) []byte {
	dst = append(dst, `{"taskId":`...)
	dst = appendString(dst, t.TaskID)
	dst = append(dst, `,"status":`...)
	dst = appendString(dst, string(t.Status))
	if t.StatusMessage != "" {
		dst = append(dst, `,"statusMessage":`...)
		dst = appendString(dst, t.StatusMessage)
	}
	dst = append(dst, `,"createdAt":`...)
	dst = appendString(dst, t.CreatedAt)
	dst = append(dst, `,"lastUpdatedAt":`...)
	dst = appendString(dst, t.LastUpdatedAt)
	dst = append(dst, `,"ttl":`...)
	if t.TTL == nil {
		dst = append(dst, "null"...)
	} else {
		dst = strconv.AppendInt(dst, *t.TTL, 10)
	}
	if t.PollInterval != nil {
		dst = append(dst, `,"pollInterval":`...)
		dst = strconv.AppendInt(dst, *t.PollInterval, 10)
	}
	return append(dst, '}')
}
