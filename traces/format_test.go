package traces

import (
	"bytes"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"io"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/vmihailenco/msgpack/v5"
)

// want is what a reader returns for records a writer got: numbered, with
// RPC derived.
func want(recs []Record) []Record {
	out := make([]Record, len(recs))
	for i, r := range recs {
		r = r.Clone()
		r.Index = uint64(i)
		if r.RPC == nil {
			r.RPC = describeRecord(&r)
		}
		out[i] = r
	}
	return out
}

func TestRoundTrip(t *testing.T) {
	recs := sampleRecords()
	data := writeTrace(t, sampleHeader(), recs, nil)
	h, got, err := readAll(t, data)
	if err != nil {
		t.Fatal(err)
	}
	wantH := sampleHeader()
	wantH.FormatVersion = FormatVersion
	if diff := cmp.Diff(wantH, h); diff != "" {
		t.Errorf("header (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(want(recs), got); diff != "" {
		t.Errorf("records (-want +got):\n%s", diff)
	}
	// The writer derived the JSON-RPC fields it was not given.
	if p := got[7].RPC; p == nil || p.TaskID != "786512e2-9e0d-44bd-8f29-789f320fe840" || len(p.SeqNrs) != 1 || p.SeqNrs[0] != 1 {
		t.Errorf("sse-event RPC = %+v", got[7].RPC)
	}
}

func TestEncodingIsDeterministic(t *testing.T) {
	recs := sampleRecords()
	a := writeTrace(t, sampleHeader(), recs, nil)
	b := writeTrace(t, sampleHeader(), recs, nil)
	if !bytes.Equal(a, b) {
		t.Fatal("two writes of the same trace differ")
	}
	e1, e2 := newEncoder(), newEncoder()
	for i := range recs {
		p1, _ := e1.record(&recs[i])
		p1 = bytes.Clone(p1)
		p2, _ := e2.record(&recs[i])
		if !bytes.Equal(p1, p2) {
			t.Errorf("record %d: encodings differ", i)
		}
	}
}

// The payloads are plain msgpack: any msgpack library reads them.
func TestPayloadIsMsgpack(t *testing.T) {
	r := sampleRecords()[1]
	r.Index = 5
	p, err := newEncoder().record(&r)
	if err != nil {
		t.Fatal(err)
	}
	var v []any
	if err := msgpack.Unmarshal(p, &v); err != nil {
		t.Fatal(err)
	}
	if len(v) != recordFields {
		t.Fatalf("%d fields, want %d", len(v), recordFields)
	}
	if v[0] != uint64(5) && v[0] != int8(5) && v[0] != uint8(5) {
		t.Errorf("index = %#v", v[0])
	}
	if v[5] != "req:1" || v[8] != nil {
		t.Errorf("stream %#v raw %#v", v[5], v[8])
	}
	head := v[9].([]any)
	if head[0] != "POST" || head[4].([]any)[1].([]any)[0] != "Authorization" {
		t.Errorf("http head = %#v", head)
	}
}

// A newer writer of the same format version may append fields; a reader
// skips them.
func TestExtraFieldsAreSkipped(t *testing.T) {
	fields := []any{uint64(0), int64(5), nil, uint64(1), uint64(0), "stdin", uint64(1), uint64(9), []byte("hi"), nil, nil, nil, "note",
		nil, uint64(2), true, uint64(EndEOF), uint64(3), "2026-07-28", map[string]any{"future": []any{1.5, "x", true}}, "more"}
	p, err := msgpack.Marshal(fields)
	if err != nil {
		t.Fatal(err)
	}
	r, err := decodeRecord(p)
	if err != nil {
		t.Fatal(err)
	}
	if r.Stream != "stdin" || string(r.Raw) != "hi" || r.Note != "note" || r.Kind != KindStdioLine || r.Offset != 5 || r.Side != SideServer || !r.Oversize ||
		r.End != EndEOF || r.Batch != 3 || r.Revision != "2026-07-28" {
		t.Errorf("record = %+v", r)
	}
	// So do the fault's and the target's arrays. (This record is of
	// version 2: its verb is read from its action.)
	target := []any{uint64(1), uint64(2), "post:2", "e5", true, "7", "tools/call", "t-1", int64(3), true, int64(0), false, uint64(9), true, "future"}
	fields = []any{uint64(0), int64(5), nil, uint64(1), uint64(0), "", uint64(0), uint64(10), nil, nil, nil, nil, "",
		[]any{"drop-sse-event", []any{[]any{"nth", "3", "future"}}, target, "dropped", "future"}, uint64(0)}
	if p, err = msgpack.Marshal(fields); err != nil {
		t.Fatal(err)
	}
	if r, err = decodeRecord(p); err != nil {
		t.Fatal(err)
	}
	wantF := &Fault{Name: "drop-sse-event", Params: []Param{{"nth", "3"}}, Action: "dropped", Verb: VerbDrop, Target: Target{
		Conn: 1, Exchange: 2, Stream: "post:2", EventID: "e5", HasEventID: true, RPCID: "7", Method: "tools/call", TaskID: "t-1",
		SeqNr: 3, HasSeqNr: true, Record: 9, HasRecord: true}}
	if diff := cmp.Diff(wantF, r.Fault); diff != "" {
		t.Errorf("fault (-want +got):\n%s", diff)
	}
}

// frame builds a frame around payload.
func frame(payload []byte) []byte {
	return append(appendFrameHead(nil, payload), payload...)
}

func TestReaderErrors(t *testing.T) {
	good := writeTrace(t, sampleHeader(), sampleRecords(), nil)
	ends := frameEnds(t, good)
	rec3 := ends[3] // record 3 starts here
	mutate := func(f func(b []byte) []byte) []byte { return f(bytes.Clone(good)) }
	cases := []struct {
		name string
		data []byte
		// open: the error NewReader returns; next: the error after
		// nRecords records.
		open     func(error) bool
		nRecords int
		next     func(error) bool
	}{
		{name: "text file", data: []byte("hello, world\nthis is not a trace\n"),
			open: func(err error) bool { return errors.Is(err, ErrNotTrace) }},
		{name: "json file", data: []byte(`{"header":{}}`),
			open: func(err error) bool { return errors.Is(err, ErrNotTrace) }},
		{name: "empty", data: nil,
			open: func(err error) bool { return errors.Is(err, ErrNotTrace) }},
		{name: "magic prefix only", data: []byte(Magic[:5]),
			open: func(err error) bool { var te *TruncatedError; return errors.As(err, &te) && te.Header }},
		{name: "newer version", data: mutate(func(b []byte) []byte { b[len(Magic)+1] = FormatVersion + 1; return b }),
			open: func(err error) bool {
				var ve *VersionError
				return errors.As(err, &ve) && ve.Version == FormatVersion+1 && strings.Contains(err.Error(), "newer")
			}},
		{name: "version zero", data: mutate(func(b []byte) []byte { b[len(Magic)+1] = 0; return b }),
			open: func(err error) bool { var ve *VersionError; return errors.As(err, &ve) && ve.Version == 0 }},
		{name: "header checksum", data: mutate(func(b []byte) []byte { b[ends[0]-3] ^= 0x40; return b }),
			open: func(err error) bool { var ce *CorruptError; return errors.As(err, &ce) && ce.Header }},
		{name: "record checksum", data: mutate(func(b []byte) []byte { b[ends[4]-1] ^= 1; return b }),
			nRecords: 3, next: func(err error) bool {
				var ce *CorruptError
				return errors.As(err, &ce) && ce.Index == 3 && ce.Offset == rec3 && ce.Reason == "checksum mismatch"
			}},
		{name: "record length", data: mutate(func(b []byte) []byte { b[rec3+1] ^= 0x10; return b }),
			nRecords: 3, next: func(err error) bool {
				var ce *CorruptError
				return errors.As(err, &ce) && ce.Index == 3 && ce.Reason == "length checksum mismatch"
			}},
		{name: "length over the limit", data: mutate(func(b []byte) []byte {
			b = b[:rec3]
			var l [4]byte
			binary.BigEndian.PutUint32(l[:], MaxRecordSize+1)
			b = append(b, l[:]...)
			b = binary.BigEndian.AppendUint32(b, crc32.Checksum(l[:], castagnoli))
			return append(b, make([]byte, 100)...)
		}), nRecords: 3, next: func(err error) bool {
			var ce *CorruptError
			return errors.As(err, &ce) && ce.Index == 3 && strings.Contains(ce.Reason, "exceeds")
		}},
		{name: "record out of sequence", data: mutate(func(b []byte) []byte {
			// Drop record 3: record 4 follows record 2.
			return append(b[:rec3:rec3], b[ends[4]:]...)
		}), nRecords: 3, next: func(err error) bool {
			var ce *CorruptError
			return errors.As(err, &ce) && ce.Index == 3 && strings.Contains(ce.Reason, "index 4")
		}},
		{name: "payload not a record", data: append(bytes.Clone(good[:ends[len(ends)-1]]), frame([]byte{0x93, 1, 2, 3})...),
			nRecords: len(ends) - 1, next: func(err error) bool {
				var ce *CorruptError
				return errors.As(err, &ce) && strings.Contains(ce.Reason, "fields")
			}},
		{name: "trailing garbage", data: append(bytes.Clone(good), "garbage!"...),
			nRecords: len(ends) - 1, next: func(err error) bool { return errors.Is(err, ErrTruncated) }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, recs, err := readAll(t, tc.data)
			if tc.open != nil {
				if recs != nil || !tc.open(err) {
					t.Fatalf("open error %v", err)
				}
				return
			}
			if len(recs) != tc.nRecords || !tc.next(err) {
				t.Fatalf("%d records, then %v", len(recs), err)
			}
			// The error sticks.
			r, _ := NewReader(bytes.NewReader(tc.data))
			for range tc.nRecords + 2 {
				_, err = r.Next()
			}
			if !tc.next(err) {
				t.Errorf("later Next: %v", err)
			}
		})
	}
}

