package mcp

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"unicode/utf8"
)

// Content block types.
const (
	ContentText         = "text"
	ContentImage        = "image"
	ContentAudio        = "audio"
	ContentResourceLink = "resource_link"
	ContentResource     = "resource"
)

// ContentBlock is one item of a tool result's content: text, image, audio,
// resource link or embedded resource. Members tasksim does not know, and
// blocks of types it does not know, are kept in Extra and written back
// unchanged, so a block survives a round trip through tasksim whole.
type ContentBlock struct {
	Type        string
	Text        string          // text
	Data        string          // image, audio: base64
	MimeType    string          // image, audio, resource_link
	URI         string          // resource_link
	Name        string          // resource_link
	Title       string          // resource_link
	Description string          // resource_link
	Size        *int64          // resource_link
	Resource    json.RawMessage // resource: the embedded resource contents
	Annotations json.RawMessage
	Meta        json.RawMessage // _meta
	// Extra holds members not listed above, by name, as raw JSON.
	Extra map[string]json.RawMessage
}

// TextBlock returns a text content block.
func TextBlock(text string) ContentBlock { return ContentBlock{Type: ContentText, Text: text} }

// contentMember is a member ContentBlock has a field for: its name and
// where it goes (a *string, a *json.RawMessage, or anything
// json.Unmarshal fills).
type contentMember struct {
	name  string
	field func(c *ContentBlock) any
}

var (
	memberText        = contentMember{"text", func(c *ContentBlock) any { return &c.Text }}
	memberData        = contentMember{"data", func(c *ContentBlock) any { return &c.Data }}
	memberMimeType    = contentMember{"mimeType", func(c *ContentBlock) any { return &c.MimeType }}
	memberURI         = contentMember{"uri", func(c *ContentBlock) any { return &c.URI }}
	memberName        = contentMember{"name", func(c *ContentBlock) any { return &c.Name }}
	memberTitle       = contentMember{"title", func(c *ContentBlock) any { return &c.Title }}
	memberDescription = contentMember{"description", func(c *ContentBlock) any { return &c.Description }}
	memberSize        = contentMember{"size", func(c *ContentBlock) any { return &c.Size }}
	memberResource    = contentMember{"resource", func(c *ContentBlock) any { return &c.Resource }}
)

// contentKeysByType lists the members ContentBlock has fields for. Which of them
// a block carries depends on its type; a member that does not belong to the
// block's type is kept in Extra.
var contentKeysByType = map[string][]contentMember{
	ContentText:         {memberText},
	ContentImage:        {memberData, memberMimeType},
	ContentAudio:        {memberData, memberMimeType},
	ContentResourceLink: {memberURI, memberName, memberTitle, memberDescription, memberMimeType, memberSize},
	ContentResource:     {memberResource},
}

// MarshalJSON implements json.Marshaler.
func (c ContentBlock) MarshalJSON() ([]byte, error) {
	return c.appendJSON(make([]byte, 0, 32+len(c.Text)+len(c.Data)), nil)
}

