package sse_test

import (
	"bytes"
	"errors"
	"testing"

	"github.com/tasksim/tasksim/mcp/sse"
)

// split writes stream to a Splitter in pieces of n bytes and returns the
// blocks emitted, each with its LF tail if one came, and what was left.
func split(stream []byte, n int) (blocks [][]byte, fields []bool, rest []byte) {
	sp := sse.NewSplitter()
	emit := func(b []byte, f bool) error {
		blocks = append(blocks, append([]byte(nil), b...))
		fields = append(fields, f)
		return nil
	}
	tail := func(lf bool) error {
		if lf {
			last := len(blocks) - 1
			blocks[last] = append(blocks[last], '\n')
		}
		return nil
	}
	for s := stream; len(s) > 0; {
		k := min(n, len(s))
		_ = sp.Write(s[:k], emit, tail)
		s = s[k:]
	}
	rest, _ = sp.Pending()
	return blocks, fields, rest
}

func TestSplitter(t *testing.T) {
	cases := []struct {
		name   string
		stream string
		blocks []string
		fields []bool
		rest   string
	}{
		{"LF", "id: 1\ndata: a\n\n: ping\n\ndata: b\n\n", []string{"id: 1\ndata: a\n\n", ": ping\n\n", "data: b\n\n"}, []bool{true, false, true}, ""},
		{"CRLF", "data: a\r\n\r\nretry: 5\r\n\r\n", []string{"data: a\r\n\r\n", "retry: 5\r\n\r\n"}, []bool{true, true}, ""},
		{"CR", "data: a\r\rdata: b\r\r", []string{"data: a\r\r", "data: b\r\r"}, []bool{true, true}, ""},
		{"cut inside", "data: a\n\nid: 2\ndata: h", []string{"data: a\n\n"}, []bool{true}, "id: 2\ndata: h"},
		{"leading blank line", "\ndata: a\n\n", []string{"\n", "data: a\n\n"}, []bool{false, true}, ""},
	}
	for _, tc := range cases {
		for _, n := range []int{1, 2, 3, 1 << 10} {
			blocks, fields, rest := split([]byte(tc.stream), n)
			var got []string
			for _, b := range blocks {
				got = append(got, string(b))
			}
			if len(got) != len(tc.blocks) || string(rest) != tc.rest {
				t.Fatalf("%s, writes of %d: blocks %q rest %q, want %q rest %q", tc.name, n, got, rest, tc.blocks, tc.rest)
			}
			for i := range got {
				if got[i] != tc.blocks[i] || fields[i] != tc.fields[i] {
					t.Errorf("%s, writes of %d: block %d %q fields %v, want %q %v", tc.name, n, i, got[i], fields[i], tc.blocks[i], tc.fields[i])
				}
			}
		}
	}
}

func TestSplitterDiscard(t *testing.T) {
	sp := sse.NewSplitter()
	var blocks []string
	emit := func(b []byte, _ bool) error { blocks = append(blocks, string(b)); return nil }
	_ = sp.Write([]byte("data: long"), emit, nil)
	if p, f := sp.Pending(); string(p) != "data: long" || !f {
		t.Fatalf("pending %q %v", p, f)
	}
	sp.Discard()
	_ = sp.Write([]byte(" end\n\ndata: x\n\n"), emit, nil)
	if len(blocks) != 2 || blocks[0] != " end\n\n" || blocks[1] != "data: x\n\n" {
		t.Fatalf("blocks %q", blocks)
	}
}

func TestBlockDecoder(t *testing.T) {
	var d sse.BlockDecoder
	ev, err := d.Decode([]byte("id: 1\ndata: a\n\n"))
	if err != nil || ev.ID != "1" || ev.Data != "a" {
		t.Fatalf("event %+v, %v", ev, err)
	}
	if _, err := d.Decode([]byte(": ping\n\n")); !errors.Is(err, sse.ErrNoEvent) {
		t.Fatalf("comment: %v, want ErrNoEvent", err)
	}
	if _, err := d.Decode([]byte("retry: 10\n\n")); !errors.Is(err, sse.ErrNoEvent) {
		t.Fatalf("retry alone: %v, want ErrNoEvent", err)
	}
	ev, err = d.Decode([]byte("data: b\r\n\r\n"))
	if err != nil || ev.Data != "b" {
		t.Fatalf("after no event: %+v, %v", ev, err)
	}
}

// FuzzSplitter: a stream written in pieces of any size is cut into blocks
// that, put together with their tails and what is left, give the stream
// back; every block ends with a blank line; the pieces' size changes
// nothing.
func FuzzSplitter(f *testing.F) {
	for _, s := range []string{
		"id: 1\ndata: {\"a\":1}\n\n: ping\n\ndata: x\n\n",
		"id: 1\r\ndata: a\r\n\r\nid: 2\rdata: b\r\r\ndata: c\n\n",
		"retry: 1000\n\ndata: \n\ndata: unfinished",
		"\xEF\xBB\xBFdata: bom\n\n\n\n\r\r\n",
	} {
		f.Add([]byte(s), uint8(3))
	}
	f.Fuzz(func(t *testing.T, stream []byte, size uint8) {
		n := int(size)%64 + 1
		blocks, fields, rest := split(stream, n)
		if got := append(bytes.Join(blocks, nil), rest...); !bytes.Equal(got, stream) {
			t.Fatalf("blocks put together %q, want %q", got, stream)
		}
		for _, b := range blocks {
			if !endsBlock(b) {
				t.Fatalf("block %q does not end with a blank line", b)
			}
		}
		wb, wf, wr := split(stream, len(stream)+1)
		if len(wb) != len(blocks) || !bytes.Equal(wr, rest) {
			t.Fatalf("writes of %d: %q, whole: %q", n, blocks, wb)
		}
		for i := range wb {
			if !bytes.Equal(wb[i], blocks[i]) || wf[i] != fields[i] {
				t.Fatalf("writes of %d: block %d %q %v, whole: %q %v", n, i, blocks[i], fields[i], wb[i], wf[i])
			}
		}
	})
}

// endsBlock reports whether b ends with a blank line: its last line ending
// follows another line ending, or starts b.
func endsBlock(b []byte) bool {
	for _, end := range []string{"\r\n", "\n", "\r"} {
		if rest, ok := bytes.CutSuffix(b, []byte(end)); ok {
			return len(rest) == 0 || rest[len(rest)-1] == '\n' || rest[len(rest)-1] == '\r'
		}
	}
	return false
}
