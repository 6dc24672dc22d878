package stdio

import (
	"bufio"
	"bytes"
	"errors"
	"io"
)

var errLineTooLong = errors.New("line too long")

// tooLong marks a line that was cut off because it exceeded the limit.
var tooLong = []byte{0}

func lineError(line []byte) error {
	if len(line) == 1 && &line[0] == &tooLong[0] {
		return errLineTooLong
	}
	return nil
}

// lineReader splits a stream into lines ended by LF (a CR before it is
// dropped), with a length limit. A line over the limit is consumed to its
// end and reported as the tooLong marker.
type lineReader struct {
	r   *bufio.Reader
	max int
	buf []byte
}

func newLineReader(r io.Reader, max int) *lineReader {
	return &lineReader{r: bufio.NewReaderSize(r, 64<<10), max: max}
}

// next returns the next line, valid until the following call. A last line
// without a newline is returned before io.EOF.
func (l *lineReader) next() ([]byte, error) {
	l.buf = l.buf[:0]
	over := false
	for {
		chunk, err := l.r.ReadSlice('\n')
		if !over {
			if len(l.buf)+len(chunk) > l.max+2 {
				over = true
				l.buf = l.buf[:0]
			} else {
				l.buf = append(l.buf, chunk...)
			}
		}
		switch {
		case err == nil:
			if over {
				return tooLong, nil
			}
			return bytes.TrimSuffix(bytes.TrimSuffix(l.buf, []byte("\n")), []byte("\r")), nil
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case errors.Is(err, io.EOF):
			if over {
				return tooLong, nil
			}
			if len(l.buf) > 0 {
				line := bytes.TrimSuffix(l.buf, []byte("\r"))
				l.buf = l.buf[:0]
				return line, nil
			}
			return nil, io.EOF
		default:
			return nil, err
		}
	}
}
