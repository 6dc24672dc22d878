package traces

import (
	"bytes"
	"math"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// testdata/v1*.trace and v1.jsonl were written by tasksim before format
// version 2: they read unchanged.
func TestReadsFormatVersion1(t *testing.T) {
	data, err := os.ReadFile("testdata/v1.trace")
	if err != nil {
		t.Fatal(err)
	}
	h, recs, err := readAll(t, data)
	if err != nil {
		t.Fatal(err)
	}
	wantH := sampleHeader()
	wantH.FormatVersion = 1
	if diff := cmp.Diff(wantH, h); diff != "" {
		t.Errorf("header (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(want(sampleRecords()), recs); diff != "" {
		t.Errorf("records (-want +got):\n%s", diff)
	}
	if v, err := Verify(bytes.NewReader(data)); err != nil || !v.OK() || v.Records != uint64(len(recs)) {
		t.Errorf("Verify: %+v, %v", v, err)
	}

	// Version 1 kept the seed as an int64: a negative one reads as the
	// same 64 bits.
	data, err = os.ReadFile("testdata/v1-negative-seed.trace")
	if err != nil {
		t.Fatal(err)
	}
	if h, _, err = readAll(t, data); err != nil || h.Seed != math.MaxUint64-1 {
		t.Errorf("negative seed: %d, %v", h.Seed, err)
	}

	// And so does an old JSONL export, which imports to a version 2 trace
	// with the same records.
	jsonl, err := os.ReadFile("testdata/v1.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	h2, recs2, err := readAll(t, importJSONL(t, string(jsonl)))
	if err != nil {
		t.Fatal(err)
	}
	if h2.Seed != math.MaxUint64-1 || h2.FormatVersion != FormatVersion {
		t.Errorf("imported header %+v", h2)
	}
	if diff := cmp.Diff(want(sampleRecords()), recs2); diff != "" {
		t.Errorf("imported records (-want +got):\n%s", diff)
	}
}

// faultHeader and faultRecords are a run with a fault layer: the server's
// and the client's side of it, and the faults between.
func faultHeader() Header {
	h := sampleHeader()
	h.Seed = math.MaxUint64 - 6 // past int64
	h.Faults = &Schedule{
		Specs:     []string{"drop-sse-event:nth=3", "delay:method=tools/call,d=200ms"},
		Decisions: []string{"drop-sse-event: stream post:2 event 3"},
		Note:      "delay decisions are in the fault records",
	}
	return h
}

func faultRecords() []Record {
	seg := func(side Side, ms int) Record {
		r := sseRecord(2)
		r.Side = side
		r.Offset, r.Wall = time.Duration(ms)*time.Millisecond, t0.Add(time.Duration(ms)*time.Millisecond)
		return r
	}
	return []Record{
		seg(SideServer, 10),
		{Offset: 10 * time.Millisecond, Wall: t0.Add(10 * time.Millisecond), Conn: 1, Exchange: 3, Stream: "post:3",
			Dir: DirServerToClient, Kind: KindFault, Side: SideClient, Note: "first of two",
			Fault: &Fault{Name: "duplicate-seqnr", Params: []Param{{"nth", "1"}, {"via", "sse"}},
				Target: Target{Conn: 1, Exchange: 3, Stream: "post:3", EventID: "2", HasEventID: true, RPCID: "7",
					Method: "tools/call", TaskID: "786512e2-9e0d-44bd-8f29-789f320fe840", SeqNr: 3, HasSeqNr: true,
					Record: 0, HasRecord: true},
				Action: "duplicated"}},
		seg(SideClient, 11),
		seg(SideClient, 12),
		{Offset: 20 * time.Millisecond, Wall: t0.Add(20 * time.Millisecond), Kind: KindFault,
			Fault: &Fault{Name: "delay", Params: []Param{{"d", "200ms"}}, Target: Target{Seq: 0, HasSeq: true}, Action: "delayed 200ms"}},
		{Offset: 30 * time.Millisecond, Wall: t0.Add(30 * time.Millisecond), Kind: KindFault, Fault: &Fault{Name: "stall"}},
		{Offset: 40 * time.Millisecond, Wall: t0.Add(40 * time.Millisecond), Conn: 1, Exchange: 4, Stream: "get:4",
			Dir: DirServerToClient, Kind: KindBodyChunk, Raw: []byte("data: xxxx"), Side: SideClient, Oversize: true},
	}
}

func TestFaultsRoundTrip(t *testing.T) {
	recs := append(sampleRecords(), faultRecords()...)
	data := writeTrace(t, faultHeader(), recs, nil)
	if !bytes.Equal(data, writeTrace(t, faultHeader(), recs, nil)) {
		t.Fatal("two writes of the same trace differ")
	}
	h, got, err := readAll(t, data)
	if err != nil {
		t.Fatal(err)
	}
	wantH := faultHeader()
	wantH.FormatVersion = FormatVersion
	if diff := cmp.Diff(wantH, h); diff != "" {
		t.Errorf("header (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(want(recs), got); diff != "" {
		t.Errorf("records (-want +got):\n%s", diff)
	}

	// JSONL and back gives the same bytes.
	jsonl := exportJSONL(t, data)
	if again := importJSONL(t, jsonl); !bytes.Equal(data, again) {
		t.Errorf("trace -> JSONL -> trace changed the bytes; JSONL:\n%s", jsonl)
	}
	for _, s := range []string{
		`"seed":18446744073709551609`,
		`"faults":{"specs":["drop-sse-event:nth=3","delay:method=tools/call,d=200ms"],"decisions":["drop-sse-event: stream post:2 event 3"],"note":"delay decisions are in the fault records"}`,
		`"fault":{"name":"duplicate-seqnr","params":[["nth","1"],["via","sse"]],"target":{"conn":1,"exchange":3,"stream":"post:3","eventId":"2","id":"7","method":"tools/call","taskId":"786512e2-9e0d-44bd-8f29-789f320fe840","seqNr":3,"record":0},"action":"duplicated"},"side":"client"`,
		`"fault":{"name":"stall","params":[],"target":{}}`,
		`"raw":"data: xxxx","side":"client","oversize":true`,
	} {
		if !strings.Contains(jsonl, s) {
			t.Errorf("JSONL lacks %s:\n%s", s, jsonl)
		}
	}
}

func TestFaultString(t *testing.T) {
	recs := faultRecords()
	for _, tc := range []struct {
		f    *Fault
		want string
	}{
		{recs[1].Fault, "duplicate-seqnr nth=1 via=sse on conn=1 exchange=3 stream=post:3 event-id=2 id=7 method=tools/call task=786512e2-9e0d-44bd-8f29-789f320fe840 seqNr=3 record=0: duplicated"},
		{recs[4].Fault, "delay d=200ms on seq=0: delayed 200ms"},
		{recs[5].Fault, "stall"},
		{nil, ""},
	} {
		if got := tc.f.String(); got != tc.want {
			t.Errorf("String() = %q, want %q", got, tc.want)
		}
	}
}

func TestSideViews(t *testing.T) {
	for _, tc := range []struct {
		side           Side
		client, server bool
	}{
		{SideWire, true, true}, {SideClient, true, false}, {SideServer, false, true},
	} {
		if tc.side.InView(SideClient) != tc.client || tc.side.InView(SideServer) != tc.server {
			t.Errorf("%s: in client view %v, in server view %v", tc.side, tc.side.InView(SideClient), tc.side.InView(SideServer))
		}
		if s, ok := ParseSide(tc.side.String()); !ok || s != tc.side {
			t.Errorf("ParseSide(%q) = %v, %v", tc.side, s, ok)
		}
	}
	if s, ok := ParseSide("side-7"); !ok || s != 7 || s.String() != "side-7" {
		t.Errorf("unnamed side: %v %v", s, ok)
	}
	if _, ok := ParseSide("middle"); ok {
		t.Error("ParseSide accepted middle")
	}
}

// Redaction keeps a fault's vocabulary and numbers and applies the
// patterns to its text.
func TestRedactFault(t *testing.T) {
	red, err := NewRedactor(RedactOptions{Patterns: []string{`sk-[a-z0-9]+`, `786512e2-[0-9a-f-]+`}})
	if err != nil {
		t.Fatal(err)
	}
	h := faultHeader()
	h.Faults.Specs = append(h.Faults.Specs, "http-status:code=401,body=sk-abc")
	red.ApplyHeader(&h)
	if got := h.Faults.Specs[2]; got != "http-status:code=401,body=[redacted:1]" {
		t.Errorf("spec = %q", got)
	}
	rec := faultRecords()[1].Clone()
	rec.Fault.Params = append(rec.Fault.Params, Param{"body", "sk-abc"})
	rec.Fault.Action = "answered 401 with sk-abc"
	red.Apply(&rec)
	f := rec.Fault
	if f.Name != "duplicate-seqnr" || f.Params[0] != (Param{"nth", "1"}) || f.Params[2] != (Param{"body", "[redacted:1]"}) ||
		f.Action != "answered 401 with [redacted:1]" || f.Target.TaskID != "[redacted:2]" || f.Target.SeqNr != 3 || f.Target.Stream != "post:3" {
		t.Errorf("redacted fault: %+v", f)
	}
	// The original is untouched (the writer redacts a copy).
	if faultRecords()[1].Fault.Target.TaskID == "[redacted:2]" {
		t.Error("Apply changed a shared fault")
	}
}

func TestExtraFieldCorpusEntryReads(t *testing.T) {
	data := append(validStart(t), frameWithExtraField(t, recordWithExtra())...)
	_, recs, err := readAll(t, data)
	if err != nil || len(recs) != 1 || recs[0].Stream != "stdout" {
		t.Fatalf("%d records, %v", len(recs), err)
	}
}
