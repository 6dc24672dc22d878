package sse_test

import (
	"errors"
	"fmt"
	"io"
	"reflect"
	"strings"
	"testing"
	"testing/iotest"
	"time"

	"github.com/tasksim/tasksim/mcp/sse"
)

// result is everything a reader tells about a whole stream.
type result struct {
	Events   []sse.Event
	Err      error // the error that ended the stream; nil for io.EOF
	LastID   string
	Partial  bool
	Retry    time.Duration
	HasRetry bool
}

// readAll reads a stream to its end with r.
func readAll(r *sse.Reader) result {
	var res result
	for ev, err := range r.Events() {
		if err != nil {
			res.Err = err
			break
		}
		res.Events = append(res.Events, ev)
	}
	res.LastID = r.LastEventID()
	res.Partial = r.Partial()
	res.Retry, res.HasRetry = r.Retry()
	return res
}

// sources feed a stream to a reader in different read sizes, so that line
// endings fall at every place relative to read boundaries.
var sources = []struct {
	name string
	wrap func(string) io.Reader
}{
	{"whole", func(s string) io.Reader { return strings.NewReader(s) }},
	{"one-byte", func(s string) io.Reader { return iotest.OneByteReader(strings.NewReader(s)) }},
	{"half", func(s string) io.Reader { return iotest.HalfReader(strings.NewReader(s)) }},
	{"data-with-eof", func(s string) io.Reader { return iotest.DataErrReader(strings.NewReader(s)) }},
}

func data(s string) sse.Event { return sse.Event{Data: s} }

