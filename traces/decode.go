package traces

import (
	"math"
	"time"
)

// decodeHeader decodes a header payload.
func decodeHeader(p []byte) (Header, error) {
	d := &decoder{b: p}
	var h Header
	extra := d.fixed(headerFieldsV1, "header")
	h.FormatVersion = d.small(math.MaxUint16)
	h.Created = d.time()
	h.TasksimVersion = d.str()
	h.Command = d.strs()
	h.Protocol = d.str()
	// Version 1 wrote an int64, version 2 a uint64: a negative value is
	// the two's complement of the same 64 bits.
	h.Seed, _ = d.integer()
	for range d.arr() {
		var l Label
		d.pair(&l.Key, &l.Value)
		if d.err != nil {
			break
		}
		h.Labels = append(h.Labels, l)
	}
	if more(&extra, 1) {
		h.Faults = d.schedule()
	}
	d.skipN(extra)
	d.end()
	return h, d.err
}

// decodeRecord decodes a record payload.
func decodeRecord(p []byte) (Record, error) {
	d := &decoder{b: p}
	var r Record
	extra := d.fixed(recordFieldsV1, "record")
	r.Index = d.uint()
	r.Offset = time.Duration(d.int())
	r.Wall = d.time()
	r.Conn = d.uint()
	r.Exchange = d.uint()
	r.Stream = d.str()
	r.Dir = Direction(d.small(math.MaxUint8))
	r.Kind = Kind(d.small(math.MaxUint8))
	r.Raw = d.bin()
	r.HTTP = d.http()
	r.SSE = d.sse()
	var typed bool // the rpc fields hold result_type
	r.RPC, typed = d.rpc()
	r.Note = d.str()
	if more(&extra, 1) {
		r.Fault = d.fault()
	}
	if more(&extra, 1) {
		r.Side = Side(d.small(math.MaxUint8))
	}
	if more(&extra, 1) {
		r.Oversize = d.boolean()
	}
	v3 := more(&extra, recordFieldsV3-16)
	if v3 {
		r.End = End(d.small(math.MaxUint8))
		r.Batch = uint32(d.small(math.MaxUint32))
	}
	if more(&extra, 1) {
		r.Revision = d.str()
	}
	d.skipN(extra)
	d.end()
	if d.err != nil {
		return r, d.err
	}
	if !v3 {
		upgrade(&r)
	}
	if r.RPC != nil && !typed {
		upgradeResultType(&r)
	}
	return r, nil
}

func (d *decoder) strs() []string {
	var out []string
	for range d.arr() {
		s := d.str()
		if d.err != nil {
			return nil
		}
		out = append(out, s)
	}
	return out
}

func (d *decoder) pair(a, b *string) {
	extra := d.fixed(2, "pair")
	*a = d.str()
	*b = d.str()
	d.skipN(extra)
}

func (d *decoder) schedule() *Schedule {
	if d.isNil() {
		return nil
	}
	extra := d.fixed(scheduleFields, "fault schedule")
	s := &Schedule{}
	s.Specs = d.strs()
	s.Decisions = d.strs()
	s.Note = d.str()
	d.skipN(extra)
	return s
}

func (d *decoder) fault() *Fault {
	if d.isNil() {
		return nil
	}
	extra := d.fixed(faultFieldsV2, "fault")
	f := &Fault{Name: d.str()}
	for range d.arr() {
		var p Param
		d.pair(&p.Key, &p.Value)
		if d.err != nil {
			break
		}
		f.Params = append(f.Params, p)
	}
	d.target(&f.Target)
	f.Action = d.str()
	if more(&extra, faultFields-faultFieldsV2) {
		f.Verb = Verb(d.small(math.MaxUint8))
		f.Delay = time.Duration(d.int())
		status := d.int()
		if status < math.MinInt32 || status > math.MaxInt32 {
			d.failf("fault status %d out of range", status)
		}
		f.Status = int(status)
	}
	d.skipN(extra)
	return f
}

func (d *decoder) target(t *Target) {
	extra := d.fixed(targetFields, "fault target")
	t.Conn = d.uint()
	t.Exchange = d.uint()
	t.Stream = d.str()
	t.EventID = d.str()
	t.HasEventID = d.boolean()
	t.RPCID = d.str()
	t.Method = d.str()
	t.TaskID = d.str()
	t.SeqNr = d.int()
	t.HasSeqNr = d.boolean()
	t.Seq = d.int()
	t.HasSeq = d.boolean()
	t.Record = d.uint()
	t.HasRecord = d.boolean()
	d.skipN(extra)
}

func (d *decoder) http() *HTTPHead {
	if d.isNil() {
		return nil
	}
	extra := d.fixed(httpFields, "http head")
	h := &HTTPHead{}
	h.Method = d.str()
	h.URL = d.str()
	h.Proto = d.str()
	h.Status = d.smallInt()
	for range d.arr() {
		var f HeaderField
		d.pair(&f.Name, &f.Value)
		if d.err != nil {
			break
		}
		h.Header = append(h.Header, f)
	}
	d.skipN(extra)
	return h
}

func (d *decoder) sse() *SSEFields {
	if d.isNil() {
		return nil
	}
	extra := d.fixed(sseFieldsV1, "sse event")
	s := &SSEFields{}
	s.ID = d.str()
	s.HasID = d.boolean()
	s.Event = d.str()
	s.Data = d.str()
	s.Retry = time.Duration(d.int())
	s.HasRetry = d.boolean()
	if more(&extra, 1) {
		s.NoData = d.boolean()
	}
	d.skipN(extra)
	return s
}

// rpc reads the rpc fields, and whether they hold result_type: records
// written before it was added do not.
func (d *decoder) rpc() (*RPCFields, bool) {
	if d.isNil() {
		return nil, false
	}
	extra := d.fixed(rpcFieldsV1, "rpc fields")
	p := &RPCFields{}
	p.Type = d.str()
	p.Method = d.str()
	p.ID = d.str()
	p.TaskID = d.str()
	p.Status = d.str()
	for range d.arr() {
		v := d.int()
		if d.err != nil {
			break
		}
		p.SeqNrs = append(p.SeqNrs, v)
	}
	p.Seq = d.int()
	p.HasSeq = d.boolean()
	p.IsComplete = d.boolean()
	p.HasIsComplete = d.boolean()
	p.ErrorCode = d.smallInt()
	typed := more(&extra, 1)
	if typed {
		p.ResultType = d.str()
	}
	d.skipN(extra)
	return p, typed
}
