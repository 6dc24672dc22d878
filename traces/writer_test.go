package traces

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

// lockedBuffer is a bytes.Buffer safe for the writer's timer goroutine.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) Len() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Len()
}

func TestWriterConcurrent(t *testing.T) {
	const writers, each = 8, 200
	var buf lockedBuffer
	w, err := NewWriter(&buf, sampleHeader(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for g := range writers {
		wg.Go(func() {
			for i := range each {
				r := Record{Conn: uint64(g + 1), Kind: KindStdioLine, Stream: "stdout", Raw: []byte(fmt.Sprintf("%d:%d", g, i))}
				if err := w.Write(r); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	_, recs, err := readAll(t, buf.buf.Bytes())
	if err != nil || len(recs) != writers*each {
		t.Fatalf("%d records, %v", len(recs), err)
	}
	next := make([]int, writers)
	var last time.Duration
	for i, r := range recs {
		var g, n int
		fmt.Sscanf(string(r.Raw), "%d:%d", &g, &n)
		if r.Index != uint64(i) || n != next[g] || r.Offset < last {
			t.Fatalf("record %d: index %d, %q after %d, offset %v after %v", i, r.Index, r.Raw, next[g], r.Offset, last)
		}
		next[g]++
		last = r.Offset
	}
}

// The writer flushes on its own within FlushInterval of a write.
func TestWriterFlushesOnItsOwn(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var buf lockedBuffer
		w, err := NewWriter(&buf, sampleHeader(), nil)
		if err != nil {
			t.Fatal(err)
		}
		headerLen := buf.Len()
		if headerLen == 0 {
			t.Fatal("header not flushed by NewWriter")
		}
		w.Write(Record{Kind: KindAnnotation, Note: "one"})
		time.Sleep(DefaultFlushInterval - time.Millisecond)
		synctest.Wait()
		if buf.Len() != headerLen {
			t.Fatalf("flushed after %v", DefaultFlushInterval-time.Millisecond)
		}
		time.Sleep(time.Millisecond)
		synctest.Wait()
		first := buf.Len()
		if first == headerLen {
			t.Fatalf("not flushed after %v", DefaultFlushInterval)
		}
		// Idle: no timer runs. A later write starts it again.
		time.Sleep(time.Hour)
		w.Write(Record{Kind: KindAnnotation, Note: "two"})
		time.Sleep(DefaultFlushInterval)
		synctest.Wait()
		if buf.Len() == first {
			t.Fatal("second record not flushed")
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		if _, recs, err := readAll(t, buf.buf.Bytes()); err != nil || len(recs) != 2 {
			t.Fatalf("%d records, %v", len(recs), err)
		}
	})
}

func TestWriterFlushAndClose(t *testing.T) {
	var buf lockedBuffer
	w, _ := NewWriter(&buf, Header{}, &WriterOptions{FlushInterval: -1})
	w.Write(Record{Kind: KindAnnotation})
	n := buf.Len()
	if err := w.Flush(); err != nil || buf.Len() == n {
		t.Fatalf("Flush: %v, %d -> %d bytes", err, n, buf.Len())
	}
	w.Write(Record{Kind: KindAnnotation})
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	if err := w.Write(Record{}); !errors.Is(err, ErrClosed) {
		t.Errorf("Write after Close: %v", err)
	}
	if err := w.Flush(); !errors.Is(err, ErrClosed) {
		t.Errorf("Flush after Close: %v", err)
	}
	if _, recs, err := readAll(t, buf.buf.Bytes()); err != nil || len(recs) != 2 {
		t.Fatalf("%d records, %v", len(recs), err)
	}
}

func TestWriterTooLarge(t *testing.T) {
	var buf lockedBuffer
	w, _ := NewWriter(&buf, Header{}, nil)
	if err := w.Write(Record{Kind: KindBodyChunk, Raw: make([]byte, MaxRecordSize)}); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("err = %v", err)
	}
	if err := w.Write(Record{Kind: KindAnnotation, Note: "after"}); err != nil {
		t.Fatal(err)
	}
	w.Close()
	_, recs, err := readAll(t, buf.buf.Bytes())
	if err != nil || len(recs) != 1 || recs[0].Index != 0 || recs[0].Note != "after" {
		t.Fatalf("%+v, %v", recs, err)
	}
}

type failWriter struct{ after int }

func (f *failWriter) Write(p []byte) (int, error) {
	if f.after <= 0 {
		return 0, errors.New("disk full")
	}
	f.after--
	return len(p), nil
}

func TestWriterErrorSticks(t *testing.T) {
	w, err := NewWriter(&failWriter{after: 1}, Header{}, &WriterOptions{FlushInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	w.Write(Record{Kind: KindAnnotation})
	if err := w.Flush(); err == nil || !strings.Contains(err.Error(), "disk full") {
		t.Fatalf("Flush: %v", err)
	}
	if err := w.Write(Record{Kind: KindAnnotation}); err == nil || !strings.Contains(err.Error(), "disk full") {
		t.Errorf("Write after failure: %v", err)
	}
	if err := w.Close(); err == nil {
		t.Error("Close after failure: nil")
	}
	if _, err := NewWriter(&failWriter{}, Header{}, nil); err == nil {
		t.Error("NewWriter on a failing writer: nil")
	}
}

// The redactor works on a copy: the caller's record is left alone.
func TestWriterRedactsACopy(t *testing.T) {
	red, err := NewRedactor(RedactOptions{})
	if err != nil {
		t.Fatal(err)
	}
	rec := sampleRecords()[1]
	var buf bytes.Buffer
	w, _ := NewWriter(&buf, sampleHeader(), &WriterOptions{Redactor: red})
	w.Write(rec)
	w.Close()
	if v, _ := rec.HTTP.Get("Authorization"); v != "Bearer s3cr3t" {
		t.Errorf("caller's record changed: %q", v)
	}
	_, recs, _ := readAll(t, buf.Bytes())
	if v, _ := recs[0].HTTP.Get("Authorization"); v != "[redacted:1]" {
		t.Errorf("written Authorization %q", v)
	}
}
