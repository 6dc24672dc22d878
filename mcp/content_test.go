package mcp_test

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/tasksim/tasksim/mcp"
)

func ptr[T any](v T) *T { return &v }

func TestContentBlockRoundTrip(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want mcp.ContentBlock // what the input decodes to
	}{
		{
			name: "text",
			in:   `{"type":"text","text":"Current weather in New York:\nTemperature: 72°F"}`,
			want: mcp.ContentBlock{Type: mcp.ContentText, Text: "Current weather in New York:\nTemperature: 72°F"},
		},
		{
			name: "image",
			in:   `{"type":"image","data":"iVBORw0KGgo=","mimeType":"image/png"}`,
			want: mcp.ContentBlock{Type: mcp.ContentImage, Data: "iVBORw0KGgo=", MimeType: "image/png"},
		},
		{
			name: "audio",
			in:   `{"type":"audio","data":"UklGRg==","mimeType":"audio/wav"}`,
			want: mcp.ContentBlock{Type: mcp.ContentAudio, Data: "UklGRg==", MimeType: "audio/wav"},
		},
		{
			name: "resource_link with size and title",
			in:   `{"type":"resource_link","uri":"file:///project/report.pdf","name":"report.pdf","title":"Quarterly report","description":"Q3 numbers","mimeType":"application/pdf","size":1048576}`,
			want: mcp.ContentBlock{
				Type: mcp.ContentResourceLink, URI: "file:///project/report.pdf", Name: "report.pdf",
				Title: "Quarterly report", Description: "Q3 numbers", MimeType: "application/pdf", Size: ptr(int64(1048576)),
			},
		},
		{
			name: "resource_link minimal",
			in:   `{"type":"resource_link","uri":"file:///a","name":"a"}`,
			want: mcp.ContentBlock{Type: mcp.ContentResourceLink, URI: "file:///a", Name: "a"},
		},
		{
			name: "embedded resource",
			in:   `{"type":"resource","resource":{"uri":"file:///notes.txt","mimeType":"text/plain","text":"hello"}}`,
			want: mcp.ContentBlock{Type: mcp.ContentResource, Resource: json.RawMessage(`{"uri":"file:///notes.txt","mimeType":"text/plain","text":"hello"}`)},
		},
		{
			name: "annotations and _meta",
			in:   `{"type":"text","text":"x","annotations":{"audience":["user"],"priority":0.5},"_meta":{"k":1}}`,
			want: mcp.ContentBlock{
				Type: mcp.ContentText, Text: "x",
				Annotations: json.RawMessage(`{"audience":["user"],"priority":0.5}`),
				Meta:        json.RawMessage(`{"k":1}`),
			},
		},
		{
			name: "unknown type from SEP-1905",
			in:   `{"type":"video","text":"Here is a short video overview of New York City attractions.","url":"https://example.com/nyc_overview.mp4"}`,
			want: mcp.ContentBlock{Type: "video", Extra: map[string]json.RawMessage{
				"text": json.RawMessage(`"Here is a short video overview of New York City attractions."`),
				"url":  json.RawMessage(`"https://example.com/nyc_overview.mp4"`),
			}},
		},
		{
			name: "unknown members of a known type",
			in:   `{"type":"text","text":"x","future":{"nested":[1,2.50,"three",null]},"size":7}`,
			want: mcp.ContentBlock{Type: mcp.ContentText, Text: "x", Extra: map[string]json.RawMessage{
				"future": json.RawMessage(`{"nested":[1,2.50,"three",null]}`),
				"size":   json.RawMessage(`7`), // size belongs to resource_link, not text
			}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got mcp.ContentBlock
			if err := json.Unmarshal([]byte(tt.in), &got); err != nil {
				t.Fatalf("Unmarshal: %v", err)
			}
			// cmp would use ContentBlock.Equal; compare fields to see them.
			if diff := cmp.Diff(tt.want, got, cmp.Transformer("fields", contentFields)); diff != "" {
				t.Errorf("decoded block mismatch (-want +got):\n%s", diff)
			}
			out, err := json.Marshal(got)
			if err != nil {
				t.Fatalf("Marshal: %v", err)
			}
			if diff := cmp.Diff(semantic(t, []byte(tt.in)), semantic(t, out)); diff != "" {
				t.Errorf("re-encoded block differs from input (-in +out):\n%s", diff)
			}
		})
	}
}

