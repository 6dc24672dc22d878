package recorder

import (
	"bytes"
	"net/url"
	"testing"
	"time"

	"github.com/tasksim/tasksim/mcp/sse"
	"github.com/tasksim/tasksim/traces"
)

// teeStream passes stream through an sseSplitter in the given writes and
// returns the records it made.
func teeStream(t *testing.T, writes [][]byte) []traces.Record {
	t.Helper()
	var buf bytes.Buffer
	w, err := traces.NewWriter(&buf, traces.Header{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	u, _ := url.Parse("http://127.0.0.1:1")
	p, err := NewProxy(u, w, nil)
	if err != nil {
		t.Fatal(err)
	}
	ex := &exchange{p: p, id: 1, conn: 1, respStream: "get:1"}
	s := newSSESplitter(ex)
	for _, b := range writes {
		s.write(b, time.Now())
	}
	s.end(time.Now())
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	r, err := traces.NewReader(&buf)
	if err != nil {
		t.Fatal(err)
	}
	var recs []traces.Record
	for rec, err := range r.Records() {
		if err != nil {
			t.Fatal(err)
		}
		recs = append(recs, rec)
	}
	return recs
}

// splits returns the ways to write stream tested: whole, one byte at a
// time, and in two parts cut at every position.
func splits(stream []byte) map[string][][]byte {
	out := map[string][][]byte{"whole": {stream}}
	var bytewise [][]byte
	for i := range stream {
		bytewise = append(bytewise, stream[i:i+1])
	}
	out["bytewise"] = bytewise
	for i := 1; i < len(stream); i++ {
		out["cut at "+string(rune('0'+i/100))+string(rune('0'+i/10%10))+string(rune('0'+i%10))] = [][]byte{stream[:i], stream[i:]}
	}
	return out
}

func TestSSESplitter(t *testing.T) {
	cases := []struct {
		name   string
		stream string
		// notes are the notes of the records expected, in order ("" for
		// a dispatched event).
		notes []string
	}{
		{"LF", "id: 1\nevent: message\ndata: {\"a\":1}\n\nid: 2\ndata: x\ndata: y\n\n", []string{"", ""}},
		{"CRLF", "id: 1\r\ndata: a\r\n\r\nretry: 50\r\ndata: b\r\n\r\n", []string{"", ""}},
		{"CR", "id: 1\rdata: a\r\rdata: b\r\r", []string{"", ""}},
		{"priming, comment, retry alone", "id: 0_0\nretry: 10\ndata:\n\n: ping\n\ndata: m\n\nretry: 1000\n\n", []string{"", "sse comment", "", "no data: not dispatched"}},
		{"cut inside an event", "data: whole\n\nid: 9\ndata: half", []string{"", "partial SSE event: the stream ended inside it"}},
		{"leading blank line", "\ndata: a\n\n", []string{"sse comment", ""}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			stream := []byte(tc.stream)
			var want []sse.Event
			for ev, err := range sse.NewReader(bytes.NewReader(stream)).Events() {
				if err != nil {
					t.Fatal(err)
				}
				want = append(want, ev)
			}
			for how, writes := range splits(stream) {
				recs := teeStream(t, writes)
				var raw bytes.Buffer
				var got []sse.Event
				var notes []string
				for _, r := range recs {
					raw.Write(r.Raw)
					if r.Stream != "get:1" || r.Dir != traces.DirServerToClient || r.Exchange != 1 {
						t.Fatalf("%s: record %+v", how, r)
					}
					notes = append(notes, r.Note)
					if r.Kind == traces.KindSSEEvent && r.Note == "" {
						got = append(got, sse.Event{ID: r.SSE.ID, HasID: r.SSE.HasID, Name: r.SSE.Event, Data: r.SSE.Data, Retry: r.SSE.Retry, HasRetry: r.SSE.HasRetry})
					}
				}
				if !bytes.Equal(raw.Bytes(), stream) {
					t.Errorf("%s: records hold %q, want %q", how, raw.Bytes(), stream)
				}
				if len(got) != len(want) {
					t.Fatalf("%s: %d events, want %d: %+v", how, len(got), len(want), got)
				}
				for i := range want {
					if got[i] != want[i] {
						t.Errorf("%s: event %d = %+v, want %+v", how, i, got[i], want[i])
					}
				}
				if !equalStrings(notes, tc.notes) {
					t.Errorf("%s: notes %q, want %q", how, notes, tc.notes)
				}
			}
		})
	}
}

func TestSSESplitterRetryAlone(t *testing.T) {
	recs := teeStream(t, [][]byte{[]byte("id: 7\nretry: 250\n\n")})
	if len(recs) != 1 {
		t.Fatalf("%d records", len(recs))
	}
	f := recs[0].SSE
	if recs[0].Kind != traces.KindSSEEvent || f == nil || f.ID != "7" || !f.HasID || f.Retry != 250*time.Millisecond || !f.HasRetry {
		t.Errorf("record %+v, fields %+v", recs[0], f)
	}
}

func equalStrings(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestSSESplitterOversize: an event over sse.MaxBlock is recorded as body
// chunks marked Oversize as its bytes pass, the last with its blank line;
// the events around it are recorded as events.
func TestSSESplitterOversize(t *testing.T) {
	big := append([]byte("data: "), bytes.Repeat([]byte("x"), sse.MaxBlock)...)
	big = append(big, "\r\n\r\n"...)
	stream := append(append([]byte("id: 1\ndata: a\n\n"), big...), "id: 2\ndata: b\n\n"...)
	// Writes of 1 MiB; the CR of the big event's blank line ends one, so
	// that its LF comes with the next.
	cut := len("id: 1\ndata: a\n\n") + len(big) - 1
	var writes [][]byte
	for s := stream[:cut]; len(s) > 0; {
		k := min(len(s), 1<<20)
		writes = append(writes, s[:k])
		s = s[k:]
	}
	writes = append(writes, stream[cut:])
	recs := teeStream(t, writes)
	var raw, over bytes.Buffer
	var ids []string
	for i, r := range recs {
		raw.Write(r.Raw)
		switch {
		case r.Oversize:
			if r.Kind != traces.KindBodyChunk || r.SSE != nil || r.RPC != nil {
				t.Fatalf("oversize record %d: %+v", i, r.Kind)
			}
			over.Write(r.Raw)
		case r.Kind == traces.KindSSEEvent:
			ids = append(ids, r.SSE.ID)
		default:
			t.Errorf("record %d: %s %q", i, r.Kind, r.Note)
		}
	}
	if !bytes.Equal(raw.Bytes(), stream) {
		t.Errorf("records hold %d bytes, want the %d of the stream", raw.Len(), len(stream))
	}
	if !bytes.Equal(over.Bytes(), big) {
		t.Errorf("oversize records hold %d bytes, want the %d of the event", over.Len(), len(big))
	}
	if !equalStrings(ids, []string{"1", "2"}) {
		t.Errorf("events %q, want 1 and 2", ids)
	}
}
