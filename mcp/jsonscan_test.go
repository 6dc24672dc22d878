package mcp

import (
	"encoding/json"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
)

// objectMembers must agree with encoding/json on every valid object:
// the same names (escapes decoded, the last duplicate winning) and the
// same raw values, byte for byte.
func FuzzObjectMembers(f *testing.F) {
	for _, s := range []string{
		`{}`,
		` { } `,
		`{"a":1}`,
		`{"jsonrpc":"2.0","id":1,"method":"tasks/get","params":{"taskId":"t1"}}`,
		`{"a" : [1, {"b": "}]\"{"}] , "c":"x\\"y" ,"d":true,"e":null,"f":-1.5e3}`,
		`{"\u0069d":1,"id":2}`,
		`{"id":1,"id":"two"}`,
		"{\n\t\"result\"\r:\n{\"partial-content\":[]}\n}",
		`{"\\":"\\\\","\"":"\u00e9"}`,
		`{"ünï":"cödé","":""}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var all map[string]json.RawMessage
		if json.Unmarshal(data, &all) != nil {
			all = nil
		}
		if diff := cmp.Diff(all, ObjectMembers(data)); diff != "" {
			t.Fatalf("ObjectMembers(%q) (-encoding/json +ObjectMembers):\n%s", data, diff)
		}
		if !json.Valid(data) || !utf8.Valid(data) { // DecodeMessage checks both first
			return
		}
		i := skipSpace(data, 0)
		if data[i] != '{' {
			return
		}
		var want map[string]json.RawMessage
		if err := json.Unmarshal(data, &want); err != nil {
			t.Fatalf("json.Unmarshal of valid JSON: %v", err)
		}
		got := objectMembers(data[i:])
		if diff := cmp.Diff(want, got); diff != "" {
			t.Fatalf("objectMembers(%q) (-encoding/json +objectMembers):\n%s", data, diff)
		}
		env := envelopeMembers(data[i:])
		for _, name := range envelopeNames {
			w, wok := want[name]
			g, gok := env.get(name)
			if wok != gok || string(w) != string(g) {
				t.Fatalf("envelopeMembers(%q) %s = %q, %v; encoding/json %q, %v", data, name, g, gok, w, wok)
			}
		}
	})
}

// decodeString must decode every input as json.Unmarshal into a string
// does: the same value, or an error for the same inputs.
func FuzzDecodeString(f *testing.F) {
	for _, s := range []string{`"abc"`, `""`, `"a\"b"`, `"\u00e9t\u00e9"`, `"tab	in"`, `"ünï"`, "\"\xff\"", `12`, `null`, `"a"b"`, `"`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		var want, got string
		werr := json.Unmarshal(raw, &want)
		gerr := decodeString(raw, &got)
		if (werr == nil) != (gerr == nil) || got != want {
			t.Fatalf("decodeString(%q) = %q, %v; json.Unmarshal: %q, %v", raw, got, gerr, want, werr)
		}
	})
}
