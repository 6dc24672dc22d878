package faults

import (
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
		{"unknown fault", "drop-everything", `fault "drop-everything": unknown fault (known: delay, disconnect,`},
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
	for _, bad := range []string{`{"faults": [1]}`, `{"fault": []}`, `{"faults": ["delay:"]}`, "delay\nBAD NAME\n"} {
		if _, err := ParseFile("x", []byte(bad)); err == nil {
			t.Errorf("ParseFile(%q) accepted it", bad)
		}
	}
}
