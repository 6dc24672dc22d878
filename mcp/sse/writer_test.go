package sse_test

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/tasksim/tasksim/mcp/sse"
)

func TestAppendEvent(t *testing.T) {
	tests := []struct {
		name  string
		event sse.Event
		want  string
	}{
		{"data", sse.Event{Data: "a"}, "data: a\n\n"},
		{"zero event", sse.Event{}, "data:\n\n"},
		{"priming event", sse.Event{ID: "7", HasID: true}, "id: 7\ndata:\n\n"},
		{"id without HasID", sse.Event{ID: "7"}, "id: 7\ndata:\n\n"},
		{"empty id", sse.Event{HasID: true, Data: "a"}, "id:\ndata: a\n\n"},
		{"name", sse.Event{Name: "add", Data: "a"}, "event: add\ndata: a\n\n"},
		{"retry", sse.Event{Retry: 1500 * time.Millisecond, Data: "a"}, "retry: 1500\ndata: a\n\n"},
		{"retry rounds down to milliseconds", sse.Event{Retry: 1999 * time.Microsecond, Data: "a"}, "retry: 1\ndata: a\n\n"},
		{"retry zero", sse.Event{HasRetry: true, Data: "a"}, "retry: 0\ndata: a\n\n"},
		{"all fields", sse.Event{ID: "1", HasID: true, Name: "add", Data: "x", Retry: time.Second, HasRetry: true},
			"id: 1\nevent: add\nretry: 1000\ndata: x\n\n"},
		{"multi-line data", sse.Event{Data: "a\nb\r\nc\rd"}, "data: a\ndata: b\ndata: c\ndata: d\n\n"},
		{"empty lines in data", sse.Event{Data: "\n\r\n\r"}, "data:\ndata:\ndata:\ndata:\n\n"},
		{"trailing newline", sse.Event{Data: "a\n"}, "data: a\ndata:\n\n"},
		{"CR CR", sse.Event{Data: "a\r\rb"}, "data: a\ndata:\ndata: b\n\n"},
		{"leading space kept", sse.Event{ID: " 1", Name: " n", Data: " a"}, "id:  1\nevent:  n\ndata:  a\n\n"},
		{"colon and NUL in data", sse.Event{Data: "a: b\x00"}, "data: a: b\x00\n\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := sse.AppendEvent([]byte("prefix\n"), tt.event)
			if err != nil {
				t.Fatalf("AppendEvent: %v", err)
			}
			if want := "prefix\n" + tt.want; string(got) != want {
				t.Errorf("got %q, want %q", got, want)
			}
		})
	}
}

func TestAppendEventInvalid(t *testing.T) {
	tests := []struct {
		name  string
		event sse.Event
	}{
		{"LF in id", sse.Event{ID: "a\nb"}},
		{"CR in id", sse.Event{ID: "a\r"}},
		{"NUL in id", sse.Event{ID: "\x00", HasID: true}},
		{"LF in name", sse.Event{Name: "a\n"}},
		{"CR in name", sse.Event{Name: "\ra"}},
		{"NUL in name", sse.Event{Name: "a\x00b"}},
		{"negative retry", sse.Event{Retry: -time.Millisecond, HasRetry: true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dst := []byte("prefix")
			got, err := sse.AppendEvent(dst, tt.event)
			if !errors.Is(err, sse.ErrInvalidField) {
				t.Errorf("error %v, want ErrInvalidField", err)
			}
			if string(got) != "prefix" {
				t.Errorf("dst became %q, want it unchanged", got)
			}
			var buf bytes.Buffer
			if err := sse.NewWriter(&buf).WriteEvent(tt.event); !errors.Is(err, sse.ErrInvalidField) {
				t.Errorf("WriteEvent error %v, want ErrInvalidField", err)
			}
			if buf.Len() != 0 {
				t.Errorf("WriteEvent wrote %q, want nothing", buf.String())
			}
		})
	}
}

func TestWriteComment(t *testing.T) {
	tests := []struct {
		name string
		text string
		want string
	}{
		{"empty", "", ":\n\n"},
		{"text", "keep-alive", ": keep-alive\n\n"},
		{"lines", "a\nb\r\nc", ": a\n: b\n: c\n\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var buf bytes.Buffer
			if err := sse.NewWriter(&buf).WriteComment(tt.text); err != nil {
				t.Fatal(err)
			}
			if buf.String() != tt.want {
				t.Errorf("got %q, want %q", buf.String(), tt.want)
			}
			r := sse.NewReader(&buf)
			if ev, err := r.Next(); err != io.EOF || r.Partial() {
				t.Errorf("reading the comment back: %+v, %v, partial %v; want nothing", ev, err, r.Partial())
			}
		})
	}
}

// writes records each Write call.
type writes struct {
	calls []string
	err   error
}

func (w *writes) Write(p []byte) (int, error) {
	w.calls = append(w.calls, string(p))
	if w.err != nil {
		return 0, w.err
	}
	return len(p), nil
}

