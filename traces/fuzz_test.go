package traces

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

var updateCorpus = flag.Bool("update-corpus", false, "write the seed corpora in testdata/fuzz")

// validStart is the magic, version and header of a trace: FuzzReader
// feeds its input after it too, so that most inputs reach the records.
func validStart(t testing.TB) []byte {
	return writeTrace(t, sampleHeader(), nil, nil)
}

// checkTrace reads arbitrary bytes as a trace and checks what a reader
// promises: typed errors, a bounded number of records, agreement with
// Verify, and records that encode back to themselves.
func checkTrace(t *testing.T, data []byte) {
	r, err := NewReader(bytes.NewReader(data))
	if err != nil {
		var ve *VersionError
		var ce *CorruptError
		var te *TruncatedError
		if !errors.Is(err, ErrNotTrace) && !errors.As(err, &ve) && !errors.As(err, &ce) && !errors.As(err, &te) {
			t.Fatalf("NewReader: untyped error %v", err)
		}
		return
	}
	var recs []Record
	for {
		rec, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			var ce *CorruptError
			if !errors.Is(err, ErrTruncated) && !errors.As(err, &ce) {
				t.Fatalf("Next: untyped error %v", err)
			}
			break
		}
		if len(recs) > len(data)/frameHeadSize {
			t.Fatalf("%d records from %d bytes", len(recs), len(data))
		}
		recs = append(recs, rec)
	}
	v, err := Verify(bytes.NewReader(data))
	if err != nil || v.Records != uint64(len(recs)) {
		t.Fatalf("Verify: %d records, %v; reader: %d records", v.Records, err, len(recs))
	}
	// Records encode back to themselves (the encoding is deterministic,
	// so equal bytes mean equal records).
	e1, e2 := newEncoder(), newEncoder()
	for _, rec := range recs {
		p, err := e1.record(&rec)
		if err != nil {
			t.Fatal(err)
		}
		again, err := decodeRecord(p)
		if err != nil {
			t.Fatalf("record %d does not decode after encoding: %v", rec.Index, err)
		}
		if p2, _ := e2.record(&again); !bytes.Equal(p, p2) {
			t.Fatalf("record %d changed in a round trip:\n%+v\n%+v", rec.Index, rec, again)
		}
	}
}

func FuzzReader(f *testing.F) {
	start := validStart(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		checkTrace(t, data)
		checkTrace(t, append(start[:len(start):len(start)], data...))
	})
}

func FuzzDescribeMessage(f *testing.F) {
	f.Fuzz(func(t *testing.T, raw []byte) {
		d := DescribeMessage(raw)
		if d == nil {
			return
		}
		if !json.Valid(raw) {
			t.Fatalf("described invalid JSON %q", raw)
		}
		switch d.Type {
		case "request", "notification", "response":
		default:
			t.Fatalf("type %q", d.Type)
		}
		if !cmp.Equal(d, DescribeMessage(raw)) {
			t.Fatal("not deterministic")
		}
	})
}

// FuzzJSONLReader: whatever a JSONL reader accepts, a trace holds.
func FuzzJSONLReader(f *testing.F) {
	f.Fuzz(func(t *testing.T, data []byte) {
		jr, err := NewJSONLReader(bytes.NewReader(data))
		if err != nil {
			return
		}
		var recs []Record
		for rec, err := range All(jr) {
			if err != nil {
				var le *LineError
				if !errors.As(err, &le) {
					t.Fatalf("untyped error %v", err)
				}
				break
			}
			recs = append(recs, rec)
		}
		var buf bytes.Buffer
		w, err := NewWriter(&buf, jr.Header(), &WriterOptions{KeepTimes: true})
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range recs {
			if err := w.Write(r); err != nil {
				t.Fatal(err)
			}
		}
		w.Close()
		_, got, err := readAll(t, buf.Bytes())
		if err != nil || len(got) != len(recs) {
			t.Fatalf("%d records written, %d read, %v", len(recs), len(got), err)
		}
	})
}

