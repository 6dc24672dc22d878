package sse

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"iter"
	"math"
	"time"
)

// Default limits of a [Reader].
const (
	DefaultMaxLine  = 4 << 20  // bytes in one line, without its line ending
	DefaultMaxEvent = 16 << 20 // bytes of data in one event
)

// keepData is the largest data buffer a Reader keeps between events; a
// larger one, left by an unusually big event, is released.
const keepData = 1 << 20

// utf8BOM is skipped at the very start of a stream.
const utf8BOM = "\xEF\xBB\xBF"

// Reader decodes an event stream.
//
// Lines end in CRLF, LF or CR; a CR that ends one read and a LF that starts
// the next count as one line ending, and a line ending in CR is returned at
// once, without waiting to see whether a LF follows. Bytes are passed through
// as they come: the reader does not check or repair UTF-8.
//
// A Reader is not safe for concurrent use.
type Reader struct {
	// MaxLine is the longest line accepted, in bytes without the line
	// ending; 0 means DefaultMaxLine. A longer line fails with
	// ErrLineTooLong. Set it before the first call to Next.
	MaxLine int
	// MaxEvent is the most data one event may gather, in bytes, counting one
	// newline per data line; 0 means DefaultMaxEvent. More fails with
	// ErrEventTooLong. Set it before the first call to Next.
	MaxEvent int

	br      *bufio.Reader
	line    []byte // a line that spans reads; reused
	started bool   // the BOM check is done
	skipLF  bool   // the last line ended in CR: drop a LF that comes next
	rerr    error  // the error the source returned; sticky
	err     error  // the error Next returns from now on
	lineNo  int

	// The event being read.
	data     []byte
	name     string
	id       string
	hasID    bool
	retry    time.Duration
	hasRetry bool
	pending  bool // a field line was read since the last blank line

	lastName    string // the last event name, reused to spare allocations
	idBuf       string // the standard's last event ID buffer
	lastEventID string // idBuf as of the last blank line
	reconnect   time.Duration
	hasRecon    bool
	partial     bool
}

// NewReader returns a Reader that decodes the event stream r, reading it
// through a 4 KiB buffer.
func NewReader(r io.Reader) *Reader {
	return &Reader{br: bufio.NewReader(r)}
}

// NewReaderSize is NewReader with a read buffer of size bytes (at least
// 16). The buffer bounds only how much one read takes in: a line longer
// than it is gathered across reads, up to MaxLine. A client holding
// thousands of streams of small events open saves memory with a small
// one.
func NewReaderSize(r io.Reader, size int) *Reader {
	return &Reader{br: bufio.NewReaderSize(r, size)}
}

// Next returns the next dispatched event, or io.EOF at the end of the stream.
//
// As the standard says, a blank line dispatches the event gathered since the
// previous one, unless it has no data line: such a block is dropped, although
// an id in it still sets the last event ID and a retry in it still sets the
// reconnection time. Event.ID and Event.Retry hold only what the event itself
// carried. An event that the end of the stream cuts off before its blank line
// is not dispatched; see Partial.
//
// After an error, Next returns the same error again.
func (r *Reader) Next() (Event, error) {
	if r.err != nil {
		return Event{}, r.err
	}
	if !r.started {
		r.skipBOM()
	}
	for {
		line, err := r.readLine()
		if err != nil {
			if err == io.EOF {
				if len(line) > 0 && line[0] != ':' {
					r.pending = true // a field line without its ending
				}
				r.partial = r.pending
			}
			r.err = err
			return Event{}, err
		}
		if len(line) == 0 {
			if ev, ok := r.dispatch(); ok {
				return ev, nil
			}
			continue
		}
		if err := r.field(line); err != nil {
			r.err = err
			return Event{}, err
		}
	}
}

// Events returns an iterator over the remaining events. It stops after the
// first error, which it yields with a zero Event; the end of the stream is not
// an error.
func (r *Reader) Events() iter.Seq2[Event, error] {
	return func(yield func(Event, error) bool) {
		for {
			ev, err := r.Next()
			if err == io.EOF {
				return
			}
			if err != nil {
				yield(Event{}, err)
				return
			}
			if !yield(ev, nil) {
				return
			}
		}
	}
}

// LastEventID returns the last event ID as of the most recent blank line: the
// value a client sends as Last-Event-ID when it reconnects. It is the
// standard's last event ID buffer whenever Next has just returned an event.
// The two differ only when the stream ends inside an event that carried an
// id: that id is dropped with its event, as the standard drops it.
func (r *Reader) LastEventID() string { return r.lastEventID }

// Retry returns the latest reconnection time the stream set with a valid
// "retry" field, also in a block that was not dispatched, and whether there
// was one.
func (r *Reader) Retry() (time.Duration, bool) { return r.reconnect, r.hasRecon }

// Partial reports whether the stream ended, when Next returned io.EOF, inside
// an event: after field lines (complete or not) that no blank line had ended.
// Those lines were discarded. Comment lines do not count. A partial event is
// the mark of a cut stream.
func (r *Reader) Partial() bool { return r.partial }

func (r *Reader) maxLine() int {
	if r.MaxLine <= 0 {
		return DefaultMaxLine
	}
	return r.MaxLine
}

func (r *Reader) maxEvent() int {
	if r.MaxEvent <= 0 {
		return DefaultMaxEvent
	}
	return r.MaxEvent
}

