package traces

import (
	"bytes"
	"encoding/binary"
	"time"

	"github.com/vmihailenco/msgpack/v5"
)

// encoder turns headers and records into payload bytes. It is not safe
// for concurrent use.
type encoder struct {
	buf bytes.Buffer
	enc *msgpack.Encoder
	err error
}

func newEncoder() *encoder {
	e := &encoder{}
	e.enc = msgpack.NewEncoder(&e.buf)
	return e
}

// The msgpack encoder writing into a bytes.Buffer fails only if the
// buffer cannot grow (which panics); keep the first error anyway.
func (e *encoder) keep(err error) {
	if e.err == nil {
		e.err = err
	}
}

func (e *encoder) arr(n int)        { e.keep(e.enc.EncodeArrayLen(n)) }
func (e *encoder) uint(n uint64)    { e.keep(e.enc.EncodeUint(n)) }
func (e *encoder) int(n int64)      { e.keep(e.enc.EncodeInt(n)) }
func (e *encoder) str(s string)     { e.keep(e.enc.EncodeString(s)) }
func (e *encoder) boolean(b bool)   { e.keep(e.enc.EncodeBool(b)) }
func (e *encoder) null()            { e.keep(e.enc.EncodeNil()) }
func (e *encoder) time(t time.Time) { e.timeOrNil(t) }

func (e *encoder) bin(b []byte) {
	if len(b) == 0 {
		e.null()
		return
	}
	e.keep(e.enc.EncodeBytes(b))
}

// timeOrNil writes nanoseconds since the Unix epoch, nil for the zero
// time.
func (e *encoder) timeOrNil(t time.Time) {
	if t.IsZero() {
		e.null()
		return
	}
	e.int(t.UnixNano())
}

func (e *encoder) header(h *Header) ([]byte, error) {
	e.buf.Reset()
	e.err = nil
	e.arr(headerFields)
	e.uint(uint64(h.FormatVersion))
	e.time(h.Created)
	e.str(h.TasksimVersion)
	e.arr(len(h.Command))
	for _, a := range h.Command {
		e.str(a)
	}
	e.str(h.Protocol)
	e.uint(h.Seed)
	e.arr(len(h.Labels))
	for _, l := range h.Labels {
		e.arr(2)
		e.str(l.Key)
		e.str(l.Value)
	}
	if f := h.Faults; f == nil {
		e.null()
	} else {
		e.arr(scheduleFields)
		e.strs(f.Specs)
		e.strs(f.Decisions)
		e.str(f.Note)
	}
	return e.buf.Bytes(), e.err
}

func (e *encoder) strs(ss []string) {
	e.arr(len(ss))
	for _, s := range ss {
		e.str(s)
	}
}

func (e *encoder) fault(f *Fault) {
	if f == nil {
		e.null()
		return
	}
	e.arr(faultFields)
	e.str(f.Name)
	e.arr(len(f.Params))
	for _, p := range f.Params {
		e.arr(2)
		e.str(p.Key)
		e.str(p.Value)
	}
	t := &f.Target
	e.arr(targetFields)
	e.uint(t.Conn)
	e.uint(t.Exchange)
	e.str(t.Stream)
	e.str(t.EventID)
	e.boolean(t.HasEventID)
	e.str(t.RPCID)
	e.str(t.Method)
	e.str(t.TaskID)
	e.int(t.SeqNr)
	e.boolean(t.HasSeqNr)
	e.int(t.Seq)
	e.boolean(t.HasSeq)
	e.uint(t.Record)
	e.boolean(t.HasRecord)
	e.str(f.Action)
	e.uint(uint64(f.Verb))
	e.int(int64(f.Delay))
	e.int(int64(f.Status))
}

func (e *encoder) record(r *Record) ([]byte, error) {
	e.buf.Reset()
	e.err = nil
	e.arr(recordFields)
	e.uint(r.Index)
	e.int(int64(r.Offset))
	e.time(r.Wall)
	e.uint(r.Conn)
	e.uint(r.Exchange)
	e.str(r.Stream)
	e.uint(uint64(r.Dir))
	e.uint(uint64(r.Kind))
	e.bin(r.Raw)
	if h := r.HTTP; h == nil {
		e.null()
	} else {
		e.arr(httpFields)
		e.str(h.Method)
		e.str(h.URL)
		e.str(h.Proto)
		e.int(int64(h.Status))
		e.arr(len(h.Header))
		for _, f := range h.Header {
			e.arr(2)
			e.str(f.Name)
			e.str(f.Value)
		}
	}
	if s := r.SSE; s == nil {
		e.null()
	} else {
		e.arr(sseFields)
		e.str(s.ID)
		e.boolean(s.HasID)
		e.str(s.Event)
		e.str(s.Data)
		e.int(int64(s.Retry))
		e.boolean(s.HasRetry)
		e.boolean(s.NoData)
	}
	if p := r.RPC; p == nil {
		e.null()
	} else {
		e.arr(rpcFields)
		e.str(p.Type)
		e.str(p.Method)
		e.str(p.ID)
		e.str(p.TaskID)
		e.str(p.Status)
		e.arr(len(p.SeqNrs))
		for _, n := range p.SeqNrs {
			e.int(n)
		}
		e.int(p.Seq)
		e.boolean(p.HasSeq)
		e.boolean(p.IsComplete)
		e.boolean(p.HasIsComplete)
		e.int(int64(p.ErrorCode))
		e.str(p.ResultType)
	}
	e.str(r.Note)
	e.fault(r.Fault)
	e.uint(uint64(r.Side))
	e.boolean(r.Oversize)
	e.uint(uint64(r.End))
	e.uint(uint64(r.Batch))
	e.str(r.Revision)
	return e.buf.Bytes(), e.err
}

// appendPreamble appends the magic and the format version.
func appendPreamble(dst []byte, version int) []byte {
	dst = append(dst, Magic...)
	return binary.BigEndian.AppendUint16(dst, uint16(version))
}