// FuzzRedactJSON: redacting valid JSON gives valid JSON, the same way
// twice.
func FuzzRedactJSON(f *testing.F) {
	f.Fuzz(func(t *testing.T, doc []byte, path string) {
		if !json.Valid(doc) {
			return
		}
		red1, err := NewRedactor(RedactOptions{JSONPaths: []string{path}})
		if err != nil {
			return
		}
		red2, _ := NewRedactor(RedactOptions{JSONPaths: []string{path}})
		a := Record{Kind: KindMessage, Raw: bytes.Clone(doc)}
		b := Record{Kind: KindMessage, Raw: bytes.Clone(doc)}
		red1.Apply(&a)
		red2.Apply(&b)
		if !json.Valid(a.Raw) {
			t.Fatalf("%s with %q -> invalid %s", doc, path, a.Raw)
		}
		if !bytes.Equal(a.Raw, b.Raw) {
			t.Fatal("not deterministic")
		}
	})
}

// TestWriteFuzzCorpus writes the committed seed corpora (go test -run
// WriteFuzzCorpus -update-corpus).
func TestWriteFuzzCorpus(t *testing.T) {
	if !*updateCorpus {
		t.Skip("run with -update-corpus to write testdata/fuzz")
	}
	// Small inputs: the fuzzer minimizes every input that finds new
	// coverage, which takes long for big ones.
	small := []Record{
		{Conn: 1, Kind: KindConnOpen},
		{Conn: 1, Stream: "stdin", Dir: DirClientToServer, Kind: KindStdioLine, Raw: []byte(`{"jsonrpc":"2.0","id":1,"method":"ping"}`)},
		{Conn: 1, Exchange: 2, Stream: "post:2", Dir: DirServerToClient, Kind: KindResponseHead,
			HTTP: &HTTPHead{Proto: "HTTP/1.1", Status: 200, Header: []HeaderField{{"A", "b"}}}},
		{Conn: 1, Exchange: 2, Stream: "post:2", Dir: DirServerToClient, Kind: KindSSEEvent, Raw: []byte("id: 1\ndata: x\n\n"),
			SSE: &SSEFields{ID: "1", HasID: true, Data: "x", Retry: time.Second, HasRetry: true}},
		{Kind: KindFault, Note: "drop"},
		{Kind: KindFault, Side: SideClient, Fault: &Fault{Name: "drop-sse-event", Params: []Param{{"nth", "1"}},
			Target: Target{Stream: "post:2", EventID: "1", HasEventID: true, SeqNr: 1, HasSeqNr: true, Record: 3, HasRecord: true}, Action: "dropped",
			Verb: VerbDelay, Delay: time.Second}},
		{Conn: 1, Exchange: 2, Stream: "post:2", Dir: DirServerToClient, Kind: KindBodyEnd, End: EndStopped},
	}
	trace := writeTrace(t, Header{Seed: 1, Labels: []Label{{"k", "v"}}, Faults: &Schedule{Specs: []string{"drop-sse-event:nth=1"}}},
		small, &WriterOptions{Now: stepClock(time.Millisecond)})
	v1, err := os.ReadFile("testdata/v1.trace")
	if err != nil {
		t.Fatal(err)
	}
	v2, err := os.ReadFile("testdata/v2.trace")
	if err != nil {
		t.Fatal(err)
	}
	v2jsonl, err := os.ReadFile("testdata/v2.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	ends := frameEnds(t, trace)
	records := trace[ends[0]:] // the records alone: FuzzReader puts them after a header
	reader := map[string][]byte{
		"whole-trace":      trace,
		"version-1":        v1,
		"version-2":        v2,
		"records-only":     records,
		"header-only":      trace[:ends[0]],
		"cut-mid-header":   trace[:ends[0]-3],
		"cut-mid-record":   trace[:ends[3]+20],
		"one-record":       records[:ends[1]-ends[0]],
		"text":             []byte("hello, this is not a trace\n"),
		"newer-version":    append(append(append([]byte(nil), Magic...), 0, FormatVersion+1), trace[preambleSize:]...),
		"bad-checksum":     flip(trace, int(ends[2])+frameHeadSize+5),
		"bad-length":       flip(trace, int(ends[2])+2),
		"empty-frame":      frame(nil),
		"nested-msgpack":   frame(append(bytes.Repeat([]byte{0x91}, 40), 0xc0)),
		"huge-array":       frame([]byte{0xdd, 0xff, 0xff, 0xff, 0xff}),
		"huge-string":      frame([]byte{0x9d, 0, 0, 0xc0, 0, 0, 0xdb, 0xff, 0xff, 0xff, 0xf0}),
		"extra-fields":     frameWithExtraField(t, recordWithExtra()),
		"ints-and-strings": frame([]byte{0x9d, 0xcf, 0, 0, 0, 0, 0, 0, 0, 0, 0xd3, 0x80, 0, 0, 0, 0, 0, 0, 0, 0xc0, 0, 0, 0xd9, 1, 'x', 1, 7, 0xc4, 1, 'y', 0xc0, 0xc0, 0xc0, 0xa1, 'n'}),
	}
	describe := map[string][]byte{
		"call": []byte(msgCall), "segment": []byte(msgSeg1), "final": []byte(msgSeg2), "partial": []byte(msgPartial),
		"create-task": []byte(`{"jsonrpc":"2.0","id":"a","result":{"task":{"taskId":"t","status":"working"}}}`),
		"error":       []byte(`{"jsonrpc":"2.0","id":4,"error":{"code":-32602,"message":"x"}}`),
		"status":      []byte(`{"jsonrpc":"2.0","method":"notifications/tasks/status","params":{"taskId":"t","status":"failed"}}`),
		"meta":        []byte(`{"jsonrpc":"2.0","id":1,"method":"m","params":{"_meta":{"io.modelcontextprotocol/related-task":{"taskId":"t"}}}}`),
		"seqnr-float": []byte(`{"jsonrpc":"2.0","id":1,"result":{"partial-content":[{"seqNr":1e3},{"seqNr":-0.5}],"isComplete":"yes"}}`),
		"not-json":    []byte("{\"a\":"),
	}
	jsonl := map[string][]byte{
		"export":     []byte(exportJSONL(t, writeTrace(t, sampleHeader(), sampleRecords()[6:8], nil))),
		"no-header":  []byte(`{"index":0,"offset_ns":5,"conn":1,"exchange":0,"stream":"stdin","dir":"c>s","kind":"stdio-line","raw":"{}"}`),
		"binary":     []byte(`{"kind":"body-chunk","dir":"s>c","raw_b64":"//54AA=="}`),
		"bad-kind":   []byte(`{"kind":"nope","dir":"-"}`),
		"header-bad": []byte(`{"header":{"created":"never"}}`),
		"fault":      []byte(exportJSONL(t, writeTrace(t, faultHeader(), faultRecords()[:2], nil))),
		"version-2":  v2jsonl,
	}
	for name, data := range reader {
		writeCorpus(t, "FuzzReader", name, fmt.Sprintf("[]byte(%s)", strconv.Quote(string(data))))
	}
	for name, data := range describe {
		writeCorpus(t, "FuzzDescribeMessage", name, fmt.Sprintf("[]byte(%s)", strconv.Quote(string(data))))
	}
	for name, data := range jsonl {
		writeCorpus(t, "FuzzJSONLReader", name, fmt.Sprintf("[]byte(%s)", strconv.Quote(string(data))))
	}
	redact := []struct{ name, doc, path string }{
		{"key", msgCall, "params.arguments.apiKey"},
		{"descend", msgSeg1, "$..taskId"},
		{"wildcard", msgSeg2, `result["partial-content"][*].text`},
		{"all", `[1,{"a":[true,null,"x\"y"]},-2.5e3]`, "$..*"},
		{"index", `{"a":[{"b":1},{"b":2}]}`, "a[1].b"},
	}
	for _, r := range redact {
		writeCorpus(t, "FuzzRedactJSON", r.name, fmt.Sprintf("[]byte(%s)\nstring(%s)", strconv.Quote(r.doc), strconv.Quote(r.path)))
	}
}

func flip(b []byte, i int) []byte {
	b = bytes.Clone(b)
	b[i] ^= 0x55
	return b
}

// frameWithExtraField frames r with one more field than this version
// writes, as a newer writer might.
func frameWithExtraField(t *testing.T, r Record) []byte {
	p, err := newEncoder().record(&r)
	if err != nil {
		t.Fatal(err)
	}
	// An array of recordFields+1 (15 fields fit a fixarray, 16 do not).
	head, body := []byte{0xdc, 0, recordFields + 1}, p[1:]
	switch {
	case recordFields+1 <= 15:
		head = []byte{p[0] + 1}
	case recordFields >= 16:
		body = p[3:] // after the array16 head
	}
	p = append(append(head, body...), 0xc3)
	return frame(p)
}

func recordWithExtra() Record {
	return Record{Stream: "stdout", Dir: DirServerToClient, Kind: KindStdioLine, Raw: []byte(msgPartial), RPC: DescribeMessage([]byte(msgPartial))}
}

func writeCorpus(t *testing.T, fuzz, name, body string) {
	dir := filepath.Join("testdata", "fuzz", fuzz)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, name), []byte("go test fuzz v1\n"+body+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
}
