package sse_test

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/tasksim/tasksim/mcp/sse"
)

// piece is what a Splitter passed on: a whole block, or the bytes of an
// oversize block put together.
type piece struct {
	b        []byte
	fields   bool
	oversize bool
}

// split writes stream to a Splitter bounded at max (0: the default) in
// pieces of n bytes and returns the blocks passed on, each with its LF
// tail if one came (an oversize block put together from its pieces), and
// what was left (the pending bytes, or those of an unfinished oversize
// block).
func split(stream []byte, n, max int) (out []piece, rest []byte) {
	sp := sse.NewSplitter()
	sp.Max = max
	var over []byte // the unfinished oversize block
	emit := func(b []byte, f bool) error {
		out = append(out, piece{b: append([]byte(nil), b...), fields: f})
		return nil
	}
	sp.Oversize = func(b []byte, end bool) error {
		if len(b) == 0 {
			panic("an empty piece")
		}
		over = append(over, b...)
		if end {
			out = append(out, piece{b: over, oversize: true})
			over = nil
		}
		return nil
	}
	tail := func(lf bool) error {
		if lf {
			last := len(out) - 1
			out[last].b = append(out[last].b, '\n')
		}
		return nil
	}
	for s := stream; len(s) > 0; {
		k := min(n, len(s))
		_ = sp.Write(s[:k], emit, tail)
		s = s[k:]
	}
	rest, _ = sp.Pending()
	if sp.InOversize() != (over != nil) {
		panic("InOversize disagrees with the pieces passed")
	}
	return out, append(rest, over...)
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
			out, rest := split([]byte(tc.stream), n, 0)
			var got []string
			for _, b := range out {
				got = append(got, string(b.b))
			}
			if len(got) != len(tc.blocks) || string(rest) != tc.rest {
				t.Fatalf("%s, writes of %d: blocks %q rest %q, want %q rest %q", tc.name, n, got, rest, tc.blocks, tc.rest)
			}
			for i := range got {
				if got[i] != tc.blocks[i] || out[i].fields != tc.fields[i] || out[i].oversize {
					t.Errorf("%s, writes of %d: block %d %q fields %v oversize %v, want %q %v", tc.name, n, i, got[i], out[i].fields, out[i].oversize, tc.blocks[i], tc.fields[i])
				}
			}
		}
	}
}

// TestSplitterOversize: a block longer than Max passes in pieces to
// Oversize as its bytes come, never gathered; one of Max bytes or less is
// emitted whole; the verdict is a function of the block's size alone.
func TestSplitterOversize(t *testing.T) {
	const max = 16
	cases := []struct {
		name   string
		stream string
		want   []piece
		rest   string
	}{
		{"at the bound", "data: 01234567\n\n", []piece{{b: []byte("data: 01234567\n\n"), fields: true}}, ""},
		{"one byte over", "data: 012345678\n\ndata: a\n\n", []piece{{b: []byte("data: 012345678\n\n"), oversize: true}, {b: []byte("data: a\n\n"), fields: true}}, ""},
		{"CRLF at the bound", "data: 0123456\r\n\r\n", []piece{{b: []byte("data: 0123456\r\n\r\n"), fields: true}}, ""},
		{"CRLF over", "data: 01234567\r\n\r\n: c\n\n", []piece{{b: []byte("data: 01234567\r\n\r\n"), oversize: true}, {b: []byte(": c\n\n")}}, ""},
		{"comment over", ": 0123456789abcdef\n\n", []piece{{b: []byte(": 0123456789abcdef\n\n"), oversize: true}}, ""},
		{"never ends", "data: a\n\ndata: " + strings.Repeat("x", 100), []piece{{b: []byte("data: a\n\n"), fields: true}}, "data: " + strings.Repeat("x", 100)},
	}
	for _, tc := range cases {
		for _, n := range []int{1, 2, 3, 7, 1 << 10} {
			out, rest := split([]byte(tc.stream), n, max)
			if len(out) != len(tc.want) || string(rest) != tc.rest {
				t.Fatalf("%s, writes of %d: %d blocks, rest %q; want %d, rest %q", tc.name, n, len(out), rest, len(tc.want), tc.rest)
			}
			for i, w := range tc.want {
				if g := out[i]; string(g.b) != string(w.b) || g.fields != w.fields || g.oversize != w.oversize {
					t.Errorf("%s, writes of %d: block %d %q fields %v oversize %v, want %q %v %v", tc.name, n, i, g.b, g.fields, g.oversize, w.b, w.fields, w.oversize)
				}
			}
		}
	}
}

