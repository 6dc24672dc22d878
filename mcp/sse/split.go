package sse

import (
	"bytes"
	"errors"
)

// MaxBlock is the most bytes a Splitter gathers into one block: an event
// with DefaultMaxEvent bytes of data and one line of DefaultMaxLine bytes
// more, about the most a Reader with the default limits reads. A longer
// block is oversize (see Splitter).
const MaxBlock = DefaultMaxEvent + DefaultMaxLine

// Splitter cuts an event stream, as a server writes it, into blocks that
// each end with a blank line, byte-exact: the blocks, concatenated, are
// the stream. It serves the places that stand between a server and its
// client and act on whole events as they pass: the fault layer and the
// recorder. Line endings follow the standard (CRLF, LF or CR).
//
// A block whose blank line ends in a CR that is the last byte of a write
// is complete at that CR. Whether a LF follows, and so belongs to it, shows
// only with the next write: Write then reports it through its tail
// function before anything else.
//
// Oversize blocks: a block is gathered whole only up to Max bytes (its
// size counts its bytes up to the CR or LF that ends its blank line; the
// LF of a final CRLF does not count, so that the verdict never depends on
// where writes end). A longer block, one that never ends say, is never
// gathered: once the bytes of the block so far pass Max, they go to the
// Oversize function, and so does every further byte of the block as it
// comes, until its blank line; none reaches emit. The places that share
// this policy (the fault layer, the recorder) pass such a block on
// unchanged and unparsed, and mark it as oversize. Memory stays within
// Max and the caller's writes, whatever the stream.
type Splitter struct {
	// Max is the most bytes gathered into one block; 0 means MaxBlock.
	Max int
	// Oversize takes the bytes of an oversize block, in pieces as they
	// come (valid until it returns): end is true on the piece that ends
	// the block with its blank line, which then may have a tail like any
	// block. nil drops them: for a caller that wants events only.
	Oversize func(piece []byte, end bool) error

	block     []byte
	over      bool // the block being read is oversize: its bytes pass as pieces
	lineStart bool // the last byte ended a line, or nothing came yet
	afterCR   bool // the last byte was a CR ending a line
	tailLF    bool // the last block ended in a CR that ended a write
	fields    bool // the block so far has a line that is not a comment
}

// NewSplitter returns a Splitter at the start of a stream.
func NewSplitter() *Splitter { return &Splitter{lineStart: true} }

func (s *Splitter) max() int {
	if s.Max > 0 {
		return s.Max
	}
	return MaxBlock
}

// piece passes bytes of an oversize block on.
func (s *Splitter) piece(p []byte, end bool) error {
	if s.Oversize == nil || (len(p) == 0 && !end) {
		return nil
	}
	return s.Oversize(p, end)
}

// Write takes the next bytes of the stream. It calls emit with each block
// they complete (valid until emit returns), with fields true if the block
// has a line that is not a comment: a block without one carries no event
// and no id or retry. If the block emitted last ended in a CR that ended
// the previous write, the first call is tail, with lf true if the stream
// goes on with a LF, which is that block's and is not passed on again.
// The bytes of an oversize block go to the Oversize function instead of
// emit. Write stops at the first error of emit, tail or Oversize.
func (s *Splitter) Write(p []byte, emit func(block []byte, fields bool) error, tail func(lf bool) error) error {
	p, err := s.takeTail(p, tail)
	if err != nil {
		return err
	}
	start := 0
	for i := 0; i < len(p); i++ {
		c := p[i]
		if s.afterCR {
			s.afterCR = false
			if c == '\n' {
				continue
			}
		}
		if c != '\r' && c != '\n' {
			i = s.skipLine(p, i)
			continue
		}
		if !s.lineStart {
			s.lineStart = true
			s.afterCR = c == '\r'
			continue
		}
		// A blank line ends the block.
		size := len(s.block) + i + 1 - start
		end := s.blankLineEnd(p, i)
		err := s.endBlock(p[start:end], size, emit)
		start, i = end, end-1
		if err != nil {
			return err
		}
	}
	return s.keep(p[start:])
}

// takeTail settles the LF a block that ended a write on a CR awaits: it
// calls tail and returns p without that LF.
func (s *Splitter) takeTail(p []byte, tail func(lf bool) error) ([]byte, error) {
	if len(p) == 0 || !s.tailLF {
		return p, nil
	}
	s.tailLF, s.afterCR = false, false
	lf := p[0] == '\n'
	if lf {
		p = p[1:]
	}
	return p, tail(lf)
}

