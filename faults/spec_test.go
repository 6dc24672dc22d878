package faults

import (
	"reflect"
	"strings"
	"testing"
)

func TestParseValid(t *testing.T) {
	r := Builtin()
	for _, tc := range []struct {
		name, text, want string
	}{
		{"bare", "drop-sse-event", "drop-sse-event"},
		{"selector", "drop-sse-event:method=tools/call,nth=3", "drop-sse-event:method=tools/call,nth=3"},
		{"probability", "duplicate-seqnr:p=0.2", "duplicate-seqnr:p=0.2"},
		{"own params", "disconnect:stream=post,after=2", "disconnect:stream=post,after=2"},
		{"spaces", " delay: d=200ms , jitter=50ms ", "delay:d=200ms,jitter=50ms"},
		{"status", "http-status:code=429,method=tasks/get", "http-status:code=429,method=tasks/get"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b, err := r.Parse(tc.text)
			if err != nil {
				t.Fatal(err)
			}
			if got := b.Spec.String(); got != tc.want {
				t.Fatalf("spec %q, want %q", got, tc.want)
			}
		})
	}
}

func TestParseInvalidNamesTheBadPart(t *testing.T) {
	r := Builtin()
	for _, tc := range []struct {
		name, text, want string
	}{
		{"empty", "", "no fault name"},
		{"unknown fault", "drop-everything", `fault "drop-everything": unknown fault (known: cut-request, delay, disconnect,`},
		{"bad name", "Drop", `fault "Drop": a fault name has only`},
		{"nothing after colon", "delay:", `fault "delay:": nothing after ':'`},
		{"no equals", "delay:d", `d: want key=value`},
		{"empty value", "delay:d=", `d=: want key=value`},
		{"twice", "delay:d=1s,d=2s", `d: given twice`},
		{"unknown param", "drop-partial:d=1s", `d: unknown parameter of drop-partial (known: stream, method,`},
		{"bad duration", "delay:d=soon", `d=soon: want a duration`},
		{"negative duration", "delay:d=-1s", `d=-1s: want a duration`},
		{"bad probability", "drop-sse-event:p=1.5", `p=1.5: want a probability from 0 to 1`},
		{"NaN probability", "drop-sse-event:p=NaN", `p=NaN: want a probability`},
		{"bad nth", "drop-sse-event:nth=0", `nth=0: want an integer from 1`},
		{"bad stream", "drop-sse-event:stream=tcp", `stream=tcp: want one of`},
		{"bad code", "http-status:code=200", `code=200: want an integer from 400 to 599`},
		{"bad at", "disconnect:at=later", `at=later: want one of [before mid after]`},
		{"bad key", "delay:D=1s", `D: a parameter name has only lower-case letters`},
		{"after with nth", "disconnect:after=1,nth=3", `after and nth: give one, not both`},
		{"nth with after", "disconnect:nth=3,after=1", `after and nth: give one, not both`},
		{"after with at", "disconnect:after=1,at=mid", `after and at: give one, not both`},
		{"advance with ttl", "ttl-expiry:ttl=5ms,advance=1s", `advance and ttl: give one, not both`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := r.Parse(tc.text)
			if err == nil {
				t.Fatalf("Parse(%q) accepted it", tc.text)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Parse(%q) = %q, want it to contain %q", tc.text, err, tc.want)
			}
			if strings.Contains(err.Error(), "\n") {
				t.Fatalf("error is not one line: %q", err)
			}
		})
	}
}

func TestParseFile(t *testing.T) {
	f, err := ParseFile("ci.json", []byte(`{"seed": 7, "faults": ["drop-sse-event:nth=3", {"fault": "delay", "params": {"jitter": "5ms", "d": "200ms"}}]}`))
	if err != nil {
		t.Fatal(err)
	}
	if !f.HasSeed || *f.Seed != 7 || len(f.Specs) != 2 || f.Specs[1].String() != "delay:d=200ms,jitter=5ms" {
		t.Fatalf("parsed %+v", f)
	}
	f, err = ParseFile("ci.faults", []byte("# faults for CI\ndrop-partial:p=0.5\n\n  stall:nth=4  # the fourth\n"))
	if err != nil {
		t.Fatal(err)
	}
	if f.HasSeed || len(f.Specs) != 2 || f.Specs[1].String() != "stall:nth=4" {
		t.Fatalf("parsed %+v", f)
	}
}

