package recorder

import (
	"bytes"
	"errors"
	"time"

	"github.com/tasksim/tasksim/mcp/sse"
	"github.com/tasksim/tasksim/traces"
)

// maxBlock is the most bytes one SSE event may take on the wire before the
// tee stops gathering it and records the rest as plain body chunks.
const maxBlock = sse.DefaultMaxEvent + sse.DefaultMaxLine

// sseSplitter cuts the bytes of an event stream, as they were flushed to
// the client, into blocks that each end with a blank line, and records
// each: an event as an sse-event record whose Raw is its exact bytes, a
// block of comments as a body chunk. The fields are decoded by the
// project's SSE reader, fed one block at a time, so the trace reads events
// exactly as a client does.
//
// Line endings follow the standard (CRLF, LF or CR). A block whose blank
// line ends in a CR that ends a write is held until the next write shows
// whether a LF follows (it belongs to the block); it keeps the time of its
// CR.
type sseSplitter struct {
	ex *exchange

	held   bool      // a block ending in CR waits for the next byte
	heldAt time.Time // when its CR passed

	block     []byte
	lineStart bool // the last byte ended a line, or nothing came yet
	afterCR   bool // the last byte was a CR: a LF now belongs to its ending
	fields    bool // the block has a line that is not a comment
	oversize  bool // the block outgrew maxBlock and is being passed unparsed

	feed blockFeed
	rd   *sse.Reader
}

// errBlockEnd ends a reader's input after a block that held no event.
var errBlockEnd = errors.New("end of block")

// blockFeed gives an sse.Reader one block at a time.
type blockFeed struct{ cur []byte }

func (f *blockFeed) Read(p []byte) (int, error) {
	if len(f.cur) == 0 {
		return 0, errBlockEnd
	}
	n := copy(p, f.cur)
	f.cur = f.cur[n:]
	return n, nil
}

func newSSESplitter(ex *exchange) *sseSplitter {
	s := &sseSplitter{ex: ex, lineStart: true}
	s.rd = sse.NewReader(&s.feed)
	return s
}

// write takes bytes the client has been sent and records the blocks they
// complete.
func (s *sseSplitter) write(p []byte, at time.Time) {
	if len(p) == 0 {
		return
	}
	if s.held {
		s.held, s.afterCR = false, false
		if p[0] == '\n' {
			s.block = append(s.block, '\n')
			p = p[1:]
		}
		s.emit(s.heldAt)
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
				s.block = append(s.block, p[start:end]...)
				s.held, s.heldAt, s.afterCR = true, at, true
				return
			}
			if p[end] == '\n' {
				end++
				i++
			}
		}
		s.block = append(s.block, p[start:end]...)
		start = end
		s.emit(at)
	}
	s.block = append(s.block, p[start:]...)
	if len(s.block) > maxBlock {
		s.oversize = true
		s.chunk(at, "part of an SSE event longer than the recorder parses")
	}
}

// emit records the block just completed.
func (s *sseSplitter) emit(at time.Time) {
	switch {
	case s.oversize:
		s.oversize = false
		s.chunk(at, "end of an SSE event longer than the recorder parses")
	case !s.fields:
		s.chunk(at, "sse comment")
	default:
		s.event(at)
	}
	s.block = s.block[:0]
	s.fields = false
}

func (s *sseSplitter) chunk(at time.Time, note string) {
	if len(s.block) > 0 {
		s.ex.write(traces.Record{Wall: at, Stream: s.ex.respStream, Dir: traces.DirServerToClient, Kind: traces.KindBodyChunk, Raw: s.block, Note: note})
	}
	s.block = s.block[:0]
}

func (s *sseSplitter) event(at time.Time) {
	rec := traces.Record{Wall: at, Stream: s.ex.respStream, Dir: traces.DirServerToClient, Kind: traces.KindSSEEvent, Raw: s.block}
	s.feed.cur = s.block
	ev, err := s.rd.Next()
	switch {
	case err == nil:
		rec.SSE = &traces.SSEFields{ID: ev.ID, HasID: ev.HasID, Event: ev.Name, Data: ev.Data, Retry: ev.Retry, HasRetry: ev.HasRetry}
		if ev.Data != "" {
			rec.RPC = traces.DescribeMessage([]byte(ev.Data))
		}
	case errors.Is(err, errBlockEnd):
		// Fields but no data: a reader dispatches no event, yet an id
		// still sets the resume point and a retry the reconnection time.
		rec.SSE = blockFields(s.block)
		rec.Note = "no data: not dispatched"
		s.rd = sse.NewReader(&s.feed)
	default:
		rec.Kind = traces.KindBodyChunk
		rec.Note = err.Error()
		s.rd = sse.NewReader(&s.feed)
	}
	s.feed.cur = nil
	s.ex.write(rec)
}

// blockFields reads the id and retry a block without data sets, with a
// reader of its own.
func blockFields(block []byte) *traces.SSEFields {
	rd := sse.NewReader(bytes.NewReader(block))
	_, _ = rd.Next()
	f := &traces.SSEFields{ID: rd.LastEventID()}
	f.HasID = f.ID != ""
	f.Retry, f.HasRetry = rd.Retry()
	return f
}

// end records what is left when the stream ends: an event cut short.
func (s *sseSplitter) end(at time.Time) {
	if s.held {
		s.held = false
		s.emit(s.heldAt)
	}
	switch {
	case len(s.block) == 0:
	case s.oversize:
		s.chunk(at, "end of an SSE event longer than the recorder parses, cut short")
	case s.fields:
		s.chunk(at, "partial SSE event: the stream ended inside it")
	default:
		s.chunk(at, "sse comment")
	}
}