func TestReader(t *testing.T) {
	maxRetry := time.Duration(9223372036854) * time.Millisecond
	tests := []struct {
		name  string
		input string
		want  result
	}{
		{"empty stream", "", result{}},
		{"only blank lines", "\n\r\n\r\n\n", result{}},
		{"LF", "data: a\n\ndata: b\n\n", result{Events: []sse.Event{data("a"), data("b")}}},
		{"CRLF", "data: a\r\n\r\ndata: b\r\n\r\n", result{Events: []sse.Event{data("a"), data("b")}}},
		{"CR", "data: a\r\rdata: b\r\r", result{Events: []sse.Event{data("a"), data("b")}}},
		{"mixed endings", "data: a\r\ndata: b\rdata: c\n\r\n", result{Events: []sse.Event{data("a\nb\nc")}}},
		{"CR then CRLF is two endings", "data: a\r\r\ndata: b\n\n", result{Events: []sse.Event{data("a"), data("b")}}},
		{"LF then CR is two endings", "data: a\n\rdata: b\n\n", result{Events: []sse.Event{data("a"), data("b")}}},
		{"LF CR LF", "data: a\n\r\n", result{Events: []sse.Event{data("a")}}},
		{"BOM", "\uFEFFdata: a\n\n", result{Events: []sse.Event{data("a")}}},
		{"only a BOM", "\uFEFF", result{}},
		{"second BOM is part of the field name", "\uFEFF\uFEFFdata: a\n\ndata: b\n\n", result{Events: []sse.Event{data("b")}}},
		{"BOM after the start", "data: a\n\n\uFEFFdata: b\n\n", result{Events: []sse.Event{data("a")}}},
		{"cut BOM", "\xEF\xBBdata: a\n\ndata: b\n\n", result{Events: []sse.Event{data("b")}}},
		{"comments", ": hello\ndata: a\n:\n: x: y\n\n", result{Events: []sse.Event{data("a")}}},
		{"comment block dispatches nothing", ": keep-alive\n\n", result{}},
		{"multi-line data", "data: a\ndata:\ndata: b\n\n", result{Events: []sse.Event{data("a\n\nb")}}},
		{"no space after colon", "data:a\n\n", result{Events: []sse.Event{data("a")}}},
		{"only one space removed", "data:  a \n\n", result{Events: []sse.Event{data(" a ")}}},
		{"tab is kept", "data:\ta\n\n", result{Events: []sse.Event{data("\ta")}}},
		{"colon in value", "data: a: b:c\n\n", result{Events: []sse.Event{data("a: b:c")}}},
		{"NUL in data", "data: a\x00b\n\n", result{Events: []sse.Event{data("a\x00b")}}},
		{"invalid UTF-8 passes through", "data: \xff\xfe\n\n", result{Events: []sse.Event{data("\xff\xfe")}}},
		{"field without colon", "data\n\n", result{Events: []sse.Event{data("")}}},
		{"two fields without colon", "data\ndata\n\n", result{Events: []sse.Event{data("\n")}}},
		{"field names are case-sensitive", "Data: a\n\n", result{}},
		{"unknown field ignored", "foo: bar\ndata: a\nfoo\n\n", result{Events: []sse.Event{data("a")}}},
		{"field name with space is unknown", "data : a\n\n", result{}},
		{"event name", "event: add\ndata: a\n\n", result{Events: []sse.Event{{Name: "add", Data: "a"}}}},
		{"event name resets after dispatch", "event: add\ndata: a\n\ndata: b\n\n",
			result{Events: []sse.Event{{Name: "add", Data: "a"}, data("b")}}},
		{"last event name wins", "event: a\nevent: b\ndata: x\n\n", result{Events: []sse.Event{{Name: "b", Data: "x"}}}},
		{"empty event name", "event:\ndata: a\n\n", result{Events: []sse.Event{data("a")}}},
		{"repeated event name", "event: m\ndata: a\n\nevent: m\ndata: b\n\n",
			result{Events: []sse.Event{{Name: "m", Data: "a"}, {Name: "m", Data: "b"}}}},
		{"id", "id: 1\ndata: a\n\ndata: b\n\n",
			result{Events: []sse.Event{{ID: "1", HasID: true, Data: "a"}, data("b")}, LastID: "1"}},
		{"id after data in the same event", "data: a\nid: 9\n\n",
			result{Events: []sse.Event{{ID: "9", HasID: true, Data: "a"}}, LastID: "9"}},
		{"id with NUL is ignored", "id: 1\n\ndata: x\nid: a\x00b\n\n",
			result{Events: []sse.Event{data("x")}, LastID: "1"}},
		{"empty id resets the last event id", "id: 1\ndata: a\n\nid\ndata: b\n\n",
			result{Events: []sse.Event{{ID: "1", HasID: true, Data: "a"}, {HasID: true, Data: "b"}}}},
		{"id without data sets the last event id only", "id: 7\n\n", result{LastID: "7"}},
		{"id with empty data line is dispatched", "id: 7\ndata:\n\n",
			result{Events: []sse.Event{{ID: "7", HasID: true}}, LastID: "7"}},
		{"id with bare data field is dispatched", "id: 7\ndata\n\n",
			result{Events: []sse.Event{{ID: "7", HasID: true}}, LastID: "7"}},
		{"id with spaces kept", "id:  7 \ndata: a\n\n",
			result{Events: []sse.Event{{ID: " 7 ", HasID: true, Data: "a"}}, LastID: " 7 "}},
		{"retry", "retry: 1500\ndata: a\n\n",
			result{Events: []sse.Event{{Retry: 1500 * time.Millisecond, HasRetry: true, Data: "a"}}, Retry: 1500 * time.Millisecond, HasRetry: true}},
		{"retry zero", "retry: 0\ndata: a\n\n",
			result{Events: []sse.Event{{HasRetry: true, Data: "a"}}, HasRetry: true}},
		{"retry without data sets the reconnection time only", "retry: 300\n\ndata: a\n\n",
			result{Events: []sse.Event{data("a")}, Retry: 300 * time.Millisecond, HasRetry: true}},
		{"retry with a fraction is ignored", "retry: 1.5\ndata: a\n\n", result{Events: []sse.Event{data("a")}}},
		{"negative retry is ignored", "retry: -1\ndata: a\n\n", result{Events: []sse.Event{data("a")}}},
		{"empty retry is ignored", "retry:\ndata: a\n\n", result{Events: []sse.Event{data("a")}}},
		{"retry with letters is ignored", "retry: 12a\ndata: a\n\n", result{Events: []sse.Event{data("a")}}},
		{"retry with a second space is ignored", "retry:  5\ndata: a\n\n", result{Events: []sse.Event{data("a")}}},
		{"invalid retry keeps the earlier one", "retry: 5\ndata: a\n\nretry: x\ndata: b\n\n",
			result{Events: []sse.Event{{Retry: 5 * time.Millisecond, HasRetry: true, Data: "a"}, data("b")}, Retry: 5 * time.Millisecond, HasRetry: true}},
		{"huge retry is clamped", "retry: 99999999999999999999999\ndata: a\n\n",
			result{Events: []sse.Event{{Retry: maxRetry, HasRetry: true, Data: "a"}}, Retry: maxRetry, HasRetry: true}},
		{"event without blank line at the end", "data: a\n\ndata: b\n",
			result{Events: []sse.Event{data("a")}, Partial: true}},
		{"unterminated line at the end", "data: a\n\ndata: b",
			result{Events: []sse.Event{data("a")}, Partial: true}},
		{"unterminated comment at the end", "data: a\n\n: bye",
			result{Events: []sse.Event{data("a")}}},
		{"comment line at the end", "data: a\n\n: bye\n",
			result{Events: []sse.Event{data("a")}}},
		{"cut event's id is not the last event id", "id: 1\ndata: a\n\nid: 2\ndata: b\n",
			result{Events: []sse.Event{{ID: "1", HasID: true, Data: "a"}}, LastID: "1", Partial: true}},
		{"cut id-only block", "id: 2\n", result{Partial: true}},
		{"all fields", "id: 42\nevent: note\nretry: 10\ndata: {\"a\":1}\ndata: x\n\n",
			result{Events: []sse.Event{{ID: "42", HasID: true, Name: "note", Data: "{\"a\":1}\nx", Retry: 10 * time.Millisecond, HasRetry: true}},
				LastID: "42", Retry: 10 * time.Millisecond, HasRetry: true}},
	}
	for _, tt := range tests {
		for _, src := range sources {
			t.Run(tt.name+"/"+src.name, func(t *testing.T) {
				got := readAll(sse.NewReader(src.wrap(tt.input)))
				if !reflect.DeepEqual(got, tt.want) {
					t.Errorf("reading %q\n got %+v\nwant %+v", tt.input, got, tt.want)
				}
			})
		}
	}
}