// skipLine reads the line that starts or goes on with p[i], not a line
// ending, and returns the index of its last byte in p.
func (s *Splitter) skipLine(p []byte, i int) int {
	if s.lineStart && p[i] != ':' {
		s.fields = true
	}
	s.lineStart = false
	if j := bytes.IndexAny(p[i+1:], "\r\n"); j >= 0 {
		return i + j
	}
	return len(p) - 1
}

// blankLineEnd returns the index after the blank line whose CR or LF is
// p[i]: after the LF of a CRLF. A CR that ends p leaves the LF to the
// next write.
func (s *Splitter) blankLineEnd(p []byte, i int) int {
	end := i + 1
	if p[i] == '\r' {
		if end == len(p) {
			s.tailLF = true
		} else if p[end] == '\n' {
			end++
		}
	}
	return end
}

// endBlock passes on the complete block, whose bytes in this write are
// last (up to and with its blank line) and which has size bytes in all:
// to emit, or as pieces when it is oversize.
func (s *Splitter) endBlock(last []byte, size int, emit func(block []byte, fields bool) error) error {
	fields := s.fields
	s.fields = false
	var err error
	switch {
	case s.over:
		s.over = false
		err = s.piece(last, true)
	case size > s.max():
		// Complete, but too long to take whole: it passes as
		// pieces all the same.
		if err = s.piece(s.block, false); err == nil {
			err = s.piece(last, true)
		}
	case len(s.block) == 0:
		err = emit(last, fields)
	default:
		s.gather(last)
		err = emit(s.block, fields)
	}
	s.block = s.block[:0]
	return err
}

// keep holds rest, the start of a block that the write does not end, or
// passes it on as pieces once the block is oversize.
func (s *Splitter) keep(rest []byte) error {
	switch {
	case s.over:
		return s.piece(rest, false)
	case len(s.block)+len(rest) > s.max():
		s.over = true
		err := s.piece(s.block, false)
		s.block = nil // let the GC have what was gathered
		if err != nil {
			return err
		}
		return s.piece(rest, false)
	}
	s.gather(rest)
	return nil
}

// gather appends b to the block, growing it no further than Max allows:
// the block itself never holds more than Max bytes and a line ending.
func (s *Splitter) gather(b []byte) {
	if n := len(s.block) + len(b); n > cap(s.block) {
		nb := make([]byte, len(s.block), min(max(2*cap(s.block), n, 512), max(s.max(), n)))
		copy(nb, s.block)
		s.block = nb
	}
	s.block = append(s.block, b...)
}

// AwaitsTail reports whether the block emitted last ended in a CR that
// ended the write: the next Write starts by calling tail. An emit function
// that records blocks whole holds such a block until then.
func (s *Splitter) AwaitsTail() bool { return s.tailLF }

// Pending returns the bytes of the block the stream is inside, not yet
// complete, and whether they hold a line that is not a comment. They are
// valid until the next Write. An oversize block has no pending bytes: they
// went to the Oversize function (InOversize tells).
func (s *Splitter) Pending() (block []byte, fields bool) { return s.block, s.fields }

// InOversize reports whether the stream is inside an oversize block: its
// bytes so far went to the Oversize function, and the rest follows there.
func (s *Splitter) InOversize() bool { return s.over }

// ErrNoEvent is what a BlockDecoder returns for a block that dispatches no
// event: comments only, or fields without data.
var ErrNoEvent = errors.New("sse: the block dispatches no event")

// A BlockDecoder reads the event of one block at a time, as a Splitter
// emits them, with a Reader kept across blocks.
type BlockDecoder struct {
	feed blockFeed
	rd   *Reader
}

// Decode returns the event block dispatches, ErrNoEvent if it dispatches
// none, or the Reader's error for a block it cannot read (a line too long).
func (d *BlockDecoder) Decode(block []byte) (Event, error) {
	if d.rd == nil {
		d.rd = NewReader(&d.feed)
	}
	d.feed.cur = block
	ev, err := d.rd.Next()
	d.feed.cur = nil
	if err != nil {
		// The reader stopped on an error; the next block starts afresh.
		d.rd = NewReader(&d.feed)
		if errors.Is(err, errBlockEnd) {
			err = ErrNoEvent
		}
		return Event{}, err
	}
	return ev, nil
}

// errBlockEnd ends a reader's input after a block that held no event.
var errBlockEnd = errors.New("end of block")

// blockFeed gives a Reader one block at a time.
type blockFeed struct{ cur []byte }

func (f *blockFeed) Read(p []byte) (int, error) {
	if len(f.cur) == 0 {
		return 0, errBlockEnd
	}
	n := copy(p, f.cur)
	f.cur = f.cur[n:]
	return n, nil
}
