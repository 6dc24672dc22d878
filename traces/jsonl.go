package traces

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"time"
	"unicode/utf8"
)

// The JSONL form of a trace: a header line {"header":{...}}, then one
// record a line. Field names are stable (docs/trace-format.md) and
// camelCase, like the protocol's own and every other JSON tasksim writes;
// empty optional fields are left out. Exports written before the move
// used snake_case keys (offset_ns, task_id, ...): the reader still reads
// them (legacyKeys), and committed fixtures hold them.

type jsonlHeaderLine struct {
	Header *jsonlHeader `json:"header"`
}

type jsonlHeader struct {
	FormatVersion  int            `json:"formatVersion"`
	Created        string         `json:"created,omitempty"`
	TasksimVersion string         `json:"tasksimVersion"`
	Command        []string       `json:"command"`
	Protocol       string         `json:"protocol"`
	Seed           jsonSeed       `json:"seed"`
	Labels         [][2]string    `json:"labels"`
	Faults         *jsonlSchedule `json:"faults,omitempty"`
}

// jsonSeed is a uint64 that also reads the negative seeds of exports of
// format version 1 (an int64 then), as their two's complement.
type jsonSeed uint64

func (s *jsonSeed) UnmarshalJSON(b []byte) error {
	var u uint64
	if err := json.Unmarshal(b, &u); err == nil {
		*s = jsonSeed(u)
		return nil
	}
	var i int64
	if err := json.Unmarshal(b, &i); err != nil {
		return fmt.Errorf("seed %s: want an integer that fits 64 bits", b)
	}
	*s = jsonSeed(uint64(i))
	return nil
}

type jsonlSchedule struct {
	Specs     []string `json:"specs"`
	Decisions []string `json:"decisions"`
	Note      string   `json:"note,omitempty"`
}

type jsonlFault struct {
	Name   string      `json:"name"`
	Params [][2]string `json:"params"`
	Target jsonlTarget `json:"target"`
	Action string      `json:"action,omitempty"`
	Verb   string      `json:"verb,omitempty"`
	Delay  int64       `json:"delayNs,omitempty"`
	Status int         `json:"status,omitempty"`
}

type jsonlTarget struct {
	Conn     uint64  `json:"conn,omitempty"`
	Exchange uint64  `json:"exchange,omitempty"`
	Stream   string  `json:"stream,omitempty"`
	EventID  *string `json:"eventId,omitempty"`
	ID       string  `json:"id,omitempty"`
	Method   string  `json:"method,omitempty"`
	TaskID   string  `json:"taskId,omitempty"`
	SeqNr    *int64  `json:"seqNr,omitempty"`
	Seq      *int64  `json:"seq,omitempty"`
	Record   *uint64 `json:"record,omitempty"`
}

type jsonlRecord struct {
	Index    uint64      `json:"index"`
	OffsetNS int64       `json:"offsetNs"`
	Wall     string      `json:"wall,omitempty"`
	Conn     uint64      `json:"conn"`
	Exchange uint64      `json:"exchange"`
	Stream   string      `json:"stream"`
	Dir      string      `json:"dir"`
	Kind     string      `json:"kind"`
	Raw      *string     `json:"raw,omitempty"`
	RawB64   []byte      `json:"rawB64,omitempty"`
	HTTP     *jsonlHTTP  `json:"http,omitempty"`
	SSE      *jsonlSSE   `json:"sse,omitempty"`
	RPC      *jsonlRPC   `json:"rpc,omitempty"`
	Note     string      `json:"note,omitempty"`
	Fault    *jsonlFault `json:"fault,omitempty"`
	Side     string      `json:"side,omitempty"`
	Oversize bool        `json:"oversize,omitempty"`
	End      string      `json:"end,omitempty"`
	Batch    uint32      `json:"batch,omitempty"`
	Revision string      `json:"revision,omitempty"`
}

type jsonlHTTP struct {
	Method string      `json:"method,omitempty"`
	URL    string      `json:"url,omitempty"`
	Proto  string      `json:"proto,omitempty"`
	Status int         `json:"status,omitempty"`
	Header [][2]string `json:"header"`
}

type jsonlSSE struct {
	ID      *string `json:"id,omitempty"`
	Event   string  `json:"event,omitempty"`
	Data    string  `json:"data"`
	RetryMS *int64  `json:"retryMs,omitempty"`
	NoData  bool    `json:"noData,omitempty"`
}

type jsonlRPC struct {
	Type       string  `json:"type"`
	Method     string  `json:"method,omitempty"`
	ID         string  `json:"id,omitempty"`
	TaskID     string  `json:"taskId,omitempty"`
	Status     string  `json:"status,omitempty"`
	SeqNrs     []int64 `json:"seqNrs,omitempty"`
	Seq        *int64  `json:"seq,omitempty"`
	IsComplete *bool   `json:"isComplete,omitempty"`
	ErrorCode  int     `json:"errorCode,omitempty"`
	ResultType string  `json:"resultType,omitempty"`
}

const wallLayout = time.RFC3339Nano

