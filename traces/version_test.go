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
				Action: "duplicated", Verb: VerbDuplicate}},
		seg(SideClient, 11),
		seg(SideClient, 12),
		{Offset: 20 * time.Millisecond, Wall: t0.Add(20 * time.Millisecond), Kind: KindFault,
			Fault: &Fault{Name: "delay", Params: []Param{{"d", "200ms"}}, Target: Target{Seq: 0, HasSeq: true}, Action: "delayed 200ms",
				Verb: VerbDelay, Delay: 200 * time.Millisecond}},
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
		`"fault":{"name":"duplicate-seqnr","params":[["nth","1"],["via","sse"]],"target":{"conn":1,"exchange":3,"stream":"post:3","eventId":"2","id":"7","method":"tools/call","taskId":"786512e2-9e0d-44bd-8f29-789f320fe840","seqNr":3,"record":0},"action":"duplicated","verb":"duplicate"},"side":"client"`,
		`"action":"delayed 200ms","verb":"delay","delayNs":200000000}`,
		`"kind":"body-end","note":"eof","end":"eof"`,
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

// testdata/v2.trace and v2.jsonl were written by tasksim before format
// version 3, when how a stream ended and what a fault did were text: they
// read with the typed fields recovered from that text.
func TestReadsFormatVersion2(t *testing.T) {
	type typed struct {
		Kind   Kind
		End    End
		Batch  uint32
		NoData bool
		Verb   Verb
		Delay  time.Duration
		Status int
		Stream string
		Task   string
	}
	want := []typed{
		{Kind: KindConnOpen},
		{Kind: KindRequestHead},
		{Kind: KindMessage, Batch: 1},
		{Kind: KindMessage, Batch: 2},
		{Kind: KindBodyEnd, End: EndEOF},
		{Kind: KindResponseHead},
		{Kind: KindSSEEvent, NoData: true},
		{Kind: KindBodyEnd, End: EndEOF},
		{Kind: KindBodyEnd, End: EndError}, // the stop's own cut is said by the next record
		{Kind: KindConnError, End: EndStopped},
		{Kind: KindBodyEnd, End: EndClient},
		{Kind: KindConnError, End: EndClient},
		{Kind: KindBodyEnd, End: EndError},
		{Kind: KindConnError, End: EndServer},
		{Kind: KindConnError, End: EndClient},
		{Kind: KindFault, Verb: VerbDelay, Delay: 200 * time.Millisecond, Stream: "post:s1/7"},
		{Kind: KindFault, Verb: VerbCutAfter, Stream: "get:s1/2", Task: "t1"},
		{Kind: KindFault, Verb: VerbStatus, Status: 503},
		{Kind: KindFault, Verb: VerbAdvance, Delay: 5 * time.Second},
		{Kind: KindConnClose, End: EndStopped},
		{Kind: KindConnError, End: EndStopped},
		{Kind: KindConnError, End: EndServer},
		{Kind: KindConnClose, End: EndEOF},
	}
	summary := func(recs []Record) []typed {
		var out []typed
		for _, r := range recs {
			x := typed{Kind: r.Kind, End: r.End, Batch: r.Batch}
			if r.SSE != nil {
				x.NoData = r.SSE.NoData
			}
			if f := r.Fault; f != nil {
				x.Verb, x.Delay, x.Status, x.Stream, x.Task = f.Verb, f.Delay, f.Status, f.Target.Stream, f.Target.TaskID
			}
			out = append(out, x)
		}
		return out
	}
	data, err := os.ReadFile("testdata/v2.trace")
	if err != nil {
		t.Fatal(err)
	}
	h, recs, err := readAll(t, data)
	if err != nil || h.FormatVersion != 2 {
		t.Fatalf("version %d, %v", h.FormatVersion, err)
	}
	if diff := cmp.Diff(want, summary(recs)); diff != "" {
		t.Errorf("v2.trace (-want +got):\n%s", diff)
	}
	// Written again, the typed fields are in the file, and read back the
	// same; so through JSONL.
	again := writeTrace(t, h, recs, nil)
	_, recs3, err := readAll(t, again)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(summary(recs), summary(recs3)); diff != "" {
		t.Errorf("rewritten (-want +got):\n%s", diff)
	}
	if _, recsJ, err := readAll(t, importJSONL(t, exportJSONL(t, again))); err != nil {
		t.Fatal(err)
	} else if diff := cmp.Diff(want, summary(recsJ)); diff != "" {
		t.Errorf("through JSONL (-want +got):\n%s", diff)
	}

	jsonl, err := os.ReadFile("testdata/v2.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	_, recs2, err := readAll(t, importJSONL(t, string(jsonl)))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, summary(recs2)); diff != "" {
		t.Errorf("v2.jsonl (-want +got):\n%s", diff)
	}
}

func TestEndAndVerbNames(t *testing.T) {
	for e := EndNone; e <= EndError+1; e++ {
		if got, ok := ParseEnd(e.String()); !ok || got != e {
			t.Errorf("ParseEnd(%q) = %v, %v", e, got, ok)
		}
	}
	for v := VerbNone; v <= VerbAdvance+1; v++ {
		if got, ok := ParseVerb(v.String()); !ok || got != v {
			t.Errorf("ParseVerb(%q) = %v, %v", v, got, ok)
		}
	}
	if _, ok := ParseEnd("later"); ok {
		t.Error("ParseEnd accepted later")
	}
}
