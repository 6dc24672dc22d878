package recorder

import (
	"bytes"
	"errors"
	"time"

	"github.com/tasksim/tasksim/mcp/sse"
	"github.com/tasksim/tasksim/traces"
)

// sseSplitter records the blocks of an event stream, as they were flushed
// to the client: an event as an sse-event record whose Raw is its exact
// bytes, a block of comments as a body chunk. The blocks are cut by
// sse.Splitter and decoded by the project's SSE reader, one block at a
// time, so the trace reads events exactly as a client does. A block over
// sse.MaxBlock (an event that never ends, say) is oversize, as the fault
// layer also takes it: its bytes are recorded as body chunks marked
// Oversize as they pass, never gathered.
//
// A block whose blank line ends in a CR that ends a write is held until
// the next write shows whether a LF follows (it belongs to the block); it
// keeps the time of its CR.
type sseSplitter struct {
	ex *exchange
	sp *sse.Splitter

	held   bool      // a block ending in CR waits for the next byte
	heldAt time.Time // when its CR passed

	block    []byte    // the block being recorded
	fields   bool      // it has a line that is not a comment
	oversize bool      // the block is the end of an oversize one
	at       time.Time // the time of the write being split

	dec sse.BlockDecoder
}

func newSSESplitter(ex *exchange) *sseSplitter {
	s := &sseSplitter{ex: ex, sp: sse.NewSplitter()}
	s.sp.Oversize = s.piece
	return s
}

// write takes bytes the client has been sent and records the blocks they
// complete.
func (s *sseSplitter) write(p []byte, at time.Time) {
	s.at = at
	_ = s.sp.Write(p, s.complete, s.tail)
}

// maxPiece is the most bytes of an oversize block one record holds.
const maxPiece = 1 << 20

// piece records bytes of an oversize block as they pass, written at once
// (never copied); its end, like any block's, may wait for its LF.
func (s *sseSplitter) piece(p []byte, end bool) error {
	if end {
		s.oversize = true
		return s.complete(p, false)
	}
	for len(p) > 0 {
		k := min(len(p), maxPiece)
		s.ex.write(traces.Record{Wall: s.at, Stream: s.ex.respStream, Dir: traces.DirServerToClient, Kind: traces.KindBodyChunk, Raw: p[:k], Note: "part of an SSE event longer than the recorder parses", Oversize: true})
		p = p[k:]
	}
	return nil
}

// complete takes a block the splitter cut: recorded now, or held for its
// LF.
func (s *sseSplitter) complete(b []byte, fields bool) error {
	s.block = append(s.block[:0], b...)
	s.fields = fields
	if s.sp.AwaitsTail() {
		s.held, s.heldAt = true, s.at
		return nil
	}
	s.emit(s.at)
	return nil
}

// tail records the held block, with the LF that followed it if one did.
func (s *sseSplitter) tail(lf bool) error {
	if lf {
		s.block = append(s.block, '\n')
	}
	s.held = false
	s.emit(s.heldAt)
	return nil
}

// emit records the block just completed.
func (s *sseSplitter) emit(at time.Time) {
	switch {
	case s.oversize:
		s.oversize = false
		s.chunk(at, "end of an SSE event longer than the recorder parses", true)
	case !s.fields:
		s.chunk(at, "sse comment", false)
	default:
		s.event(at)
	}
	s.block = s.block[:0]
	s.fields = false
}

func (s *sseSplitter) chunk(at time.Time, note string, oversize bool) {
	if len(s.block) > 0 {
		s.ex.write(traces.Record{Wall: at, Stream: s.ex.respStream, Dir: traces.DirServerToClient, Kind: traces.KindBodyChunk, Raw: s.block, Note: note, Oversize: oversize})
	}
	s.block = s.block[:0]
}

func (s *sseSplitter) event(at time.Time) {
	rec := traces.Record{Wall: at, Stream: s.ex.respStream, Dir: traces.DirServerToClient, Kind: traces.KindSSEEvent, Raw: s.block}
	ev, err := s.dec.Decode(s.block)
	switch {
	case err == nil:
		rec.SSE = &traces.SSEFields{ID: ev.ID, HasID: ev.HasID, Event: ev.Name, Data: ev.Data, Retry: ev.Retry, HasRetry: ev.HasRetry}
		if ev.Data != "" {
			rec.RPC = traces.DescribeMessage([]byte(ev.Data))
		}
	case errors.Is(err, sse.ErrNoEvent):
		// Fields but no data: a reader dispatches no event, yet an id
		// still sets the resume point and a retry the reconnection time.
		rec.SSE = blockFields(s.block)
		rec.SSE.NoData = true
		rec.Note = "no data: not dispatched"
	default:
		rec.Kind = traces.KindBodyChunk
		rec.Note = err.Error()
	}
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
	// An oversize block cut short has passed already: nothing is pending.
	pending, fields := s.sp.Pending()
	s.block, s.fields = append(s.block[:0], pending...), fields
	switch {
	case len(s.block) == 0:
	case s.fields:
		s.chunk(at, "partial SSE event: the stream ended inside it", false)
	default:
		s.chunk(at, "sse comment", false)
	}
}