// WriteJSONL writes h and the records of src as JSON lines. It stops at
// the first error of src and returns it.
func WriteJSONL(w io.Writer, h Header, src Source) error {
	bw := bufio.NewWriter(w)
	enc := json.NewEncoder(bw)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(jsonlHeaderLine{Header: headerJSON(h)}); err != nil {
		return fmt.Errorf("write JSONL: %w", err)
	}
	for rec, err := range All(src) {
		if err != nil {
			if ferr := bw.Flush(); ferr != nil {
				return fmt.Errorf("write JSONL: %w", ferr)
			}
			return err
		}
		if err := enc.Encode(RecordJSON(rec)); err != nil {
			return fmt.Errorf("write JSONL: %w", err)
		}
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("write JSONL: %w", err)
	}
	return nil
}

func headerJSON(h Header) *jsonlHeader {
	j := &jsonlHeader{
		FormatVersion:  h.FormatVersion,
		TasksimVersion: h.TasksimVersion,
		Command:        h.Command,
		Protocol:       h.Protocol,
		Seed:           jsonSeed(h.Seed),
		Labels:         [][2]string{},
	}
	if f := h.Faults; f != nil {
		j.Faults = &jsonlSchedule{Specs: f.Specs, Decisions: f.Decisions, Note: f.Note}
		if j.Faults.Specs == nil {
			j.Faults.Specs = []string{}
		}
		if j.Faults.Decisions == nil {
			j.Faults.Decisions = []string{}
		}
	}
	if j.Command == nil {
		j.Command = []string{}
	}
	if !h.Created.IsZero() {
		j.Created = h.Created.UTC().Format(wallLayout)
	}
	for _, l := range h.Labels {
		j.Labels = append(j.Labels, [2]string{l.Key, l.Value})
	}
	return j
}

// HeaderJSON returns the JSON form of a header, as in the JSONL export.
func HeaderJSON(h Header) any { return headerJSON(h) }

// RecordJSON returns the JSON form of a record, as one line of the JSONL
// export has it.
func RecordJSON(r Record) any { return recordJSON(r) }

func recordJSON(r Record) *jsonlRecord {
	j := &jsonlRecord{
		Index: r.Index, OffsetNS: int64(r.Offset), Conn: r.Conn, Exchange: r.Exchange,
		Stream: r.Stream, Dir: r.Dir.String(), Kind: r.Kind.String(), Note: r.Note,
	}
	if !r.Wall.IsZero() {
		j.Wall = r.Wall.UTC().Format(wallLayout)
	}
	if len(r.Raw) > 0 {
		if utf8.Valid(r.Raw) {
			s := string(r.Raw)
			j.Raw = &s
		} else {
			j.RawB64 = r.Raw
		}
	}
	if h := r.HTTP; h != nil {
		jh := &jsonlHTTP{Method: h.Method, URL: h.URL, Proto: h.Proto, Status: h.Status, Header: [][2]string{}}
		for _, f := range h.Header {
			jh.Header = append(jh.Header, [2]string{f.Name, f.Value})
		}
		j.HTTP = jh
	}
	if s := r.SSE; s != nil {
		js := &jsonlSSE{Event: s.Event, Data: s.Data, NoData: s.NoData}
		if s.HasID {
			id := s.ID
			js.ID = &id
		}
		if s.HasRetry {
			ms := s.Retry.Milliseconds()
			js.RetryMS = &ms
		}
		j.SSE = js
	}
	if p := r.RPC; p != nil {
		jp := &jsonlRPC{Type: p.Type, Method: p.Method, ID: p.ID, TaskID: p.TaskID, Status: p.Status,
			SeqNrs: p.SeqNrs, ErrorCode: p.ErrorCode, ResultType: p.ResultType}
		if p.HasSeq {
			seq := p.Seq
			jp.Seq = &seq
		}
		if p.HasIsComplete {
			c := p.IsComplete
			jp.IsComplete = &c
		}
		j.RPC = jp
	}
	if f := r.Fault; f != nil {
		j.Fault = faultJSON(f)
	}
	if r.Side != SideWire {
		j.Side = r.Side.String()
	}
	j.Oversize = r.Oversize
	j.End = r.End.String()
	j.Batch = r.Batch
	j.Revision = r.Revision
	return j
}

func faultJSON(f *Fault) *jsonlFault {
	jf := &jsonlFault{Name: f.Name, Params: [][2]string{}, Action: f.Action, Verb: f.Verb.String(), Delay: int64(f.Delay), Status: f.Status}
	for _, p := range f.Params {
		jf.Params = append(jf.Params, [2]string{p.Key, p.Value})
	}
	t := f.Target
	jt := jsonlTarget{Conn: t.Conn, Exchange: t.Exchange, Stream: t.Stream, ID: t.RPCID, Method: t.Method, TaskID: t.TaskID}
	if t.HasEventID {
		jt.EventID = &t.EventID
	}
	if t.HasSeqNr {
		jt.SeqNr = &t.SeqNr
	}
	if t.HasSeq {
		jt.Seq = &t.Seq
	}
	if t.HasRecord {
		jt.Record = &t.Record
	}
	jf.Target = jt
	return jf
}

// Copy writes the records of src to w and returns how many it wrote. It
// stops at the first error (io.EOF from src is the end, not an error).
func Copy(w *Writer, src Source) (uint64, error) {
	var n uint64
	for rec, err := range All(src) {
		if err != nil {
			return n, err
		}
		if err := w.Write(rec); err != nil {
			return n, err
		}
		n++
	}
	return n, nil
}