func TestWriterOneWritePerEvent(t *testing.T) {
	var w writes
	sw := sse.NewWriter(&w)
	if err := sw.WriteEvent(sse.Event{ID: "1", Data: "a\nb"}); err != nil {
		t.Fatal(err)
	}
	if err := sw.WriteComment("ping"); err != nil {
		t.Fatal(err)
	}
	if err := sw.WriteEvent(sse.Event{Data: strings.Repeat("x", 100<<10)}); err != nil {
		t.Fatal(err)
	}
	if err := sw.WriteEvent(sse.Event{Data: "c"}); err != nil {
		t.Fatal(err)
	}
	want := []string{"id: 1\ndata: a\ndata: b\n\n", ": ping\n\n", "data: " + strings.Repeat("x", 100<<10) + "\n\n", "data: c\n\n"}
	if len(w.calls) != len(want) {
		t.Fatalf("%d writes, want %d", len(w.calls), len(want))
	}
	for i := range want {
		if w.calls[i] != want[i] {
			t.Errorf("write %d: got %.40q, want %.40q", i, w.calls[i], want[i])
		}
	}
}

func TestWriterError(t *testing.T) {
	boom := errors.New("broken pipe")
	sw := sse.NewWriter(&writes{err: boom})
	if err := sw.WriteEvent(sse.Event{Data: "a"}); !errors.Is(err, boom) || err.Error() != "sse: write event: broken pipe" {
		t.Errorf("WriteEvent error %v, want it to wrap %v", err, boom)
	}
	if err := sw.WriteComment("x"); !errors.Is(err, boom) || err.Error() != "sse: write comment: broken pipe" {
		t.Errorf("WriteComment error %v, want it to wrap %v", err, boom)
	}
}

// flusher counts Flush calls, the http.Flusher way.
type flusher struct {
	bytes.Buffer
	n int
}

func (f *flusher) Flush() { f.n++ }

// errFlusher fails to flush, the bufio.Writer way.
type errFlusher struct{ bytes.Buffer }

var errFlush = errors.New("flush failed")

func (f *errFlusher) Flush() error { return errFlush }

func TestWriterFlush(t *testing.T) {
	t.Run("Flush()", func(t *testing.T) {
		var f flusher
		if err := sse.NewWriter(&f).Flush(); err != nil || f.n != 1 {
			t.Errorf("Flush = %v with %d calls, want nil with 1", err, f.n)
		}
	})
	t.Run("Flush() error", func(t *testing.T) {
		if err := sse.NewWriter(&errFlusher{}).Flush(); !errors.Is(err, errFlush) {
			t.Errorf("Flush = %v, want %v", err, errFlush)
		}
	})
	t.Run("bufio.Writer", func(t *testing.T) {
		var out bytes.Buffer
		bw := bufio.NewWriter(&out)
		w := sse.NewWriter(bw)
		if err := w.WriteEvent(sse.Event{Data: "a"}); err != nil {
			t.Fatal(err)
		}
		if out.Len() != 0 {
			t.Fatalf("wrote %q before Flush, want nothing", out.String())
		}
		if err := w.Flush(); err != nil {
			t.Fatal(err)
		}
		if out.String() != "data: a\n\n" {
			t.Errorf("after Flush: %q, want %q", out.String(), "data: a\n\n")
		}
	})
	t.Run("no Flush method", func(t *testing.T) {
		if err := sse.NewWriter(&bytes.Buffer{}).Flush(); err != nil {
			t.Errorf("Flush = %v, want nil", err)
		}
	})
}

// normalize is what reading e back gives.
func normalize(e sse.Event) sse.Event {
	e.HasID = e.HasID || e.ID != ""
	e.HasRetry = e.HasRetry || e.Retry != 0
	e.Retry = e.Retry.Truncate(time.Millisecond)
	e.Data = strings.NewReplacer("\r\n", "\n", "\r", "\n").Replace(e.Data)
	return e
}

func TestRoundTrip(t *testing.T) {
	events := []sse.Event{
		{Data: "plain"},
		{},
		{ID: "p1", HasID: true},
		{ID: "1", HasID: true, Name: "message", Data: `{"jsonrpc":"2.0","id":1,"result":{}}`},
		{Data: "a\r\nb\nc\rd\r\n"},
		{Data: "\r\n\r\n"},
		{Name: "  spaced", Data: "  two spaces", ID: " id"},
		{HasID: true, Data: "reset id"},
		{Retry: 2500 * time.Millisecond, Data: "retry"},
		{Retry: 1, HasRetry: true, Data: "sub-millisecond retry"},
		{Data: ": not a comment\n\nid: not an id"},
		{Data: "\uFEFFbom inside"},
		{Data: strings.Repeat("long ", 10000)},
	}
	var buf bytes.Buffer
	w := sse.NewWriter(&buf)
	for _, e := range events {
		if err := w.WriteEvent(e); err != nil {
			t.Fatalf("WriteEvent(%+v): %v", e, err)
		}
		if err := w.WriteComment("between"); err != nil {
			t.Fatal(err)
		}
	}
	for _, src := range sources {
		t.Run(src.name, func(t *testing.T) {
			got := readAll(sse.NewReader(src.wrap(buf.String())))
			if got.Err != nil || got.Partial {
				t.Fatalf("reading: %v, partial %v", got.Err, got.Partial)
			}
			if len(got.Events) != len(events) {
				t.Fatalf("read %d events, want %d", len(got.Events), len(events))
			}
			for i, e := range events {
				if want := normalize(e); got.Events[i] != want {
					t.Errorf("event %d: got %+.80v, want %+.80v", i, got.Events[i], want)
				}
			}
			if got.LastID != "" {
				t.Errorf("last event id %q, want the reset to \"\"", got.LastID)
			}
		})
	}
}
