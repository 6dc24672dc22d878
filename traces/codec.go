package traces

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/vmihailenco/msgpack/v5"
)

// The payload of every frame is one msgpack array whose elements are the
// fields in a fixed order (docs/trace-format.md lists them). No maps are
// encoded, so the bytes are a function of the values: encoding a record
// twice gives the same bytes. Readers ignore elements past the ones they
// know, which is how a version adds fields.

const (
	headerFields = 8  // written; version 1 wrote 7 (no faults)
	recordFields = 18 // written; version 1 wrote 13 (no fault, side, oversize), version 2 16 (no end, batch)

	headerFieldsV1 = 7  // the least a header has
	recordFieldsV1 = 13 // the least a record has

	httpFields     = 5
	sseFields      = 7 // written; versions 1 and 2 wrote 6 (no no_data)
	rpcFields      = 11
	scheduleFields = 3
	faultFields    = 7 // written; version 2 wrote 4 (no verb, delay, status)

	// The least each has.
	sseFieldsV1   = 6
	faultFieldsV2 = 4
	// A record with fewer fields than this is of version 1 or 2: upgrade
	// fills its typed fields from its text.
	recordFieldsV3 = 18
	targetFields   = 14
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
	}
	e.str(r.Note)
	e.fault(r.Fault)
	e.uint(uint64(r.Side))
	e.boolean(r.Oversize)
	e.uint(uint64(r.End))
	e.uint(uint64(r.Batch))
	return e.buf.Bytes(), e.err
}

// decoder reads the msgpack subset the format uses from one payload. It
// is written for hostile input: every length is checked against the bytes
// left before anything is allocated, and nesting is bounded.
type decoder struct {
	b   []byte
	pos int
}

var errShort = errors.New("msgpack: unexpected end of payload")

func (d *decoder) fail(format string, args ...any) error {
	return fmt.Errorf("msgpack at payload byte %d: %s", d.pos, fmt.Sprintf(format, args...))
}

func (d *decoder) peek() (byte, error) {
	if d.pos >= len(d.b) {
		return 0, errShort
	}
	return d.b[d.pos], nil
}

func (d *decoder) take(n int) ([]byte, error) {
	if n < 0 || n > len(d.b)-d.pos {
		return nil, errShort
	}
	p := d.b[d.pos : d.pos+n]
	d.pos += n
	return p, nil
}

func (d *decoder) code() (byte, error) {
	c, err := d.peek()
	if err == nil {
		d.pos++
	}
	return c, err
}

func (d *decoder) be(n int) (uint64, error) {
	p, err := d.take(n)
	if err != nil {
		return 0, err
	}
	var v uint64
	for _, c := range p {
		v = v<<8 | uint64(c)
	}
	return v, nil
}

// integer reads any msgpack integer. neg reports a negative value held in
// v as two's complement.
func (d *decoder) integer() (v uint64, neg bool, err error) {
	c, err := d.code()
	if err != nil {
		return 0, false, err
	}
	switch {
	case c <= 0x7f:
		return uint64(c), false, nil
	case c >= 0xe0:
		return uint64(int64(int8(c))), true, nil
	}
	switch c {
	case 0xcc, 0xcd, 0xce, 0xcf: // uint 8/16/32/64
		v, err = d.be(1 << (c - 0xcc))
		return v, false, err
	case 0xd0, 0xd1, 0xd2, 0xd3: // int 8/16/32/64
		n := 1 << (c - 0xd0)
		v, err = d.be(n)
		if err != nil {
			return 0, false, err
		}
		shift := 64 - 8*n
		s := int64(v<<shift) >> shift
		return uint64(s), s < 0, nil
	}
	d.pos--
	return 0, false, d.fail("want an integer, found code 0x%02x", c)
}

func (d *decoder) uint() (uint64, error) {
	v, neg, err := d.integer()
	if err == nil && neg {
		return 0, d.fail("negative value where an unsigned one belongs")
	}
	return v, err
}

func (d *decoder) int() (int64, error) {
	v, neg, err := d.integer()
	if err == nil && !neg && v > math.MaxInt64 {
		return 0, d.fail("integer %d overflows int64", v)
	}
	return int64(v), err
}

