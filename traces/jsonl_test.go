package traces

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func exportJSONL(t *testing.T, data []byte) string {
	t.Helper()
	r, err := NewReader(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := WriteJSONL(&out, r.Header(), r); err != nil {
		t.Fatal(err)
	}
	return out.String()
}

func importJSONL(t *testing.T, jsonl string) []byte {
	t.Helper()
	jr, err := NewJSONLReader(strings.NewReader(jsonl))
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	w, err := NewWriter(&buf, jr.Header(), &WriterOptions{KeepTimes: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Copy(w, jr); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// trace -> JSONL -> trace -> JSONL gives the same JSONL and the same
// trace bytes.
func TestJSONLRoundTrip(t *testing.T) {
	trace1 := writeTrace(t, sampleHeader(), sampleRecords(), nil)
	jsonl1 := exportJSONL(t, trace1)
	trace2 := importJSONL(t, jsonl1)
	jsonl2 := exportJSONL(t, trace2)
	if diff := cmp.Diff(jsonl1, jsonl2); diff != "" {
		t.Fatalf("JSONL changed (-first +second):\n%s", diff)
	}
	if !bytes.Equal(trace1, trace2) {
		t.Error("the imported trace differs from the original")
	}
	lines := strings.Split(strings.TrimSpace(jsonl1), "\n")
	if len(lines) != 1+len(sampleRecords()) {
		t.Fatalf("%d lines", len(lines))
	}
	// Field names are stable: spot-check some lines.
	var head map[string]map[string]any
	json.Unmarshal([]byte(lines[0]), &head)
	if head["header"]["seed"] != 42.0 || head["header"]["protocol"] != "2025-11-25" {
		t.Errorf("header line %s", lines[0])
	}
	var rec map[string]any
	json.Unmarshal([]byte(lines[8]), &rec) // the first sse-event
	if rec["kind"] != "sse-event" || rec["dir"] != "s>c" || rec["stream"] != "post:1" || rec["index"] != 7.0 ||
		rec["offsetNs"] != 20e6 || rec["wall"] != "2026-05-03T10:30:00.02Z" {
		t.Errorf("record line %s", lines[8])
	}
	if rpc := rec["rpc"].(map[string]any); rpc["taskId"] != "786512e2-9e0d-44bd-8f29-789f320fe840" || rpc["seqNrs"].([]any)[0] != 1.0 || rpc["isComplete"] != false {
		t.Errorf("rpc %v", rpc)
	}
	if sse := rec["sse"].(map[string]any); sse["id"] != "e1" || sse["event"] != "message" {
		t.Errorf("sse %v", sse)
	}
	// Bytes that are not UTF-8 go in rawB64.
	if !strings.Contains(lines[17], `"rawB64":"//54AA=="`) || strings.Contains(lines[17], `"raw":`) {
		t.Errorf("binary record line %s", lines[17])
	}
}

// A hand-written JSONL trace: no header line, no rpc, indexes that do not
// count from 0.
func TestJSONLImportHandWritten(t *testing.T) {
	in := `
{"index":9,"offset_ns":0,"conn":1,"exchange":0,"stream":"stdout","dir":"s>c","kind":"stdio-line","raw":` + jsonQuote(msgPartial) + `}

{"index":3,"offset_ns":1000,"wall":"2026-05-03T10:30:00Z","conn":1,"exchange":0,"stream":"-","dir":"-","kind":"kind-77","note":"from the future"}
`
	jr, err := NewJSONLReader(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	if !cmp.Equal(jr.Header(), Header{}) {
		t.Errorf("header %+v", jr.Header())
	}
	var recs []Record
	for r, err := range All(jr) {
		if err != nil {
			t.Fatal(err)
		}
		recs = append(recs, r)
	}
	if len(recs) != 2 || recs[1].Kind != 77 || recs[1].Kind.String() != "kind-77" {
		t.Fatalf("records %+v", recs)
	}
	data := importJSONL(t, in)
	_, got, err := readAll(t, data)
	if err != nil || len(got) != 2 || got[0].Index != 0 || got[1].Index != 1 {
		t.Fatalf("%+v, %v", got, err)
	}
	if p := got[0].RPC; p == nil || p.Method != "notifications/tasks/partial" || !p.HasSeq || p.TaskID != "t-9" {
		t.Errorf("rpc not derived: %+v", p)
	}
}

func jsonQuote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

func TestJSONLImportErrors(t *testing.T) {
	ok := `{"index":0,"offset_ns":0,"conn":0,"exchange":0,"stream":"","dir":"-","kind":"annotation"}`
	cases := []struct {
		name, in string
		line     int
		want     string
	}{
		{"not JSON", ok + "\nnope\n", 2, "invalid character"},
		{"unknown field", `{"index":0,"kind":"annotation","dir":"-","colour":"red"}`, 1, "unknown field"},
		{"unknown kind", `{"kind":"telepathy","dir":"-"}`, 1, "unknown kind"},
		{"bad dir", `{"kind":"annotation","dir":"sideways"}`, 1, "dir"},
		{"bad wall", `{"kind":"annotation","dir":"-","wall":"yesterday"}`, 1, "wall"},
		{"wall out of range", `{"kind":"annotation","dir":"-","wall":"3000-01-01T00:00:00Z"}`, 1, "outside"},
		{"raw twice", `{"kind":"annotation","dir":"-","raw":"a","raw_b64":"YQ=="}`, 1, "both"},
		{"two values", `{"kind":"annotation","dir":"-"} {}`, 1, "more than one"},
		{"bad header", `{"header":{"labels":[["a"]],"colour":1}}`, 1, "unknown field"},
		{"retry overflows", `{"kind":"sse-event","dir":"s>c","sse":{"data":"x","retry_ms":10000000000000}}`, 1, "retryMs"},
		{"negative retry", `{"kind":"sse-event","dir":"s>c","sse":{"data":"x","retryMs":-1}}`, 1, "retryMs"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var err error
			jr, err := NewJSONLReader(strings.NewReader(tc.in))
			if err == nil {
				for _, err = range All(jr) {
					if err != nil {
						break
					}
				}
			}
			var le *LineError
			if !errors.As(err, &le) || le.Line != tc.line || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v, want line %d and %q", err, tc.line, tc.want)
			}
		})
	}
	jr, err := NewJSONLReader(strings.NewReader(""))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := jr.Next(); err != io.EOF {
		t.Errorf("empty input: %v", err)
	}
}

// TestJSONLLegacyKeys: exports written before the keys became camelCase
// (committed fixtures, users' old files) read the same as the current
// form, record for record; the writer writes camelCase only.
func TestJSONLLegacyKeys(t *testing.T) {
	old, err := os.ReadFile("testdata/v1.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(old, []byte(`"offset_ns"`)) || !bytes.Contains(old, []byte(`"format_version"`)) {
		t.Fatal("testdata/v1.jsonl is no longer in the old key style")
	}
	read := func(b []byte) (Header, []Record) {
		r, err := NewJSONLReader(bytes.NewReader(b))
		if err != nil {
			t.Fatal(err)
		}
		var recs []Record
		for rec, err := range All(r) {
			if err != nil {
				t.Fatal(err)
			}
			recs = append(recs, rec)
		}
		return r.Header(), recs
	}
	h, recs := read(old)
	var cur bytes.Buffer
	if err := WriteJSONL(&cur, h, &sliceSource{recs: recs}); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"offset_ns", "format_version", "tasksim_version", "task_id", "seq_nrs", "is_complete", "raw_b64", "retry_ms"} {
		if bytes.Contains(cur.Bytes(), []byte(`"`+k+`"`)) {
			t.Errorf("the writer wrote the old key %s", k)
		}
	}
	h2, recs2 := read(cur.Bytes())
	if !reflect.DeepEqual(h, h2) || !reflect.DeepEqual(recs, recs2) {
		t.Errorf("old and current keys read differently:\nold %+v\ncur %+v", recs, recs2)
	}
	if h.FormatVersion == 0 || h.TasksimVersion == "" || len(recs) == 0 {
		t.Errorf("the old keys were not read: header %+v", h)
	}
	// A string value that looks like an old key is data, not a key.
	line := `{"kind":"annotation","dir":"-","note":"\"task_id\": 1 and \"offset_ns\":2"}`
	_, rs := read([]byte(line))
	if len(rs) != 1 || rs[0].Note != `"task_id": 1 and "offset_ns":2` {
		t.Errorf("a note with quoted old keys became %+v", rs)
	}
}