// skipBOM drops a UTF-8 byte order mark at the start of the stream. It asks
// for one byte at a time, so a stream that does not start with one is not
// held up waiting for three bytes.
func (r *Reader) skipBOM() {
	r.started = true
	for i := 1; i <= len(utf8BOM); i++ {
		b, err := r.br.Peek(i)
		if len(b) < i {
			r.rerr = err
			return
		}
		if b[i-1] != utf8BOM[i-1] {
			return
		}
	}
	r.br.Discard(len(utf8BOM))
}

// buffered returns the buffered bytes, reading once if there are none. It
// returns an error only when no byte is left.
func (r *Reader) buffered() ([]byte, error) {
	if r.br.Buffered() == 0 {
		if r.rerr != nil {
			return nil, r.rerr
		}
		if _, err := r.br.Peek(1); err != nil {
			r.rerr = err
			return nil, err
		}
	}
	b, _ := r.br.Peek(r.br.Buffered())
	return b, nil
}

// readLine returns the next line without its ending. The line is valid until
// the next call. At the end of the stream it returns the rest of an
// unterminated line, if any, with the error.
func (r *Reader) readLine() ([]byte, error) {
	r.line = r.line[:0]
	max := r.maxLine()
	for {
		buf, err := r.buffered()
		if err != nil {
			return r.line, err
		}
		if r.skipLF {
			r.skipLF = false
			if buf[0] == '\n' {
				r.br.Discard(1)
				if buf = buf[1:]; len(buf) == 0 {
					continue
				}
			}
		}
		end := bytes.IndexByte(buf, '\n')
		before := buf
		if end >= 0 {
			before = buf[:end]
		}
		if cr := bytes.IndexByte(before, '\r'); cr >= 0 {
			end = cr
		}
		if end < 0 {
			if len(r.line)+len(buf) > max {
				return nil, r.tooLong(max)
			}
			r.line = append(r.line, buf...)
			r.br.Discard(len(buf))
			continue
		}
		if len(r.line)+end > max {
			return nil, r.tooLong(max)
		}
		n := end + 1
		if buf[end] == '\r' {
			if end+1 == len(buf) {
				r.skipLF = true
			} else if buf[end+1] == '\n' {
				n++
			}
		}
		r.lineNo++
		var line []byte
		if len(r.line) == 0 {
			// The whole line is in bufio's buffer, which Discard does not
			// touch: use it in place.
			line = buf[:end]
		} else {
			r.line = append(r.line, buf[:end]...)
			line = r.line
		}
		r.br.Discard(n)
		return line, nil
	}
}

func (r *Reader) tooLong(max int) error {
	return fmt.Errorf("%w: line %d is longer than %d bytes", ErrLineTooLong, r.lineNo+1, max)
}

// field applies one non-blank line.
func (r *Reader) field(line []byte) error {
	if line[0] == ':' {
		return nil // a comment
	}
	r.pending = true
	name, value := line, []byte(nil)
	if i := bytes.IndexByte(line, ':'); i >= 0 {
		name, value = line[:i], line[i+1:]
		if len(value) > 0 && value[0] == ' ' {
			value = value[1:]
		}
	}
	switch string(name) {
	case "data":
		if len(r.data)+len(value)+1 > r.maxEvent() {
			return fmt.Errorf("%w: event data at line %d is longer than %d bytes", ErrEventTooLong, r.lineNo, r.maxEvent())
		}
		r.data = append(r.data, value...)
		r.data = append(r.data, '\n')
	case "event":
		if string(value) != r.lastName {
			r.lastName = string(value)
		}
		r.name = r.lastName
	case "id":
		if bytes.IndexByte(value, 0) >= 0 {
			return nil // the standard ignores the field
		}
		if string(value) != r.idBuf {
			r.idBuf = string(value)
		}
		r.id, r.hasID = r.idBuf, true
	case "retry":
		if d, ok := parseRetry(value); ok {
			r.retry, r.hasRetry = d, true
			r.reconnect, r.hasRecon = d, true
		}
	}
	return nil
}

// dispatch ends the event at a blank line.
func (r *Reader) dispatch() (Event, bool) {
	r.lastEventID = r.idBuf
	r.pending = false
	var ev Event
	ok := len(r.data) > 0
	if ok {
		ev = Event{
			ID:       r.id,
			HasID:    r.hasID,
			Name:     r.name,
			Data:     string(r.data[:len(r.data)-1]),
			Retry:    r.retry,
			HasRetry: r.hasRetry,
		}
	}
	if cap(r.data) > keepData {
		r.data = nil
	}
	r.data = r.data[:0]
	r.name, r.id, r.hasID, r.retry, r.hasRetry = "", "", false, 0, false
	return ev, ok
}

// maxRetryMillis is the largest reconnection time, in whole milliseconds,
// that a time.Duration holds.
const maxRetryMillis = math.MaxInt64 / int64(time.Millisecond)

// parseRetry reads a retry value: ASCII digits only, in milliseconds. A value
// too large for a time.Duration is clamped.
func parseRetry(v []byte) (time.Duration, bool) {
	if len(v) == 0 {
		return 0, false
	}
	var ms int64
	for _, c := range v {
		if c < '0' || c > '9' {
			return 0, false
		}
		if ms <= maxRetryMillis {
			ms = ms*10 + int64(c-'0')
		}
	}
	ms = min(ms, maxRetryMillis)
	return time.Duration(ms) * time.Millisecond, true
}