// TestSplitterOversizeBounded: an event that never ends, written in 64 KiB
// writes, keeps no more than Max bytes pending; its bytes pass to Oversize
// as they come, in order, and the next event is emitted whole.
func TestSplitterOversizeBounded(t *testing.T) {
	sp := sse.NewSplitter()
	chunk := bytes.Repeat([]byte("x"), 64<<10)
	var passed, pieces int
	var ended bool
	sp.Oversize = func(b []byte, end bool) error {
		passed += len(b)
		pieces++
		ended = end
		return nil
	}
	var blocks []string
	emit := func(b []byte, _ bool) error { blocks = append(blocks, string(b)); return nil }
	_ = sp.Write([]byte("data: "), emit, nil)
	total := len("data: ")
	for total <= 2*sse.MaxBlock {
		if err := sp.Write(chunk, emit, nil); err != nil {
			t.Fatal(err)
		}
		total += len(chunk)
		if p, _ := sp.Pending(); len(p) > sse.MaxBlock {
			t.Fatalf("%d bytes pending after %d written", len(p), total)
		}
	}
	if !sp.InOversize() || passed < total-sse.MaxBlock || ended {
		t.Fatalf("in oversize %v, %d of %d bytes passed, ended %v", sp.InOversize(), passed, total, ended)
	}
	_ = sp.Write([]byte("\n\ndata: next\n\n"), emit, nil)
	if passed != total+2 || !ended || len(blocks) != 1 || blocks[0] != "data: next\n\n" || sp.InOversize() {
		t.Fatalf("passed %d of %d, ended %v, blocks %q", passed, total+2, ended, blocks)
	}
	if pieces > total/len(chunk)+3 {
		t.Errorf("%d pieces for %d writes", pieces, total/len(chunk))
	}
}

// TestSplitterOversizeDropped: with no Oversize function an oversize block
// is dropped, and the events around it are emitted.
func TestSplitterOversizeDropped(t *testing.T) {
	sp := sse.NewSplitter()
	sp.Max = 10
	var blocks []string
	emit := func(b []byte, _ bool) error { blocks = append(blocks, string(b)); return nil }
	_ = sp.Write([]byte("data: a\n\ndata: 0123456789\n\ndata: b\n\n"), emit, nil)
	if len(blocks) != 2 || blocks[0] != "data: a\n\n" || blocks[1] != "data: b\n\n" {
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
// and oversize blocks that, put together with their tails and what is
// left, give the stream back; every block ends with a blank line, and is
// at most Max bytes unless it is oversize; the pieces' size changes
// nothing.
func FuzzSplitter(f *testing.F) {
	for _, s := range []string{
		"id: 1\ndata: {\"a\":1}\n\n: ping\n\ndata: x\n\n",
		"id: 1\r\ndata: a\r\n\r\nid: 2\rdata: b\r\r\ndata: c\n\n",
		"retry: 1000\n\ndata: \n\ndata: unfinished",
		"\xEF\xBB\xBFdata: bom\n\n\n\n\r\r\n",
	} {
		f.Add([]byte(s), uint8(3), uint8(0))
	}
	f.Add([]byte("data: 0123456789abcdef\r\n\r\ndata: a\n\ndata: long"), uint8(5), uint8(12))
	f.Fuzz(func(t *testing.T, stream []byte, size, bound uint8) {
		n := int(size)%64 + 1
		max := int(bound) // 0: the default, which no fuzzed stream reaches
		out, rest := split(stream, n, max)
		var all [][]byte
		for _, b := range out {
			all = append(all, b.b)
			if !endsBlock(b.b) {
				t.Fatalf("block %q does not end with a blank line", b.b)
			}
			size := len(b.b) // up to the end of the blank line
			if bytes.HasSuffix(b.b, []byte("\r\n")) {
				size--
			}
			bound := max
			if bound == 0 {
				bound = sse.MaxBlock
			}
			if b.oversize != (size > bound) {
				t.Fatalf("block %q of %d bytes, bound %d: oversize %v", b.b, size, bound, b.oversize)
			}
		}
		if got := append(bytes.Join(all, nil), rest...); !bytes.Equal(got, stream) {
			t.Fatalf("blocks put together %q, want %q", got, stream)
		}
		whole, wrest := split(stream, len(stream)+1, max)
		if len(whole) != len(out) || !bytes.Equal(wrest, rest) {
			t.Fatalf("writes of %d: %+v, whole: %+v", n, out, whole)
		}
		for i := range whole {
			if !bytes.Equal(whole[i].b, out[i].b) || whole[i].fields != out[i].fields || whole[i].oversize != out[i].oversize {
				t.Fatalf("writes of %d: block %d %+v, whole: %+v", n, i, out[i], whole[i])
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