// chunks returns its chunks one Read at a time, then errBlocked: a stream
// that has nothing more to say yet.
type chunks []string

var errBlocked = errors.New("read would block")

func (c *chunks) Read(p []byte) (int, error) {
	if len(*c) == 0 {
		return 0, errBlocked
	}
	n := copy(p, (*c)[0])
	if n < len((*c)[0]) {
		(*c)[0] = (*c)[0][n:]
	} else {
		*c = (*c)[1:]
	}
	return n, nil
}

func TestReaderReadBoundaries(t *testing.T) {
	tests := []struct {
		name   string
		chunks chunks
		want   []sse.Event
	}{
		{"CR ends a read, LF starts the next", chunks{"data: a\r", "\ndata: b\r", "\n\r", "\n"}, []sse.Event{data("a\nb")}},
		{"CR at the end of the last read dispatches at once", chunks{"data: a\r\r"}, []sse.Event{data("a")}},
		{"CRLF split before a dispatch", chunks{"data: a\r\n\r", "\ndata: b\r\n\r\n"}, []sse.Event{data("a"), data("b")}},
		{"line across reads", chunks{"da", "ta: ", "a", "b\n", "\n"}, []sse.Event{data("ab")}},
		{"BOM across reads", chunks{"\xEF", "\xBB", "\xBFdata: a\n\n"}, []sse.Event{data("a")}},
		{"stream starting with one byte", chunks{"\n", "data: a\n\n"}, []sse.Event{data("a")}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := sse.NewReader(&tt.chunks)
			var got []sse.Event
			for {
				ev, err := r.Next()
				if errors.Is(err, errBlocked) {
					break
				}
				if err != nil {
					t.Fatalf("Next: %v", err)
				}
				got = append(got, ev)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestReaderLimits(t *testing.T) {
	long := strings.Repeat("x", 10)
	tests := []struct {
		name     string
		maxLine  int
		maxEvent int
		input    string
		want     result
	}{
		{"line at the limit", 16, 0, "data: " + long + "\n\n", result{Events: []sse.Event{data(long)}}},
		{"line over the limit", 15, 0, "data: a\n\ndata: " + long + "\n\n",
			result{Events: []sse.Event{data("a")}, Err: sse.ErrLineTooLong}},
		{"unterminated line over the limit", 15, 0, "data: " + long, result{Err: sse.ErrLineTooLong}},
		{"comment over the limit", 5, 0, ": " + long + "\n", result{Err: sse.ErrLineTooLong}},
		{"CRLF does not count", 16, 0, "data: " + long + "\r\n\r\n", result{Events: []sse.Event{data(long)}}},
		{"event at the limit", 0, 4, "data: a\ndata: b\n\n", result{Events: []sse.Event{data("a\nb")}}},
		{"event over the limit", 0, 3, "data: a\ndata: b\n\n", result{Err: sse.ErrEventTooLong}},
		{"limit is per event", 0, 2, "data: a\n\ndata: b\n\n", result{Events: []sse.Event{data("a"), data("b")}}},
	}
	for _, tt := range tests {
		for _, src := range sources {
			t.Run(tt.name+"/"+src.name, func(t *testing.T) {
				r := sse.NewReader(src.wrap(tt.input))
				r.MaxLine, r.MaxEvent = tt.maxLine, tt.maxEvent
				got := readAll(r)
				if !errors.Is(got.Err, tt.want.Err) || (got.Err == nil) != (tt.want.Err == nil) {
					t.Fatalf("error %v, want %v", got.Err, tt.want.Err)
				}
				got.Err = tt.want.Err
				if !reflect.DeepEqual(got, tt.want) {
					t.Errorf("got %+v, want %+v", got, tt.want)
				}
				if tt.want.Err == nil {
					return
				}
				if _, err := r.Next(); !errors.Is(err, tt.want.Err) {
					t.Errorf("Next after the error: %v, want %v again", err, tt.want.Err)
				}
			})
		}
	}
}

// endless is an endless line.
type endless struct{ n int }

func (e *endless) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = 'x'
	}
	e.n += len(p)
	return len(p), nil
}

func TestReaderDefaultLineLimit(t *testing.T) {
	src := &endless{}
	_, err := sse.NewReader(src).Next()
	if !errors.Is(err, sse.ErrLineTooLong) {
		t.Fatalf("Next on an endless line: %v, want ErrLineTooLong", err)
	}
	if want := "sse: line too long: line 1 is longer than 4194304 bytes"; err.Error() != want {
		t.Errorf("error %q, want %q", err, want)
	}
	if src.n > sse.DefaultMaxLine+64<<10 {
		t.Errorf("read %d bytes before giving up, want about %d", src.n, sse.DefaultMaxLine)
	}
}

func TestReaderSourceError(t *testing.T) {
	boom := errors.New("connection reset")
	src := io.MultiReader(strings.NewReader("data: a\n\ndata: b\n"), iotest.ErrReader(boom))
	r := sse.NewReader(src)
	got := readAll(r)
	want := result{Events: []sse.Event{data("a")}, Err: boom}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %+v, want %+v", got, want)
	}
	if _, err := r.Next(); err != boom {
		t.Errorf("Next after the error: %v, want %v", err, boom)
	}
}

func TestReaderNextAfterEOF(t *testing.T) {
	r := sse.NewReader(strings.NewReader("data: a\n\n"))
	if ev, err := r.Next(); err != nil || ev != data("a") {
		t.Fatalf("Next = %+v, %v; want data a", ev, err)
	}
	for i := range 2 {
		if ev, err := r.Next(); err != io.EOF || ev != (sse.Event{}) {
			t.Errorf("Next #%d at the end = %+v, %v; want zero event, io.EOF", i+2, ev, err)
		}
	}
}

func TestEventsStopsEarly(t *testing.T) {
	r := sse.NewReader(strings.NewReader("data: 1\n\ndata: 2\n\ndata: 3\n\n"))
	var got []string
	for ev, err := range r.Events() {
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, ev.Data)
		if ev.Data == "2" {
			break
		}
	}
	if want := []string{"1", "2"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("got %q, want %q", got, want)
	}
	// The reader goes on where the loop stopped.
	ev, err := r.Next()
	if err != nil || ev.Data != "3" {
		t.Errorf("Next after break = %+v, %v; want data 3", ev, err)
	}
}

func TestEventsYieldsErrorOnce(t *testing.T) {
	boom := errors.New("boom")
	r := sse.NewReader(io.MultiReader(strings.NewReader("data: a\n\n"), iotest.ErrReader(boom)))
	var got []string
	for ev, err := range r.Events() {
		got = append(got, fmt.Sprintf("%q %v", ev.Data, err))
	}
	want := []string{`"a" <nil>`, `"" boom`}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
}