// A file cut at any byte reads back up to its last whole record, and the
// error says where the cut is.
func TestTruncatedAtEveryByte(t *testing.T) {
	data := writeTrace(t, sampleHeader(), sampleRecords(), nil)
	ends := frameEnds(t, data)
	for n := 0; n <= len(data); n++ {
		_, recs, err := readAll(t, data[:n])
		whole := 0
		for _, e := range ends[1:] {
			if e <= int64(n) {
				whole++
			}
		}
		var te *TruncatedError
		switch {
		case n == 0:
			if !errors.Is(err, ErrNotTrace) {
				t.Fatalf("cut at 0: %v", err)
			}
		case int64(n) < ends[0]:
			if !errors.As(err, &te) || !te.Header {
				t.Fatalf("cut at %d (in the header): %v", n, err)
			}
		case n == len(data):
			if err != nil || len(recs) != len(ends)-1 {
				t.Fatalf("whole file: %d records, %v", len(recs), err)
			}
		case int64(n) == ends[whole]:
			if err != nil || len(recs) != whole {
				t.Fatalf("cut at frame end %d: %d records, %v", n, len(recs), err)
			}
		default:
			if !errors.As(err, &te) || te.Index != uint64(whole) || te.Offset != ends[whole] || len(recs) != whole {
				t.Fatalf("cut at %d: %d records, %v; want %d records, cut at byte %d", n, len(recs), err, whole, ends[whole])
			}
		}
		v, verr := Verify(bytes.NewReader(data[:n]))
		if n > 0 && verr != nil {
			t.Fatalf("Verify cut at %d: %v", n, verr)
		}
		if n > 0 && int64(n) >= ends[0] && (v.Records != uint64(whole) || (int64(n) == ends[whole]) != v.OK()) {
			t.Fatalf("Verify cut at %d: %+v", n, v)
		}
	}
}

