package streamhttp

import (
	"bytes"
	"math"
	"strconv"
	"testing"

	"github.com/tasksim/tasksim/mcp/sse"
)

func TestEventID(t *testing.T) {
	cases := []struct {
		name          string
		id            string
		stream, event uint64
		ok            bool
	}{
		{name: "message", id: "3_17", stream: 3, event: 17, ok: true},
		{name: "POST priming", id: "3_0", stream: 3, event: 0, ok: true},
		{name: "standalone message", id: "0_4", stream: 0, event: 4, ok: true},
		{name: "standalone priming", id: "0_4_2", stream: 0, event: 4, ok: true},
		{name: "largest", id: "18446744073709551615_18446744073709551615", stream: math.MaxUint64, event: math.MaxUint64, ok: true},
		{name: "POST stream with a priming counter", id: "3_0_1", ok: false},
		{name: "zero priming counter", id: "0_4_0", ok: false},
		{name: "overflow", id: "18446744073709551616_1", ok: false},
		{name: "leading zero", id: "03_1", ok: false},
		{name: "sign", id: "+3_1", ok: false},
		{name: "negative", id: "-3_1", ok: false},
		{name: "space", id: "3_ 1", ok: false},
		{name: "one part", id: "31", ok: false},
		{name: "four parts", id: "0_1_2_3", ok: false},
		{name: "empty part", id: "3_", ok: false},
		{name: "empty", id: "", ok: false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s, e, ok := parseEventID(tc.id)
			if ok != tc.ok || (ok && (s != tc.stream || e != tc.event)) {
				t.Errorf("parseEventID(%q) = %d, %d, %v; want %d, %d, %v", tc.id, s, e, ok, tc.stream, tc.event, tc.ok)
			}
		})
	}
}

func TestEventIDRoundTrip(t *testing.T) {
	for _, n := range []uint64{0, 1, 9, 10, 12345, math.MaxUint64} {
		id := string(appendEventID(nil, n, n/2+1))
		if s, e, ok := parseEventID(id); !ok || s != n || e != n/2+1 {
			t.Errorf("%s parsed as %d, %d, %v", id, s, e, ok)
		}
		p := primingID(0, n, 7)
		if p != "0_"+strconv.FormatUint(n, 10)+"_7" {
			t.Errorf("primingID = %s", p)
		}
		if s, e, ok := parseEventID(p); !ok || s != 0 || e != n {
			t.Errorf("%s parsed as %d, %d, %v", p, s, e, ok)
		}
	}
}

// TestMessageEvent: an event written in one piece is what sse.AppendEvent
// writes for it, for data on one line and data over several.
func TestMessageEvent(t *testing.T) {
	for _, data := range []string{`{"jsonrpc":"2.0","id":1,"result":{}}`, ``, "a\nb", "a\r\nb\rc", `{"text":"\n"}`} {
		got, err := messageEvent([]byte(data), 3, 17)
		if err != nil {
			t.Fatal(err)
		}
		want, err := sse.AppendEvent(nil, sse.Event{ID: "3_17", Name: "message", Data: data})
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%q: event %q, want %q", data, got, want)
		}
	}
}
