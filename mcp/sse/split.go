package sse

import (
	"bytes"
	"errors"
)

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
type Splitter struct {
	block     []byte
	lineStart bool // the last byte ended a line, or nothing came yet
	afterCR   bool // the last byte was a CR ending a line
	tailLF    bool // the last block ended in a CR that ended a write
	fields    bool // the block so far has a line that is not a comment
}

// NewSplitter returns a Splitter at the start of a stream.
func NewSplitter() *Splitter { return &Splitter{lineStart: true} }

// Write takes the next bytes of the stream. It calls emit with each block
// they complete (valid until emit returns), with fields true if the block
// has a line that is not a comment: a block without one carries no event
// and no id or retry. If the block emitted last ended in a CR that ended
// the previous write, the first call is tail, with lf true if the stream
// goes on with a LF, which is that block's and is not passed on again.
// Write stops at the first error of emit or tail.
func (s *Splitter) Write(p []byte, emit func(block []byte, fields bool) error, tail func(lf bool) error) error {
	if len(p) > 0 && s.tailLF {
		s.tailLF, s.afterCR = false, false
		lf := p[0] == '\n'
		if lf {
			p = p[1:]
		}
		if err := tail(lf); err != nil {
			return err
		}
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
			if s.lineStart && c != ':' {
				s.fields = true
			}
			s.lineStart = false
			if j := bytes.IndexAny(p[i+1:], "\r\n"); j >= 0 {
				i += j
			} else {
				i = len(p) - 1
			}
			continue
		}
		if !s.lineStart {
			s.lineStart = true
			s.afterCR = c == '\r'
			continue
		}
		// A blank line ends the block.
		end := i + 1
		if c == '\r' {
			if end == len(p) {
				s.tailLF = true
			} else if p[end] == '\n' {
				end++
				i++
			}
		}
		var blk []byte
		if len(s.block) == 0 {
			blk = p[start:end]
		} else {
			s.block = append(s.block, p[start:end]...)
			blk = s.block
		}
		start = end
		fields := s.fields
		s.fields = false
		err := emit(blk, fields)
		s.block = s.block[:0]
		if err != nil {
			return err
		}
	}
	s.block = append(s.block, p[start:]...)
	return nil
}

// AwaitsTail reports whether the block emitted last ended in a CR that
// ended the write: the next Write starts by calling tail. An emit function
// that records blocks whole holds such a block until then.
func (s *Splitter) AwaitsTail() bool { return s.tailLF }

// Pending returns the bytes of the block the stream is inside, not yet
// complete, and whether they hold a line that is not a comment. They are
// valid until the next Write or Discard.
func (s *Splitter) Pending() (block []byte, fields bool) { return s.block, s.fields }

// Discard forgets the pending bytes, which the caller passed on another
// way (as too long to parse, say); the block goes on, and the rest of it
// is emitted when it ends.
func (s *Splitter) Discard() { s.block = s.block[:0] }

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
