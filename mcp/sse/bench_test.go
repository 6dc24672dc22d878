package sse_test

import (
	"io"
	"strings"
	"testing"

	"github.com/tasksim/tasksim/mcp/sse"
)

// loop repeats a stream without end.
type loop struct {
	b   []byte
	off int
}

func (l *loop) Read(p []byte) (int, error) {
	n := copy(p, l.b[l.off:])
	l.off = (l.off + n) % len(l.b)
	return n, nil
}

// benchEvents are events as a Streamable HTTP server sends them: an id, a
// JSON-RPC message as data.
var benchEvents = []struct {
	name  string
	event sse.Event
}{
	{"small", sse.Event{ID: "0123456789abcdef_42", Data: `{"jsonrpc":"2.0","method":"notifications/tasks/partial","params":{"taskId":"786512e2-9e0d-44bd-8f29-789f320fe840","seq":42,"content":[{"type":"text","text":"chunk 42 of the answer"}]}}`}},
	{"large", sse.Event{ID: "0123456789abcdef_42", Name: "message", Data: `{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"` + strings.Repeat("lorem ipsum ", 3000) + `"}]}}`}},
}

// BenchmarkReader reads one event per iteration from an endless stream.
func BenchmarkReader(b *testing.B) {
	for _, bc := range benchEvents {
		b.Run(bc.name, func(b *testing.B) {
			enc, err := sse.AppendEvent(nil, bc.event)
			if err != nil {
				b.Fatal(err)
			}
			r := sse.NewReader(&loop{b: enc})
			b.SetBytes(int64(len(enc)))
			b.ReportAllocs()
			for b.Loop() {
				ev, err := r.Next()
				if err != nil || len(ev.Data) != len(bc.event.Data) {
					b.Fatalf("Next = %d bytes, %v", len(ev.Data), err)
				}
			}
		})
	}
}

// BenchmarkWriter writes one event per iteration.
func BenchmarkWriter(b *testing.B) {
	for _, bc := range benchEvents {
		b.Run(bc.name, func(b *testing.B) {
			enc, err := sse.AppendEvent(nil, bc.event)
			if err != nil {
				b.Fatal(err)
			}
			w := sse.NewWriter(io.Discard)
			b.SetBytes(int64(len(enc)))
			b.ReportAllocs()
			for b.Loop() {
				if err := w.WriteEvent(bc.event); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkAppendEvent encodes one event per iteration into a reused buffer.
func BenchmarkAppendEvent(b *testing.B) {
	e := benchEvents[0].event
	dst, _ := sse.AppendEvent(nil, e)
	b.SetBytes(int64(len(dst)))
	b.ReportAllocs()
	for b.Loop() {
		dst, _ = sse.AppendEvent(dst[:0], e)
	}
}

// BenchmarkSplitter cuts one encoded event per iteration, written in
// pieces of 512 bytes as a proxy passes a stream on, into blocks.
func BenchmarkSplitter(b *testing.B) {
	for _, bc := range benchEvents {
		b.Run(bc.name, func(b *testing.B) {
			enc, err := sse.AppendEvent(nil, bc.event)
			if err != nil {
				b.Fatal(err)
			}
			sp := sse.NewSplitter()
			blocks := 0
			emit := func(block []byte, fields bool) error {
				blocks++
				return nil
			}
			tail := func(bool) error { return nil }
			b.SetBytes(int64(len(enc)))
			b.ReportAllocs()
			for b.Loop() {
				for p := enc; len(p) > 0; {
					n := min(len(p), 512)
					if err := sp.Write(p[:n], emit, tail); err != nil {
						b.Fatal(err)
					}
					p = p[n:]
				}
			}
			if blocks != b.N {
				b.Fatalf("%d blocks from %d events", blocks, b.N)
			}
		})
	}
}
