package traces

import (
	"bytes"
	"io"
	"testing"
)

// BenchmarkWriter writes a typical record: one SEP-1905 segment as an
// SSE event, with its JSON-RPC fields given (as the recorder does).
func BenchmarkWriter(b *testing.B) {
	rec := sseRecord(1)
	rec.RPC = DescribeMessage([]byte(rec.SSE.Data))
	p, _ := newEncoder().record(&rec)
	b.SetBytes(int64(frameHeadSize + len(p)))
	w, err := NewWriter(io.Discard, sampleHeader(), nil)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if err := w.Write(rec); err != nil {
			b.Fatal(err)
		}
	}
	w.Close()
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "records/s")
}

// BenchmarkWriterDescribe is BenchmarkWriter when the writer derives the
// JSON-RPC fields itself.
func BenchmarkWriterDescribe(b *testing.B) {
	rec := sseRecord(1)
	w, _ := NewWriter(io.Discard, sampleHeader(), nil)
	b.ReportAllocs()
	for b.Loop() {
		w.Write(rec)
	}
	w.Close()
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "records/s")
}

func BenchmarkReader(b *testing.B) {
	const n = 10000
	recs := make([]Record, n)
	for i := range recs {
		recs[i] = sseRecord(i)
	}
	data := writeTrace(b, sampleHeader(), recs, nil)
	b.SetBytes(int64(len(data))) // an op reads the whole trace
	b.ReportAllocs()
	read := 0
	for b.Loop() {
		r, err := NewReader(bytes.NewReader(data))
		if err != nil {
			b.Fatal(err)
		}
		for _, err := range r.Records() {
			if err != nil {
				b.Fatal(err)
			}
			read++
		}
	}
	b.ReportMetric(float64(read)/b.Elapsed().Seconds(), "records/s")
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(read), "ns/record")
}

func BenchmarkDescribeMessage(b *testing.B) {
	raw := []byte(sseRecord(1).SSE.Data)
	b.ReportAllocs()
	for b.Loop() {
		DescribeMessage(raw)
	}
}
