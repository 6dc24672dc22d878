package faults

import (
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"
)

// FuzzHTTPPassesBytes: an event stream written in pieces of any size
// through Handler, with a fault that acts on every event without changing
// it (a zero delay), comes out byte for byte as it went in.
func FuzzHTTPPassesBytes(f *testing.F) {
	f.Add([]byte("id: 1\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"a\"}\n\n: ping\n\ndata: x\n\n"), uint8(3))
	f.Add([]byte("id: 1\r\ndata: a\r\n\r\nid: 2\rdata: b\r\r\ndata: c\n\n"), uint8(1))
	f.Add([]byte("retry: 1000\n\ndata: \n\ndata: unfinished"), uint8(7))
	f.Add([]byte("\xEF\xBB\xBFdata: bom\n\n\n\n\r\r\n"), uint8(2))
	b, err := Builtin().Parse("delay:d=0s")
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, stream []byte, size uint8) {
		n := int(size)%64 + 1
		next := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/event-stream")
			for s := stream; len(s) > 0; {
				k := min(n, len(s))
				w.Write(s[:k])
				s = s[k:]
			}
		})
		rec := httptest.NewRecorder()
		Handler(next, NewSet(1, b), nil).ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/mcp", nil))
		if got := rec.Body.String(); got != string(stream) {
			t.Fatalf("in  %q\nout %q", stream, got)
		}
	})
}

// FuzzParseFile: ParseFile never panics, and each spec of a file it
// accepts, in its text form (as a trace header keeps it), parses back as
// the same spec: no value carries a separator the text form would read
// again.
func FuzzParseFile(f *testing.F) {
	f.Add([]byte(`{"seed": 7, "faults": ["drop-sse-event:nth=3", {"fault": "delay", "params": {"d": "200ms"}}]}`))
	f.Add([]byte(`{"faults": [{"fault": "delay", "params": {"d": "1ms,nth=2"}}]}`))
	f.Add([]byte(`{"faults": [{"fault": "delay:d=1h"}]}`))
	f.Add([]byte(`{"faults": ["delay"]} garbage`))
	f.Add([]byte(`{"faults": [{"fault": "delay", "params": {"d": "1ms", "d": "2ms"}}]}`))
	f.Add([]byte("# faults\ndisconnect:after=1,nth=3\nstall:nth=4 # the fourth\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		file, err := ParseFile("fuzz", data)
		if err != nil {
			if strings.Contains(err.Error(), "\n") {
				t.Fatalf("error is not one line: %q", err)
			}
			return
		}
		for _, s := range file.Specs {
			back, err := ParseSpec(s.String())
			if err != nil || !reflect.DeepEqual(back, s) {
				t.Fatalf("spec %+v: its text %q parses back as %+v, %v", s, s.String(), back, err)
			}
		}
	})
}
