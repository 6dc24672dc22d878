package mcp

import (
	"bytes"
	"encoding/json"
	"testing"
)

func partialResultCases() []PartialResult {
	ttl, poll := int64(60000), int64(500)
	task := &Task{TaskID: "8f3a", Status: StatusWorking, CreatedAt: "2026-01-01T00:00:00.000Z", LastUpdatedAt: "2026-01-01T00:00:01.000Z", TTL: &ttl, PollInterval: &poll}
	size := int64(3)
	return []PartialResult{
		{PartialContent: []Segment{{SeqNr: 1, ContentBlock: TextBlock("chunk 1;aaaa")}}, Meta: Meta{}.WithRelatedTask("8f3a")},
		{Task: task, PartialContent: []Segment{}},
		{Task: &Task{TaskID: "<&>", Status: StatusFailed, StatusMessage: "Task has expired \u2028 \"q\"\n", TTL: nil}, PartialContent: nil, IsError: true, IsComplete: true},
		{PartialContent: []Segment{{SeqNr: 2, ContentBlock: ContentBlock{Type: ContentImage, Data: "AA==", MimeType: "image/png"}}, {SeqNr: 3, ContentBlock: ContentBlock{Type: ContentResourceLink, URI: "file:///x", Name: "x", Size: &size}}}, Content: []ContentBlock{TextBlock("all")}, IsComplete: true},
		{PartialContent: []Segment{{SeqNr: 1, ContentBlock: ContentBlock{Type: ContentText, Text: "a", Annotations: json.RawMessage(`{ "audience" : ["<user>"] }`)}}}},
		{PartialContent: []Segment{{SeqNr: 1, ContentBlock: TextBlock("x\xff\x01é")}}, Meta: Meta{"other": 1}},
		{PartialContent: []Segment{}, Meta: Meta{MetaRelatedTask: map[string]any{"taskId": "t"}}},
		{PartialContent: []Segment{}, Meta: Meta{MetaRelatedTask: RelatedTask{TaskID: "t"}, "x": true}},
		{PartialContent: []Segment{{SeqNr: 1, ContentBlock: ContentBlock{Type: "text", Text: "b", Extra: map[string]json.RawMessage{"bad": json.RawMessage(`{`)}}}}},
	}
}

// TestPartialResultMarshal: MarshalJSON writes what encoding/json writes
// for the struct, or fails where it fails.
func TestPartialResultMarshal(t *testing.T) {
	for i, p := range partialResultCases() {
		want, werr := json.Marshal(plainPartialResult(p))
		got, gerr := json.Marshal(p)
		if (werr == nil) != (gerr == nil) || !bytes.Equal(got, want) {
			t.Errorf("case %d:\n got %s (%v)\nwant %s (%v)", i, got, gerr, want, werr)
		}
	}
	if _, ok := partialResultCases()[0].appendJSON(nil); !ok {
		t.Error("a segment with its related-task meta is not written without encoding/json")
	}
}

// FuzzPartialResultMarshal: any text, task id and status message.
func FuzzPartialResultMarshal(f *testing.F) {
	f.Add("chunk 1;", "8f3a", "", int64(1), true)
	f.Add("<&>\u2028\x00\xff", "\"", "a\tb", int64(-5), false)
	f.Fuzz(func(t *testing.T, text, id, msg string, seq int64, withTask bool) {
		p := PartialResult{PartialContent: []Segment{{SeqNr: seq, ContentBlock: TextBlock(text)}}, Content: []ContentBlock{TextBlock(msg)}, Meta: Meta{}.WithRelatedTask(id)}
		if withTask {
			p.Task = &Task{TaskID: id, Status: TaskStatus(text), StatusMessage: msg, CreatedAt: text, LastUpdatedAt: msg, TTL: &seq}
		}
		want, werr := json.Marshal(plainPartialResult(p))
		got, gerr := json.Marshal(p)
		if (werr == nil) != (gerr == nil) || !bytes.Equal(got, want) {
			t.Fatalf("got %s (%v)\nwant %s (%v)", got, gerr, want, werr)
		}
	})
}

// BenchmarkPartialResultMarshal encodes a segment as the server streams it.
func BenchmarkPartialResultMarshal(b *testing.B) {
	p := partialResultCases()[0]
	b.Run("encoding-json", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := json.Marshal(plainPartialResult(p)); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("append", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := p.MarshalJSON(); err != nil {
				b.Fatal(err)
			}
		}
	})
}