// appendJSON writes the block as a JSON object, with an optional leading
// "seqNr" member when seqNr is non-nil.
func (c ContentBlock) appendJSON(dst []byte, seqNr *int64) ([]byte, error) {
	dst = append(dst, '{')
	first := true
	key := func(k string) {
		if !first {
			dst = append(dst, ',')
		}
		first = false
		dst = appendString(dst, k)
		dst = append(dst, ':')
	}
	str := func(k, v string) {
		key(k)
		dst = appendString(dst, v)
	}
	raw := func(k string, v json.RawMessage) {
		key(k)
		dst = append(dst, v...)
	}
	if seqNr != nil {
		key("seqNr")
		dst = strconv.AppendInt(dst, *seqNr, 10)
	}
	str("type", c.Type)
	switch c.Type {
	case ContentText:
		str("text", c.Text)
	case ContentImage, ContentAudio:
		str("data", c.Data)
		str("mimeType", c.MimeType)
	case ContentResourceLink:
		str("uri", c.URI)
		str("name", c.Name)
		if c.Title != "" {
			str("title", c.Title)
		}
		if c.Description != "" {
			str("description", c.Description)
		}
		if c.MimeType != "" {
			str("mimeType", c.MimeType)
		}
		if c.Size != nil {
			key("size")
			dst = strconv.AppendInt(dst, *c.Size, 10)
		}
	case ContentResource:
		if len(c.Resource) > 0 {
			raw("resource", c.Resource)
		} else {
			raw("resource", json.RawMessage("{}"))
		}
	}
	if len(c.Annotations) > 0 {
		raw("annotations", c.Annotations)
	}
	if len(c.Meta) > 0 {
		raw("_meta", c.Meta)
	}
	extra := make([]string, 0, len(c.Extra))
	for k := range c.Extra {
		extra = append(extra, k)
	}
	slices.Sort(extra)
	for _, k := range extra {
		v := c.Extra[k]
		if !json.Valid(v) {
			return nil, fmt.Errorf("content block member %q is not valid JSON", k)
		}
		raw(k, v)
	}
	return append(dst, '}'), nil
}

// UnmarshalJSON implements json.Unmarshaler.
func (c *ContentBlock) UnmarshalJSON(b []byte) error {
	if t := bytes.TrimSpace(b); len(t) > 0 && t[0] == '{' && utf8.Valid(t) && json.Valid(t) {
		return c.decodeValid(t)
	}
	var members map[string]json.RawMessage
	if err := json.Unmarshal(b, &members); err != nil {
		return fmt.Errorf("content block: %w", err)
	}
	return c.decodeMembers(members)
}

// decodeValid decodes an object known to be valid UTF-8 and valid JSON
// (its first byte '{') in one pass, as DecodeMessage reads messages. The
// block keeps no reference to data: strings and raw members are copied.
func (c *ContentBlock) decodeValid(data []byte) error {
	if c.decodeText(data, nil) {
		return nil
	}
	return c.decodeMembers(objectMembersShared(data))
}

// decodeText reads the usual block, {"type":"text","text":...} in any
// order, without the map of members; anything else it leaves to
// decodeMembers (false). With seqNr not nil, a "seqNr" member is taken
// too, its raw value put in *seqNr: a SEP-1905 segment.
func (c *ContentBlock) decodeText(data []byte, seqNr *[]byte) bool {
	var typ, text []byte
	usual := eachMember(data, func(name, value []byte) bool {
		switch {
		case string(name) == `"type"` && typ == nil:
			typ = value
		case string(name) == `"text"` && text == nil:
			text = value
		case seqNr != nil && string(name) == `"seqNr"` && *seqNr == nil:
			*seqNr = value
		default:
			return false
		}
		return true
	})
	if !usual || string(typ) != `"text"` || text == nil || text[0] != '"' {
		return false
	}
	var s string
	if decodeString(text, &s) != nil {
		return false
	}
	*c = ContentBlock{Type: ContentText, Text: s}
	return true
}

// decodeMembers fills c from an object's members; it takes from members
// what it knows.
func (c *ContentBlock) decodeMembers(members map[string]json.RawMessage) error {
	if members == nil {
		return fmt.Errorf("content block: must be an object")
	}
	*c = ContentBlock{}
	rawType, ok := members["type"]
	if !ok {
		return fmt.Errorf("content block: missing type")
	}
	if err := decodeString(rawType, &c.Type); err != nil {
		return fmt.Errorf("content block: type: %w", err)
	}
	delete(members, "type")
	for _, f := range contentKeysByType[c.Type] {
		if err := c.take(members, f.name, f.field(c)); err != nil {
			return err
		}
	}
	_ = c.take(members, "annotations", &c.Annotations) // raw: never fails
	_ = c.take(members, "_meta", &c.Meta)
	if len(members) > 0 {
		c.Extra = make(map[string]json.RawMessage, len(members))
		for k, v := range members {
			c.Extra[k] = slices.Clone(v)
		}
	}
	return nil
}