func (d *decoder) small(limit uint64) (int, error) {
	v, err := d.uint()
	if err == nil && v > limit {
		return 0, d.fail("value %d exceeds %d", v, limit)
	}
	return int(v), err
}

func (d *decoder) smallInt() (int, error) {
	v, err := d.int()
	return int(v), err
}

func (d *decoder) boolean() (bool, error) {
	c, err := d.code()
	switch {
	case err != nil:
		return false, err
	case c == 0xc2:
		return false, nil
	case c == 0xc3:
		return true, nil
	}
	d.pos--
	return false, d.fail("want a bool, found code 0x%02x", c)
}

// isNil consumes a nil and reports whether there was one.
func (d *decoder) isNil() bool {
	if c, err := d.peek(); err == nil && c == 0xc0 {
		d.pos++
		return true
	}
	return false
}

// rawBytes reads a str or bin (or nil, as empty) and returns a slice of
// the payload.
func (d *decoder) rawBytes() ([]byte, error) {
	c, err := d.code()
	if err != nil {
		return nil, err
	}
	var n uint64
	switch {
	case c == 0xc0:
		return nil, nil
	case c >= 0xa0 && c <= 0xbf:
		n = uint64(c & 0x1f)
	case c == 0xd9 || c == 0xc4:
		n, err = d.be(1)
	case c == 0xda || c == 0xc5:
		n, err = d.be(2)
	case c == 0xdb || c == 0xc6:
		n, err = d.be(4)
	default:
		d.pos--
		return nil, d.fail("want a string, found code 0x%02x", c)
	}
	if err != nil {
		return nil, err
	}
	if n > uint64(len(d.b)-d.pos) {
		return nil, errShort
	}
	return d.take(int(n))
}

func (d *decoder) str() (string, error) {
	p, err := d.rawBytes()
	return string(p), err
}

func (d *decoder) bin() ([]byte, error) {
	p, err := d.rawBytes()
	if len(p) == 0 {
		return nil, err
	}
	return bytes.Clone(p), err
}

// arr reads an array length (-1 for nil). Every element takes at least
// one byte, so a length beyond the bytes left is an error, not an
// allocation.
func (d *decoder) arr() (int, error) {
	c, err := d.code()
	if err != nil {
		return 0, err
	}
	var n uint64
	switch {
	case c == 0xc0:
		return -1, nil
	case c >= 0x90 && c <= 0x9f:
		n = uint64(c & 0x0f)
	case c == 0xdc:
		n, err = d.be(2)
	case c == 0xdd:
		n, err = d.be(4)
	default:
		d.pos--
		return 0, d.fail("want an array, found code 0x%02x", c)
	}
	if err != nil {
		return 0, err
	}
	if n > uint64(len(d.b)-d.pos) {
		return 0, errShort
	}
	return int(n), nil
}

// fixed reads an array of at least want elements and returns how many
// more it holds (for skip).
func (d *decoder) fixed(want int, what string) (extra int, err error) {
	n, err := d.arr()
	if err != nil {
		return 0, err
	}
	if n < want {
		return 0, d.fail("%s has %d fields, want at least %d", what, n, want)
	}
	return n - want, nil
}

// skipN skips n values: the fields a newer writer appended.
func (d *decoder) skipN(n int) error {
	for range n {
		if err := d.skip(0); err != nil {
			return err
		}
	}
	return nil
}

const maxDepth = 32

