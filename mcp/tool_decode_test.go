package mcp

import (
	"encoding/json"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
)

// toolCallResponseSeeds are responses as servers send them, and shapes
// where the one-pass decoding must step aside for encoding/json.
var toolCallResponseSeeds = []string{
	`{"partial-content":[{"type":"text","text":"chunk 0001","seqNr":1}],"isError":false,"isComplete":false,"_meta":{"io.modelcontextprotocol/related-task":{"taskId":"8f3a"}}}`,
	`{"task":{"taskId":"8f3a","status":"working","createdAt":"2026-01-01T00:00:00.000Z","lastUpdatedAt":"2026-01-01T00:00:00.000Z","ttl":60000,"pollInterval":500},"partial-content":[],"isError":false,"isComplete":false}`,
	`{"task":{"taskId":"8f3a","status":"completed","statusMessage":"done","createdAt":"x","lastUpdatedAt":"y","ttl":null},"partial-content":[{"type":"text","text":"a","seqNr":2},{"type":"image","data":"AA==","mimeType":"image/png","seqNr":3}],"content":[],"isError":true,"isComplete":true}`,
	`{"content":[{"type":"text","text":"hi"}],"structuredContent":{"a":[1,2.5e3,"x",true,null]},"isError":false}`,
	`{"task":{"taskId":"t","status":"working","createdAt":"a","lastUpdatedAt":"b","ttl":1000}}`,
	`{"_meta":{"a":{"b":[{"c":-1.5}]},"u":"\u00e9\n"},"_meta":{"d":1},"isComplete":null}`,
	`{"Content":[{"type":"text","text":"case"}],"ISERROR":true,"Task":{"TaskId":"t"}}`,
	`{"task":{"taskId":"a","status":"working"},"task":{"taskId":"b"}}`,
	`{"partial-content":[{"type":"text","text":"no seqNr"}]}`,
	`{"partial-content":[null],"content":null,"structuredContent":null}`,
	`{"isError":"yes","isComplete":1}`,
	`{"task":{"ttl":1.5}}`,
	`{"task":{"ttl":99999999999999999999}}`,
	`{"_meta":{"big":1e999}}`,
	`{"ünï":1,"ſtatus":2,"content":[]}`,
	`{"partial-content":[{"type":"text","text":"a","seqNr":1,"annotations":{"x":1},"extra":[1]}]}`,
	`{"partial-content":[{"seqNr":7,"text":"a\u00e9","type":"text"},{"type":"text","text":"x","text":"y","seqNr":1},{"type":"image","text":"t","seqNr":2},{"type":"text","seqNr":1.0,"text":""}]}`,
	`{"partial-content":[{"type":"text","text":null,"seqNr":1},{"type":"text","seqNr":-3},{"type":"text","text":"z","seqNr":" 4"}]}`,
	`[]`, `null`, `"x"`, `{`, `{"a":1,}`,
}

// ToolCallResponse's UnmarshalJSON must decode every input as
// encoding/json decodes the struct: the same value, or an error for the
// same inputs.
func FuzzToolCallResponse(f *testing.F) {
	for _, s := range toolCallResponseSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var want, got, valid, noMeta ToolCallResponse
		verr := valid.UnmarshalValid(data) // never panics
		nerr := noMeta.UnmarshalValidNoMeta(data)
		if (verr == nil && nerr != nil) || noMeta.Meta != nil { // what is wrong in _meta alone goes unseen
			t.Fatalf("%q: UnmarshalValidNoMeta: %v (meta %v), UnmarshalValid: %v", data, nerr, noMeta.Meta, verr)
		}
		if verr == nil && json.Valid(data) && utf8.Valid(data) {
			withoutMeta := valid
			withoutMeta.Meta = nil
			if diff := cmp.Diff(withoutMeta, noMeta); diff != "" {
				t.Fatalf("%q (-UnmarshalValid without meta +UnmarshalValidNoMeta):\n%s", data, diff)
			}
		}
		werr := json.Unmarshal(data, (*plainToolCallResponse)(&want))
		if json.Valid(data) && utf8.Valid(data) {
			if (werr == nil) != (verr == nil) {
				t.Fatalf("%q: UnmarshalValid error %v, encoding/json's %v", data, verr, werr)
			}
			if diff := cmp.Diff(want, valid); werr == nil && diff != "" {
				t.Fatalf("%q (-encoding/json +UnmarshalValid):\n%s", data, diff)
			}
		}
		gerr := json.Unmarshal(data, &got)
		if (werr == nil) != (gerr == nil) {
			t.Fatalf("%q: error %v, encoding/json's %v", data, gerr, werr)
		}
		if werr != nil {
			return
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Fatalf("%q (-encoding/json +UnmarshalJSON):\n%s", data, diff)
		}
		// Called directly, as a client does on a message's result.
		var direct ToolCallResponse
		if err := direct.UnmarshalJSON(data); err != nil {
			t.Fatalf("%q: UnmarshalJSON: %v", data, err)
		}
		if diff := cmp.Diff(want, direct); diff != "" {
			t.Fatalf("%q (-encoding/json +UnmarshalJSON called directly):\n%s", data, diff)
		}
	})
}

