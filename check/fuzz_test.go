package check

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/tasksim/tasksim/traces"
)

// FuzzCheck feeds arbitrary JSONL traces to the checker: whatever the
// records say, it must never panic, and it judges every record it reads.
func FuzzCheck(f *testing.F) {
	for _, dir := range []string{"pass", "fail"} {
		files, _ := filepath.Glob(filepath.Join("testdata", dir, "*.jsonl"))
		files = files[:min(3, len(files))]
		if dir == "pass" {
			// And a trace of 2026-07-28, judged by the rules of that revision.
			files = append(files, filepath.Join("testdata", "pass", "rev2026.jsonl"))
		}
		for _, p := range files {
			b, err := os.ReadFile(p)
			if err != nil {
				f.Fatal(err)
			}
			f.Add(b)
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := traces.NewJSONLReader(bytes.NewReader(data))
		if err != nil {
			return
		}
		c := New(nil)
		n := uint64(0)
		for rec, err := range traces.All(r) {
			if err != nil {
				break
			}
			c.Add(rec)
			n++
		}
		v := c.Verdict()
		if v.Records != n {
			t.Fatalf("verdict counts %d records, %d were read", v.Records, n)
		}
		var b bytes.Buffer
		if err := v.WriteText(&b); err != nil {
			t.Fatal(err)
		}
	})
}

// FuzzMembers holds the checker's JSON splitter to encoding/json: the
// members of an object and the elements of an array, as it reads them,
// are the ones encoding/json decodes.
func FuzzMembers(f *testing.F) {
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":1,"result":{"partial-content":[{"seqNr":1,"type":"text","text":"a \"b\" \\ c"}],"isComplete":false}}`,
		` { "a" : [ 1 , { "b" : "}" } ] , "c" : null , "a" : true } `,
		`[1, "two", {"three": [3]}, [], {}, -4.5e+6, false]`,
		`{"\u0069d": "x", "e\"": {"[": "]"}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		data = bytes.TrimSpace(data)
		if !json.Valid(data) || len(data) == 0 {
			return
		}
		compact := func(b []byte) string {
			var out bytes.Buffer
			if err := json.Compact(&out, b); err != nil {
				t.Fatalf("splitter gave invalid JSON %q from %q", b, data)
			}
			return out.String()
		}
		switch data[0] {
		case '{':
			var want map[string]json.RawMessage
			if err := json.Unmarshal(data, &want); err != nil {
				t.Fatal(err)
			}
			got := map[string]string{}
			members(data, func(name, v []byte) {
				var n string
				if err := json.Unmarshal(name, &n); err != nil {
					t.Fatalf("name %q: %v", name, err)
				}
				got[n] = compact(v)
			})
			if len(got) != len(want) {
				t.Fatalf("%q: %d members, want %d", data, len(got), len(want))
			}
			for k, v := range want {
				if got[k] != compact(v) {
					t.Fatalf("%q: member %q is %q, want %q", data, k, got[k], compact(v))
				}
			}
		case '[':
			var want []json.RawMessage
			if err := json.Unmarshal(data, &want); err != nil {
				t.Fatal(err)
			}
			var got []string
			elements(data, func(e []byte) { got = append(got, compact(e)) })
			if len(got) != len(want) {
				t.Fatalf("%q: %d elements, want %d", data, len(got), len(want))
			}
			for i := range want {
				if got[i] != compact(want[i]) {
					t.Fatalf("%q: element %d is %q, want %q", data, i, got[i], compact(want[i]))
				}
			}
		}
	})
}
