package sse_test

import (
	"bytes"
	"errors"
	"reflect"
	"strings"
	"testing"
	"testing/iotest"
	"time"

	"github.com/tasksim/tasksim/mcp/sse"
)

// FuzzReader checks that any input reads without panic, the same in one
// read as one byte at a time, and that the events read encode and read back
// unchanged.
func FuzzReader(f *testing.F) {
	for _, s := range []string{
		"",
		"data: a\n\n",
		"\uFEFFid: 1\r\nevent: e\r\nretry: 10\r\ndata: x\r\ndata\r\n\r\n",
		"data: a\rdata: b\r\r: c\n\n",
		"id: 7\ndata:\n\nid\n\n",
		"id: a\x00b\ndata: x\n\nretry: 1x\n\ndata: cut",
		"event: a\x00b\ndata: x\n\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		read := func(r *sse.Reader) result {
			r.MaxLine = 64 // let the fuzzer reach the limit
			return readAll(r)
		}
		whole := read(sse.NewReader(bytes.NewReader(in)))
		bytewise := read(sse.NewReader(iotest.OneByteReader(bytes.NewReader(in))))
		if whole.Err != nil && bytewise.Err != nil && whole.Err.Error() == bytewise.Err.Error() {
			bytewise.Err = whole.Err
		}
		if !reflect.DeepEqual(whole, bytewise) {
			t.Fatalf("one read and one byte at a time differ on %q\n      whole %+v\none-by-one %+v", in, whole, bytewise)
		}
		if whole.Err != nil && !errors.Is(whole.Err, sse.ErrLineTooLong) {
			t.Fatalf("unexpected error on %q: %v", in, whole.Err)
		}
		if whole.Err != nil && whole.Partial {
			t.Errorf("Partial is true after error %v", whole.Err)
		}

		var enc []byte
		var want []sse.Event
		for _, e := range whole.Events {
			b, err := sse.AppendEvent(enc, e)
			if err != nil {
				// Only a name with NUL reads but does not encode.
				if !strings.Contains(e.Name, "\x00") {
					t.Fatalf("AppendEvent(%+v) on an event read from %q: %v", e, in, err)
				}
				continue
			}
			enc, want = b, append(want, e)
		}
		again := readAll(sse.NewReader(bytes.NewReader(enc)))
		if again.Err != nil || again.Partial {
			t.Fatalf("reading back %q: %v, partial %v", enc, again.Err, again.Partial)
		}
		if !reflect.DeepEqual(again.Events, want) {
			t.Fatalf("round trip of %q through %q\n got %+v\nwant %+v", in, enc, again.Events, want)
		}
	})
}

// FuzzRoundTrip checks that every event AppendEvent accepts reads back as
// one event equal to it (up to line endings in the data and sub-millisecond
// retry), and that it refuses only what cannot be encoded.
func FuzzRoundTrip(f *testing.F) {
	f.Add("1", "message", `{"jsonrpc":"2.0"}`, int64(0), true, false)
	f.Add("", "", "", int64(0), false, false)
	f.Add("p", "", "", int64(0), true, false)
	f.Add(" x", " y", " a\r\nb\rc\n", int64(1500*time.Millisecond), false, true)
	f.Add("a\nb", "", "", int64(-1), false, true)
	f.Fuzz(func(t *testing.T, id, name, data string, retry int64, hasID, hasRetry bool) {
		e := sse.Event{ID: id, HasID: hasID, Name: name, Data: data, Retry: time.Duration(retry), HasRetry: hasRetry}
		enc, err := sse.AppendEvent(nil, e)
		invalid := strings.ContainsAny(id, "\r\n\x00") || strings.ContainsAny(name, "\r\n\x00") || retry < 0
		if invalid != (err != nil) {
			t.Fatalf("AppendEvent(%+v) error %v; invalid fields: %v", e, err, invalid)
		}
		if err != nil {
			if !errors.Is(err, sse.ErrInvalidField) || enc != nil {
				t.Fatalf("AppendEvent(%+v) = %q, %v; want nil, ErrInvalidField", e, enc, err)
			}
			return
		}
		var buf bytes.Buffer
		if err := sse.NewWriter(&buf).WriteEvent(e); err != nil || buf.String() != string(enc) {
			t.Fatalf("WriteEvent wrote %q, %v; AppendEvent gave %q", buf.Bytes(), err, enc)
		}
		got := readAll(sse.NewReader(bytes.NewReader(enc)))
		want := result{Events: []sse.Event{normalize(e)}}
		if want.Events[0].HasID {
			want.LastID = id
		}
		if want.Events[0].HasRetry {
			want.Retry, want.HasRetry = want.Events[0].Retry, true
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("read back %q\n got %+v\nwant %+v", enc, got, want)
		}
	})
}