// TestParseFileInvalid: a fault file is checked field by field; each
// error is one line naming the bad part.
func TestParseFileInvalid(t *testing.T) {
	for _, tc := range []struct {
		name, data, want string
	}{
		{"number for a fault", `{"faults": [1]}`, `faults[0]: want a spec string or {"fault"`},
		{"unknown member", `{"fault": []}`, `fault: unknown member (want seed, faults)`},
		{"member in another case", `{"Faults": ["delay"]}`, `Faults: unknown member`},
		{"bad spec string", `{"faults": ["delay:"]}`, `faults[0]: fault "delay:": nothing after ':'`},
		{"bad text line", "delay\nBAD NAME\n", `x:2: fault "BAD NAME"`},
		{"separator in a value", `{"faults": [{"fault": "delay", "params": {"d": "1ms,nth=2"}}]}`, `d=1ms,nth=2: a value holds no ','`},
		{"params in the name", `{"faults": [{"fault": "delay:d=1h"}]}`, `fault "delay:d=1h": a fault name only, without parameters`},
		{"name with a comma", `{"faults": [{"fault": "delay,x"}]}`, `a fault name only`},
		{"empty name", `{"faults": [{"fault": "", "params": {"d": "1ms"}}]}`, `no fault name`},
		{"no name", `{"faults": [{"params": {"d": "1ms"}}]}`, `faults[0]: no "fault"`},
		{"bad key", `{"faults": [{"fault": "delay", "params": {"d=1ms,nth": "2"}}]}`, `a parameter name has only`},
		{"key with a space", `{"faults": [{"fault": "delay", "params": {" d": "1ms"}}]}`, `a parameter name has only`},
		{"space around a value", `{"faults": [{"fault": "delay", "params": {"d": " 1ms"}}]}`, `a value has no space at either end`},
		{"newline in a value", `{"faults": [{"fault": "drop-sse-event", "params": {"method": "a\nb"}}]}`, `no control character`},
		{"empty value", `{"faults": [{"fault": "delay", "params": {"d": ""}}]}`, `d=: empty value`},
		{"number value", `{"faults": [{"fault": "delay", "params": {"d": 5}}]}`, `params.d: want a string, not 5`},
		{"unknown member of a fault", `{"faults": [{"fault": "delay", "x": 1}]}`, `faults[0]: x: unknown member`},
		{"fault in another case", `{"faults": [{"Fault": "delay"}]}`, `faults[0]: Fault: unknown member`},
		{"null fault", `{"faults": [{"fault": null}]}`, `faults[0]: no "fault"`},
		{"null element", `{"faults": [null]}`, `faults[0]: fault "": no fault name`},
		{"trailing garbage", `{"faults": ["delay"]} garbage`, `data after the JSON object`},
		{"a second object", `{"faults": ["delay"]}{}`, `data after the JSON object`},
		{"param twice", `{"faults": [{"fault": "delay", "params": {"d": "1ms", "d": "2ms"}}]}`, `faults[0].params.d: given twice`},
		{"seed twice", `{"seed": 1, "seed": 2}`, `seed: given twice`},
		{"fault twice", `{"faults": [{"fault": "delay", "fault": "stall"}]}`, `faults[0].fault: given twice`},
		{"negative seed", `{"seed": -1}`, `not a fault file`},
		{"cut short", `{"faults": ["delay"]`, `not a fault file`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, err := ParseFile("x", []byte(tc.data))
			if err == nil {
				t.Fatalf("ParseFile(%q) accepted it: %+v", tc.data, f)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("ParseFile(%q) = %q, want it to contain %q", tc.data, err, tc.want)
			}
			if strings.Contains(err.Error(), "\n") {
				t.Fatalf("error is not one line: %q", err)
			}
		})
	}
}

// TestParseFileSpecsRoundTrip: a spec of a JSON fault file, written in its
// text form (as the trace header keeps it) and parsed back, is the same
// spec.
func TestParseFileSpecsRoundTrip(t *testing.T) {
	f, err := ParseFile("ci.json", []byte(`{"faults": [{"fault": "drop-sse-event", "params": {"method": "a=b:c", "id": "\"x\"", "nth": "2"}}]}`))
	if err != nil {
		t.Fatal(err)
	}
	s := f.Specs[0]
	back, err := ParseSpec(s.String())
	if err != nil || !reflect.DeepEqual(back, s) {
		t.Fatalf("%q parses back as %+v, %v; want %+v", s.String(), back, err, s)
	}
	if _, err := Builtin().Bind(s); err != nil {
		t.Fatal(err)
	}
}