// A length prefix that promises more than the input holds costs no more
// memory than the input.
func TestHostileLengthDoesNotAllocate(t *testing.T) {
	data := writeTrace(t, sampleHeader(), nil, nil)
	var l [4]byte
	binary.BigEndian.PutUint32(l[:], MaxRecordSize)
	data = append(data, l[:]...)
	data = binary.BigEndian.AppendUint32(data, crc32.Checksum(l[:], castagnoli))
	data = append(data, 0, 0, 0, 0, 1, 2, 3)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	_, _, err := readAll(t, data)
	runtime.ReadMemStats(&after)
	if !errors.Is(err, ErrTruncated) {
		t.Fatalf("err = %v", err)
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 4<<20 {
		t.Errorf("reading allocated %d bytes", alloc)
	}
}

func TestVerify(t *testing.T) {
	data := writeTrace(t, sampleHeader(), sampleRecords(), nil)
	ends := frameEnds(t, data)
	v, err := Verify(bytes.NewReader(data))
	if err != nil || !v.OK() || v.Records != uint64(len(ends)-1) || v.Size != int64(len(data)) || v.Duration != 70*time.Millisecond {
		t.Fatalf("whole: %+v, %v", v, err)
	}
	if v.Header.Seed != 42 {
		t.Errorf("header = %+v", v.Header)
	}
	bad := bytes.Clone(data)
	bad[ends[5]+frameHeadSize+2] ^= 0xff // inside record 5's payload
	v, err = Verify(bytes.NewReader(bad))
	if err != nil || v.Corrupt == nil || v.Corrupt.Index != 5 || v.Corrupt.Offset != ends[5] || v.Records != 5 || v.Size != ends[5] {
		t.Fatalf("corrupt: %+v, %v", v, err)
	}
	if _, err := Verify(strings.NewReader("not a trace at all")); !errors.Is(err, ErrNotTrace) {
		t.Errorf("not a trace: %v", err)
	}
	newer := bytes.Clone(data)
	newer[len(Magic)] = 1
	var ve *VersionError
	if _, err := Verify(bytes.NewReader(newer)); !errors.As(err, &ve) || ve.Version != 256+FormatVersion {
		t.Errorf("newer: %v", err)
	}
}

// An Offset or Wall the caller gives is kept; the other is derived.
func TestWriterFillsTimes(t *testing.T) {
	clock := stepClock(time.Second) // start = t0; then t0+1s, t0+2s, ...
	recs := []Record{
		{Kind: KindAnnotation, Note: "both zero"},
		{Kind: KindAnnotation, Note: "offset given", Offset: 5 * time.Second},
		{Kind: KindAnnotation, Note: "wall given", Wall: t0.Add(7 * time.Second)},
		{Kind: KindAnnotation, Note: "both given", Wall: t0.Add(time.Hour), Offset: time.Minute},
	}
	data := writeTrace(t, Header{}, recs, &WriterOptions{Now: clock})
	h, got, err := readAll(t, data)
	if err != nil {
		t.Fatal(err)
	}
	if !h.Created.Equal(t0) {
		t.Errorf("created %v", h.Created)
	}
	wantTimes := []struct {
		off  time.Duration
		wall time.Time
	}{
		{time.Second, t0.Add(time.Second)},
		{5 * time.Second, t0.Add(5 * time.Second)},
		{7 * time.Second, t0.Add(7 * time.Second)},
		{time.Minute, t0.Add(time.Hour)},
	}
	for i, w := range wantTimes {
		if got[i].Offset != w.off || !got[i].Wall.Equal(w.wall) {
			t.Errorf("%s: offset %v wall %v, want %v %v", got[i].Note, got[i].Offset, got[i].Wall, w.off, w.wall)
		}
	}
	// KeepTimes writes zero as zero.
	data = writeTrace(t, Header{}, recs[:1], &WriterOptions{Now: clock, KeepTimes: true})
	if _, got, _ := readAll(t, data); got[0].Offset != 0 || !got[0].Wall.IsZero() {
		t.Errorf("KeepTimes: %+v", got[0])
	}
}

func TestReaderEOFIsClean(t *testing.T) {
	data := writeTrace(t, sampleHeader(), nil, nil)
	r, err := NewReader(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.Next(); err != io.EOF {
		t.Errorf("empty trace: %v", err)
	}
}