// contentFields is ContentBlock without its Equal method, so that cmp shows
// which field differs.
type contentFieldsT struct {
	Type, Text, Data, MimeType, URI, Name, Title, Description string
	Size                                                      *int64
	Resource, Annotations, Meta                               string
	Extra                                                     map[string]string
}

func contentFields(c mcp.ContentBlock) contentFieldsT {
	f := contentFieldsT{
		Type: c.Type, Text: c.Text, Data: c.Data, MimeType: c.MimeType, URI: c.URI, Name: c.Name,
		Title: c.Title, Description: c.Description, Size: c.Size,
		Resource: string(c.Resource), Annotations: string(c.Annotations), Meta: string(c.Meta),
	}
	if c.Extra != nil {
		f.Extra = make(map[string]string, len(c.Extra))
		for k, v := range c.Extra {
			f.Extra[k] = string(v)
		}
	}
	return f
}

func TestContentBlockMarshal(t *testing.T) {
	tests := []struct {
		name  string
		block mcp.ContentBlock
		want  string
	}{
		{name: "text", block: mcp.TextBlock("hi"), want: `{"type":"text","text":"hi"}`},
		{name: "empty text keeps its member", block: mcp.TextBlock(""), want: `{"type":"text","text":""}`},
		{name: "text escaped as JSON", block: mcp.TextBlock("a\x01<\"\n"), want: `{"type":"text","text":"a\u0001\u003c\"\n"}`},
		{
			name:  "resource_link optional members omitted",
			block: mcp.ContentBlock{Type: mcp.ContentResourceLink, URI: "u", Name: "n"},
			want:  `{"type":"resource_link","uri":"u","name":"n"}`,
		},
		{
			name:  "resource without contents",
			block: mcp.ContentBlock{Type: mcp.ContentResource},
			want:  `{"type":"resource","resource":{}}`,
		},
		{
			name: "extra members sorted after known ones",
			block: mcp.ContentBlock{Type: "video", Extra: map[string]json.RawMessage{
				"url": json.RawMessage(`"https://x"`), "text": json.RawMessage(`"t"`), "\x01odd": json.RawMessage(`1`),
			}},
			want: `{"type":"video","\u0001odd":1,"text":"t","url":"https://x"}`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.block.MarshalJSON()
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, string(got)); diff != "" {
				t.Errorf("MarshalJSON mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestContentBlockInvalid(t *testing.T) {
	tests := []struct {
		name string
		in   string
	}{
		{name: "not an object", in: `"text"`},
		{name: "null", in: `null`},
		{name: "array", in: `[{"type":"text"}]`},
		{name: "missing type", in: `{"text":"x"}`},
		{name: "type not a string", in: `{"type":1,"text":"x"}`},
		{name: "text not a string", in: `{"type":"text","text":5}`},
		{name: "size not an integer", in: `{"type":"resource_link","uri":"u","name":"n","size":1.5}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var c mcp.ContentBlock
			if err := c.UnmarshalJSON([]byte(tt.in)); err == nil {
				t.Errorf("UnmarshalJSON(%s) = nil error, decoded %+v", tt.in, c)
			}
		})
	}
	t.Run("extra member not JSON", func(t *testing.T) {
		c := mcp.ContentBlock{Type: "x", Extra: map[string]json.RawMessage{"bad": json.RawMessage(`{`)}}
		if b, err := c.MarshalJSON(); err == nil {
			t.Errorf("MarshalJSON = %s, nil error; want an error", b)
		}
	})
}

func TestContentBlockEqual(t *testing.T) {
	tests := []struct {
		name string
		a, b mcp.ContentBlock
		want bool
	}{
		{name: "same text", a: mcp.TextBlock("x"), b: mcp.TextBlock("x"), want: true},
		{name: "different text", a: mcp.TextBlock("x"), b: mcp.TextBlock("y"), want: false},
		{
			name: "field that the type does not write is ignored",
			a:    mcp.ContentBlock{Type: mcp.ContentText, Text: "x", URI: "u"},
			b:    mcp.TextBlock("x"),
			want: true,
		},
		{
			name: "extra members",
			a:    mcp.ContentBlock{Type: "v", Extra: map[string]json.RawMessage{"a": json.RawMessage(`1`)}},
			b:    mcp.ContentBlock{Type: "v", Extra: map[string]json.RawMessage{"a": json.RawMessage(`2`)}},
			want: false,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.a.Equal(tt.b); got != tt.want {
				t.Errorf("Equal = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestSegmentUnmarshal(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		want    mcp.Segment
		wantErr bool
	}{
		{
			name: "text segment",
			in:   `{"seqNr":1,"type":"text","text":"Initial result segment"}`,
			want: mcp.Segment{SeqNr: 1, ContentBlock: mcp.TextBlock("Initial result segment")},
		},
		{
			name: "seqNr last",
			in:   `{"type":"text","text":"x","seqNr":42}`,
			want: mcp.Segment{SeqNr: 42, ContentBlock: mcp.TextBlock("x")},
		},
		{
			name: "unknown type keeps its members, not seqNr",
			in:   `{"seqNr":3,"type":"video","text":"Here is a short video overview of New York City attractions.","url":"https://example.com/nyc_overview.mp4"}`,
			want: mcp.Segment{SeqNr: 3, ContentBlock: mcp.ContentBlock{Type: "video", Extra: map[string]json.RawMessage{
				"text": json.RawMessage(`"Here is a short video overview of New York City attractions."`),
				"url":  json.RawMessage(`"https://example.com/nyc_overview.mp4"`),
			}}},
		},
		{name: "missing seqNr", in: `{"type":"text","text":"x"}`, wantErr: true},
		{name: "seqNr a string", in: `{"seqNr":"1","type":"text","text":"x"}`, wantErr: true},
		{name: "seqNr fractional", in: `{"seqNr":1.5,"type":"text","text":"x"}`, wantErr: true},
		{name: "seqNr exponent", in: `{"seqNr":1e2,"type":"text","text":"x"}`, wantErr: true},
		{name: "seqNr null", in: `{"seqNr":null,"type":"text","text":"x"}`, wantErr: true},
		{name: "seqNr an object", in: `{"seqNr":{},"type":"text","text":"x"}`, wantErr: true},
		{name: "not a block", in: `{"seqNr":1}`, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got mcp.Segment
			err := json.Unmarshal([]byte(tt.in), &got)
			if tt.wantErr {
				if err == nil {
					t.Errorf("Unmarshal = nil error, decoded %+v", got)
				}
				return
			}
			if err != nil {
				t.Fatalf("Unmarshal: %v", err)
			}
			if diff := cmp.Diff(tt.want, got, cmp.Transformer("fields", contentFields)); diff != "" {
				t.Errorf("Segment mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestSegmentMarshal(t *testing.T) {
	tests := []struct {
		name string
		seg  mcp.Segment
		want string
	}{
		{
			name: "text",
			seg:  mcp.Segment{SeqNr: 3, ContentBlock: mcp.TextBlock("Additional segment")},
			want: `{"seqNr":3,"type":"text","text":"Additional segment"}`,
		},
		{
			name: "image",
			seg:  mcp.Segment{SeqNr: 12, ContentBlock: mcp.ContentBlock{Type: mcp.ContentImage, Data: "AA==", MimeType: "image/png"}},
			want: `{"seqNr":12,"type":"image","data":"AA==","mimeType":"image/png"}`,
		},
		{
			name: "unknown type",
			seg: mcp.Segment{SeqNr: 1, ContentBlock: mcp.ContentBlock{Type: "video", Extra: map[string]json.RawMessage{
				"url": json.RawMessage(`"https://example.com/v.mp4"`),
			}}},
			want: `{"seqNr":1,"type":"video","url":"https://example.com/v.mp4"}`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := json.Marshal(tt.seg)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, string(got)); diff != "" {
				t.Errorf("Marshal mismatch (-want +got):\n%s", diff)
			}
			var back mcp.Segment
			if err := json.Unmarshal(got, &back); err != nil {
				t.Fatalf("Unmarshal(%s): %v", got, err)
			}
			if diff := cmp.Diff(tt.seg, back, cmp.Transformer("fields", contentFields)); diff != "" {
				t.Errorf("round trip mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func seg(n int64, text string) mcp.Segment {
	return mcp.Segment{SeqNr: n, ContentBlock: mcp.TextBlock(text)}
}

func TestMergeSegments(t *testing.T) {
	tests := []struct {
		name string
		in   []mcp.Segment
		want string // the merged content as JSON
	}{
		{name: "none", in: nil, want: `[]`},
		{name: "in order", in: []mcp.Segment{seg(1, "a"), seg(2, "b")}, want: `[{"type":"text","text":"a"},{"type":"text","text":"b"}]`},
		{
			name: "out of order are sorted by seqNr",
			in:   []mcp.Segment{seg(3, "c"), seg(1, "a"), seg(2, "b")},
			want: `[{"type":"text","text":"a"},{"type":"text","text":"b"},{"type":"text","text":"c"}]`,
		},
		{
			name: "duplicate seqNr keeps the first received",
			in:   []mcp.Segment{seg(1, "a"), seg(2, "b"), seg(2, "b again"), seg(1, "a again")},
			want: `[{"type":"text","text":"a"},{"type":"text","text":"b"}]`,
		},
		{
			name: "gaps are kept as gaps",
			in:   []mcp.Segment{seg(5, "e"), seg(1, "a"), seg(3, "c")},
			want: `[{"type":"text","text":"a"},{"type":"text","text":"c"},{"type":"text","text":"e"}]`,
		},
		{
			name: "SEP-1905 weather example from two mechanisms",
			in: []mcp.Segment{
				seg(1, "Current weather in New York:\nTemperature: 72°F\nConditions: Partly cloudy"),
				seg(2, "Suggested activities:\n- Visit Central Park\n- Explore the Metropolitan Museum of Art"),
				{SeqNr: 3, ContentBlock: mcp.ContentBlock{Type: "video", Extra: map[string]json.RawMessage{
					"text": json.RawMessage(`"Here is a short video overview of New York City attractions."`),
					"url":  json.RawMessage(`"https://example.com/nyc_overview.mp4"`),
				}}},
				seg(2, "Suggested activities:\n- Visit Central Park\n- Explore the Metropolitan Museum of Art"),
			},
			// The content of SEP-1905's Case 1 response.
			want: `[
				{"type":"text","text":"Current weather in New York:\nTemperature: 72°F\nConditions: Partly cloudy"},
				{"type":"text","text":"Suggested activities:\n- Visit Central Park\n- Explore the Metropolitan Museum of Art"},
				{"type":"video","text":"Here is a short video overview of New York City attractions.","url":"https://example.com/nyc_overview.mp4"}
			]`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := append([]mcp.Segment(nil), tt.in...)
			got, err := json.Marshal(mcp.MergeSegments(tt.in))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(semantic(t, []byte(tt.want)), semantic(t, got)); diff != "" {
				t.Errorf("MergeSegments mismatch (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(in, tt.in, cmp.Transformer("fields", contentFields)); diff != "" {
				t.Errorf("MergeSegments modified its input (-before +after):\n%s", diff)
			}
		})
	}
}