// skip skips one value of any msgpack type.
func (d *decoder) skip(depth int) error {
	if depth > maxDepth {
		return d.fail("values nested deeper than %d", maxDepth)
	}
	c, err := d.peek()
	if err != nil {
		return err
	}
	var n uint64 // bytes to skip after the code and length
	items := uint64(0)
	switch {
	case c <= 0x7f || c >= 0xe0 || c == 0xc0 || c == 0xc2 || c == 0xc3:
		d.pos++
		return nil
	case (c >= 0xcc && c <= 0xd3):
		_, _, err := d.integer()
		return err
	case c >= 0xa0 && c <= 0xbf, c == 0xd9, c == 0xda, c == 0xdb, c == 0xc4, c == 0xc5, c == 0xc6:
		_, err := d.rawBytes()
		return err
	case c >= 0x90 && c <= 0x9f, c == 0xdc, c == 0xdd:
		k, err := d.arr()
		if err != nil {
			return err
		}
		items = uint64(k)
	case c >= 0x80 && c <= 0x8f:
		d.pos++
		items = 2 * uint64(c&0x0f)
	case c == 0xde || c == 0xdf:
		d.pos++
		k, err := d.be(2 << (c - 0xde))
		if err != nil {
			return err
		}
		items = 2 * k
	case c == 0xca:
		d.pos++
		n = 4
	case c == 0xcb:
		d.pos++
		n = 8
	case c >= 0xd4 && c <= 0xd8: // fixext 1/2/4/8/16
		d.pos++
		n = 1 + 1<<(c-0xd4)
	case c >= 0xc7 && c <= 0xc9: // ext 8/16/32
		d.pos++
		k, err := d.be(1 << (c - 0xc7))
		if err != nil {
			return err
		}
		n = 1 + k
	default: // 0xc1 is never used
		return d.fail("invalid code 0x%02x", c)
	}
	if n > uint64(len(d.b)-d.pos) || items > uint64(len(d.b)-d.pos) {
		return errShort
	}
	d.pos += int(n)
	for range items {
		if err := d.skip(depth + 1); err != nil {
			return err
		}
	}
	return nil
}

func (d *decoder) time() (time.Time, error) {
	if d.isNil() {
		return time.Time{}, nil
	}
	ns, err := d.int()
	if err != nil {
		return time.Time{}, err
	}
	return time.Unix(0, ns).UTC(), nil
}

func (d *decoder) end() error {
	if d.pos != len(d.b) {
		return d.fail("%d bytes after the value", len(d.b)-d.pos)
	}
	return nil
}

// decodeHeader decodes a header payload.
func decodeHeader(p []byte) (h Header, err error) {
	d := &decoder{b: p}
	extra, err := d.fixed(headerFieldsV1, "header")
	if err != nil {
		return h, err
	}
	if h.FormatVersion, err = d.small(math.MaxUint16); err != nil {
		return h, err
	}
	if h.Created, err = d.time(); err != nil {
		return h, err
	}
	if h.TasksimVersion, err = d.str(); err != nil {
		return h, err
	}
	n, err := d.arr()
	if err != nil {
		return h, err
	}
	for range n {
		a, err := d.str()
		if err != nil {
			return h, err
		}
		h.Command = append(h.Command, a)
	}
	if h.Protocol, err = d.str(); err != nil {
		return h, err
	}
	// Version 1 wrote an int64, version 2 a uint64: a negative value is
	// the two's complement of the same 64 bits.
	if h.Seed, _, err = d.integer(); err != nil {
		return h, err
	}
	if n, err = d.arr(); err != nil {
		return h, err
	}
	for range n {
		var l Label
		if err := d.pair(&l.Key, &l.Value); err != nil {
			return h, err
		}
		h.Labels = append(h.Labels, l)
	}
	if extra > 0 {
		extra--
		if h.Faults, err = d.schedule(); err != nil {
			return h, err
		}
	}
	if err := d.skipN(extra); err != nil {
		return h, err
	}
	return h, d.end()
}