// TestToolCallResponseOnePass: the usual responses take the one pass
// (decodeValid accepts them), and a response decoded into one holding
// values keeps what encoding/json keeps.
func TestToolCallResponseOnePass(t *testing.T) {
	for _, s := range toolCallResponseSeeds[:6] {
		var r ToolCallResponse
		if !r.decodeValid([]byte(s), false) {
			t.Errorf("%s: not decoded in one pass", s)
		}
	}
	prev := ToolCallResponse{IsError: true, StructuredContent: json.RawMessage(`{}`)}
	if err := json.Unmarshal([]byte(`{"isComplete":true}`), &prev); err != nil {
		t.Fatal(err)
	}
	if !prev.IsError || string(prev.StructuredContent) != `{}` || prev.IsComplete == nil || !*prev.IsComplete {
		t.Errorf("decoding into a response holding values: %+v", prev)
	}
}

// BenchmarkToolCallResponse decodes a streaming response carrying one
// segment, as a client does for each segment of a SEP-1905 stream.
func BenchmarkToolCallResponse(b *testing.B) {
	data := []byte(toolCallResponseSeeds[0])
	for _, bc := range []struct {
		name string
		into func() any
	}{
		{"encoding-json", func() any { return new(plainToolCallResponse) }},
		{"one-pass", func() any { return new(ToolCallResponse) }},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if err := json.Unmarshal(data, bc.into()); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
	b.Run("one-pass-direct", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			var r ToolCallResponse
			if err := r.UnmarshalJSON(data); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// MoreToFollow must answer as encoding/json decoding into a struct of
// the one member, for valid JSON, and never panic on other bytes.
func FuzzMoreToFollow(f *testing.F) {
	for _, s := range toolCallResponseSeeds {
		f.Add([]byte(s))
	}
	for _, s := range []string{`{"isComplete":false}`, `{"isComplete":false,"isComplete":null}`, `{"ISCOMPLETE":false}`, `{"isComplete":"false"}`, `{"isComplete":true,"x":[}`, ` {"a":{"isComplete":false}} `, `{"iſComplete":false}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var r struct {
			IsComplete *bool `json:"isComplete"`
		}
		want := json.Unmarshal(data, &r) == nil && r.IsComplete != nil && !*r.IsComplete
		got := MoreToFollow(data) // never panics
		if !json.Valid(data) {
			return // unspecified
		}
		if got != want {
			t.Fatalf("MoreToFollow(%q) = %v, encoding/json says %v", data, got, want)
		}
	})
}

// Segment.UnmarshalJSON reads the usual segment without the map of
// members; it must decode every input as the general path does: the
// members as encoding/json maps them, then the seqNr taken out.
func FuzzSegment(f *testing.F) {
	for _, s := range []string{
		`{"type":"text","text":"chunk 1;","seqNr":1}`, `{"seqNr":2,"text":"a\u00e9","type":"text"}`,
		`{"type":"text","text":"a"}`, `{"type":"text","text":"a","seqNr":1.5}`, `{"type":"text","text":"a","seqNr":1,"seqNr":2}`,
		`{"type":"image","data":"AA==","mimeType":"image/png","seqNr":3}`, `{"type":"text","text":null,"seqNr":1}`, `null`, `[]`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var want Segment
		var members map[string]json.RawMessage
		werr := json.Unmarshal(data, &members)
		if werr == nil {
			if werr = want.ContentBlock.decodeMembers(members); werr == nil {
				werr = want.takeSeqNr()
			}
		}
		var got Segment
		gerr := got.UnmarshalJSON(data)
		if (werr == nil) != (gerr == nil) {
			t.Fatalf("%q: error %v, the general path's %v", data, gerr, werr)
		}
		if werr == nil {
			if diff := cmp.Diff(want, got); diff != "" {
				t.Fatalf("%q (-general path +UnmarshalJSON):\n%s", data, diff)
			}
		}
	})
}
