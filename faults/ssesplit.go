package faults

import "bytes"

// sseSplitter cuts an event stream, as a server writes it, into blocks
// that each end with a blank line, byte-exact: the blocks, concatenated,
// are the stream. Line endings follow the SSE standard (CRLF, LF or CR).
// A block whose blank line ends in a CR is complete at the CR; a LF that
// follows it, in the next write, is its tail (see write).
type sseSplitter struct {
	block     []byte
	lineStart bool // the last byte ended a line, or nothing came yet
	afterCR   bool // the last byte was a CR ending a line
	tailLF    bool // the last block ended in a CR: a LF now is its tail
}

func newSSESplitter() *sseSplitter { return &sseSplitter{lineStart: true} }

// write takes the next bytes of the stream and calls emit with each block
// they complete (valid until emit returns) and tail with a LF that ends
// the block emitted last. It stops at the first error of emit or tail.
func (s *sseSplitter) write(p []byte, emit func(block []byte) error, tail func() error) error {
	if len(p) > 0 && s.tailLF {
		s.tailLF, s.afterCR = false, false
		if p[0] == '\n' {
			if err := tail(); err != nil {
				return err
			}
			p = p[1:]
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
		err := emit(blk)
		s.block = s.block[:0]
		if err != nil {
			return err
		}
	}
	s.block = append(s.block, p[start:]...)
	return nil
}

// rest returns the bytes of a block the stream ended inside.
func (s *sseSplitter) rest() []byte { return s.block }