func (d *decoder) strs() ([]string, error) {
	n, err := d.arr()
	if err != nil {
		return nil, err
	}
	var out []string
	for range n {
		s, err := d.str()
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, nil
}

func (d *decoder) schedule() (*Schedule, error) {
	if d.isNil() {
		return nil, nil
	}
	extra, err := d.fixed(scheduleFields, "fault schedule")
	if err != nil {
		return nil, err
	}
	s := &Schedule{}
	if s.Specs, err = d.strs(); err != nil {
		return nil, err
	}
	if s.Decisions, err = d.strs(); err != nil {
		return nil, err
	}
	if s.Note, err = d.str(); err != nil {
		return nil, err
	}
	return s, d.skipN(extra)
}

func (d *decoder) fault() (*Fault, error) {
	if d.isNil() {
		return nil, nil
	}
	extra, err := d.fixed(faultFieldsV2, "fault")
	if err != nil {
		return nil, err
	}
	f := &Fault{}
	if f.Name, err = d.str(); err != nil {
		return nil, err
	}
	n, err := d.arr()
	if err != nil {
		return nil, err
	}
	for range n {
		var p Param
		if err := d.pair(&p.Key, &p.Value); err != nil {
			return nil, err
		}
		f.Params = append(f.Params, p)
	}
	textra, err := d.fixed(targetFields, "fault target")
	if err != nil {
		return nil, err
	}
	t := &f.Target
	if t.Conn, err = d.uint(); err != nil {
		return nil, err
	}
	if t.Exchange, err = d.uint(); err != nil {
		return nil, err
	}
	if t.Stream, err = d.str(); err != nil {
		return nil, err
	}
	if t.EventID, err = d.str(); err != nil {
		return nil, err
	}
	if t.HasEventID, err = d.boolean(); err != nil {
		return nil, err
	}
	for _, s := range []*string{&t.RPCID, &t.Method, &t.TaskID} {
		if *s, err = d.str(); err != nil {
			return nil, err
		}
	}
	if t.SeqNr, err = d.int(); err != nil {
		return nil, err
	}
	if t.HasSeqNr, err = d.boolean(); err != nil {
		return nil, err
	}
	if t.Seq, err = d.int(); err != nil {
		return nil, err
	}
	if t.HasSeq, err = d.boolean(); err != nil {
		return nil, err
	}
	if t.Record, err = d.uint(); err != nil {
		return nil, err
	}
	if t.HasRecord, err = d.boolean(); err != nil {
		return nil, err
	}
	if err := d.skipN(textra); err != nil {
		return nil, err
	}
	if f.Action, err = d.str(); err != nil {
		return nil, err
	}
	if extra >= faultFields-faultFieldsV2 {
		extra -= faultFields - faultFieldsV2
		verb, err := d.small(math.MaxUint8)
		if err != nil {
			return nil, err
		}
		f.Verb = Verb(verb)
		delay, err := d.int()
		if err != nil {
			return nil, err
		}
		f.Delay = time.Duration(delay)
		status, err := d.int()
		if err != nil {
			return nil, err
		}
		if status < math.MinInt32 || status > math.MaxInt32 {
			return nil, d.fail("fault status %d out of range", status)
		}
		f.Status = int(status)
	}
	return f, d.skipN(extra)
}

func (d *decoder) pair(a, b *string) error {
	extra, err := d.fixed(2, "pair")
	if err != nil {
		return err
	}
	if *a, err = d.str(); err != nil {
		return err
	}
	if *b, err = d.str(); err != nil {
		return err
	}
	return d.skipN(extra)
}

// decodeRecord decodes a record payload.
func decodeRecord(p []byte) (r Record, err error) {
	d := &decoder{b: p}
	extra, err := d.fixed(recordFieldsV1, "record")
	if err != nil {
		return r, err
	}
	if r.Index, err = d.uint(); err != nil {
		return r, err
	}
	off, err := d.int()
	if err != nil {
		return r, err
	}
	r.Offset = time.Duration(off)
	if r.Wall, err = d.time(); err != nil {
		return r, err
	}
	if r.Conn, err = d.uint(); err != nil {
		return r, err
	}
	if r.Exchange, err = d.uint(); err != nil {
		return r, err
	}
	if r.Stream, err = d.str(); err != nil {
		return r, err
	}
	dir, err := d.small(math.MaxUint8)
	if err != nil {
		return r, err
	}
	r.Dir = Direction(dir)
	kind, err := d.small(math.MaxUint8)
	if err != nil {
		return r, err
	}
	r.Kind = Kind(kind)
	if r.Raw, err = d.bin(); err != nil {
		return r, err
	}
	if r.HTTP, err = d.http(); err != nil {
		return r, err
	}
	if r.SSE, err = d.sse(); err != nil {
		return r, err
	}
	if r.RPC, err = d.rpc(); err != nil {
		return r, err
	}
	if r.Note, err = d.str(); err != nil {
		return r, err
	}
	if extra > 0 {
		extra--
		if r.Fault, err = d.fault(); err != nil {
			return r, err
		}
	}
	if extra > 0 {
		extra--
		side, err := d.small(math.MaxUint8)
		if err != nil {
			return r, err
		}
		r.Side = Side(side)
	}
	if extra > 0 {
		extra--
		if r.Oversize, err = d.boolean(); err != nil {
			return r, err
		}
	}
	if extra >= recordFieldsV3-16 {
		extra -= recordFieldsV3 - 16
		end, err := d.small(math.MaxUint8)
		if err != nil {
			return r, err
		}
		r.End = End(end)
		batch, err := d.small(math.MaxUint32)
		if err != nil {
			return r, err
		}
		r.Batch = uint32(batch)
	} else {
		upgrade(&r)
	}
	if err := d.skipN(extra); err != nil {
		return r, err
	}
	return r, d.end()
}

func (d *decoder) http() (*HTTPHead, error) {
	if d.isNil() {
		return nil, nil
	}
	extra, err := d.fixed(httpFields, "http head")
	if err != nil {
		return nil, err
	}
	h := &HTTPHead{}
	if h.Method, err = d.str(); err != nil {
		return nil, err
	}
	if h.URL, err = d.str(); err != nil {
		return nil, err
	}
	if h.Proto, err = d.str(); err != nil {
		return nil, err
	}
	if h.Status, err = d.smallInt(); err != nil {
		return nil, err
	}
	n, err := d.arr()
	if err != nil {
		return nil, err
	}
	for range n {
		var f HeaderField
		if err := d.pair(&f.Name, &f.Value); err != nil {
			return nil, err
		}
		h.Header = append(h.Header, f)
	}
	return h, d.skipN(extra)
}

func (d *decoder) sse() (*SSEFields, error) {
	if d.isNil() {
		return nil, nil
	}
	extra, err := d.fixed(sseFieldsV1, "sse event")
	if err != nil {
		return nil, err
	}
	s := &SSEFields{}
	if s.ID, err = d.str(); err != nil {
		return nil, err
	}
	if s.HasID, err = d.boolean(); err != nil {
		return nil, err
	}
	if s.Event, err = d.str(); err != nil {
		return nil, err
	}
	if s.Data, err = d.str(); err != nil {
		return nil, err
	}
	retry, err := d.int()
	if err != nil {
		return nil, err
	}
	s.Retry = time.Duration(retry)
	if s.HasRetry, err = d.boolean(); err != nil {
		return nil, err
	}
	if extra > 0 {
		extra--
		if s.NoData, err = d.boolean(); err != nil {
			return nil, err
		}
	}
	return s, d.skipN(extra)
}

func (d *decoder) rpc() (*RPCFields, error) {
	if d.isNil() {
		return nil, nil
	}
	extra, err := d.fixed(rpcFields, "rpc fields")
	if err != nil {
		return nil, err
	}
	p := &RPCFields{}
	for _, s := range []*string{&p.Type, &p.Method, &p.ID, &p.TaskID, &p.Status} {
		if *s, err = d.str(); err != nil {
			return nil, err
		}
	}
	n, err := d.arr()
	if err != nil {
		return nil, err
	}
	for range n {
		v, err := d.int()
		if err != nil {
			return nil, err
		}
		p.SeqNrs = append(p.SeqNrs, v)
	}
	if p.Seq, err = d.int(); err != nil {
		return nil, err
	}
	for _, b := range []*bool{&p.HasSeq, &p.IsComplete, &p.HasIsComplete} {
		if *b, err = d.boolean(); err != nil {
			return nil, err
		}
	}
	if p.ErrorCode, err = d.smallInt(); err != nil {
		return nil, err
	}
	return p, d.skipN(extra)
}

// appendPreamble appends the magic and the format version.
func appendPreamble(dst []byte, version int) []byte {
	dst = append(dst, Magic...)
	return binary.BigEndian.AppendUint16(dst, uint16(version))
}