// take moves the member k, when present, from members into the field
// into: a *string is decoded as a JSON string, a *json.RawMessage gets a
// copy of the raw value, anything else is filled by json.Unmarshal.
func (c *ContentBlock) take(members map[string]json.RawMessage, k string, into any) error {
	v, ok := members[k]
	if !ok {
		return nil
	}
	var err error
	switch into := into.(type) {
	case *string:
		err = decodeString(v, into)
	case *json.RawMessage:
		*into = slices.Clone(v)
	default:
		err = json.Unmarshal(v, into)
	}
	if err != nil {
		return fmt.Errorf("content block %s: %s: %w", c.Type, k, err)
	}
	delete(members, k)
	return nil
}

// Equal reports whether two blocks encode to the same JSON.
func (c ContentBlock) Equal(o ContentBlock) bool {
	a, err1 := c.MarshalJSON()
	b, err2 := o.MarshalJSON()
	return err1 == nil && err2 == nil && bytes.Equal(a, b)
}

// Segment is one item of SEP-1905 partial-content: a content block with its
// sequence number ("Sequence Number Requirements": positive, from 1).
type Segment struct {
	SeqNr int64
	ContentBlock
}

// MarshalJSON implements json.Marshaler: the block's members plus "seqNr".
func (s Segment) MarshalJSON() ([]byte, error) {
	n := s.SeqNr
	return s.ContentBlock.appendJSON(make([]byte, 0, 48+len(s.Text)+len(s.Data)), &n)
}

// UnmarshalJSON implements json.Unmarshaler. A segment without a numeric
// seqNr is an error: the SEP makes it required.
func (s *Segment) UnmarshalJSON(b []byte) error {
	if t := bytes.TrimSpace(b); len(t) > 0 && t[0] == '{' && utf8.Valid(t) && json.Valid(t) {
		return s.decodeValid(t)
	}
	if err := s.ContentBlock.UnmarshalJSON(b); err != nil {
		return err
	}
	return s.takeSeqNr()
}

// decodeValid is UnmarshalJSON for t, an object known to be valid JSON
// and UTF-8: no second check. A text segment of type, text and seqNr
// alone (what servers stream) is read without the map of members.
func (s *Segment) decodeValid(t []byte) error {
	var seqNr []byte
	if s.ContentBlock.decodeText(t, &seqNr) && seqNr != nil {
		if n, err := strconv.ParseInt(string(seqNr), 10, 64); err == nil {
			s.SeqNr = n
			return nil
		}
	}
	if err := s.ContentBlock.decodeMembers(objectMembersShared(t)); err != nil {
		return err
	}
	return s.takeSeqNr()
}

// takeSeqNr moves the seqNr member out of Extra into SeqNr.
func (s *Segment) takeSeqNr() error {
	raw, ok := s.Extra["seqNr"]
	if !ok {
		return fmt.Errorf("partial-content segment: missing seqNr")
	}
	delete(s.Extra, "seqNr")
	if len(s.Extra) == 0 {
		s.Extra = nil
	}
	n, err := strconv.ParseInt(string(bytes.TrimSpace(raw)), 10, 64)
	if err != nil {
		return fmt.Errorf("partial-content segment: seqNr %s is not an integer", raw)
	}
	s.SeqNr = n
	return nil
}

// MergeSegments returns the content a completed stream of segments stands
// for: sorted by seqNr, duplicates dropped, seqNr removed (SEP-1905,
// "tasks/result Operation", merge steps 1-5).
func MergeSegments(segs []Segment) []ContentBlock {
	sorted := slices.Clone(segs)
	slices.SortStableFunc(sorted, func(a, b Segment) int { return cmp.Compare(a.SeqNr, b.SeqNr) })
	out := make([]ContentBlock, 0, len(sorted))
	for i, s := range sorted {
		if i > 0 && sorted[i-1].SeqNr == s.SeqNr {
			continue
		}
		out = append(out, s.ContentBlock)
	}
	return out
}
