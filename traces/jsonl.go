package traces

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"regexp"
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
			SeqNrs: p.SeqNrs, ErrorCode: p.ErrorCode}
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

func faultFromJSON(j *jsonlFault) (*Fault, error) {
	f := &Fault{Name: j.Name, Action: j.Action, Delay: time.Duration(j.Delay), Status: j.Status}
	var ok bool
	if f.Verb, ok = ParseVerb(j.Verb); !ok {
		return nil, fmt.Errorf("fault verb %q: want drop, delay, cut-after, ...", j.Verb)
	}
	for _, p := range j.Params {
		f.Params = append(f.Params, Param{Key: p[0], Value: p[1]})
	}
	jt := j.Target
	t := Target{Conn: jt.Conn, Exchange: jt.Exchange, Stream: jt.Stream, RPCID: jt.ID, Method: jt.Method, TaskID: jt.TaskID}
	if jt.EventID != nil {
		t.EventID, t.HasEventID = *jt.EventID, true
	}
	if jt.SeqNr != nil {
		t.SeqNr, t.HasSeqNr = *jt.SeqNr, true
	}
	if jt.Seq != nil {
		t.Seq, t.HasSeq = *jt.Seq, true
	}
	if jt.Record != nil {
		t.Record, t.HasRecord = *jt.Record, true
	}
	f.Target = t
	return f, nil
}

// MaxJSONLLine caps one line of a JSONL trace.
const MaxJSONLLine = 8 * MaxRecordSize

// LineError is a bad line of a JSONL trace.
type LineError struct {
	Line int
	Err  error
}

func (e *LineError) Error() string { return fmt.Sprintf("JSONL line %d: %v", e.Line, e.Err) }
func (e *LineError) Unwrap() error { return e.Err }

// JSONLReader reads a trace in its JSONL form (a hand-edited export,
// say). It is a Source. The header line is optional; record indexes are
// not checked (a Writer numbers records again).
type JSONLReader struct {
	sc      *bufio.Scanner
	line    int
	header  Header
	pending []byte
	err     error
}

// NewJSONLReader reads the header line, if the input starts with one.
func NewJSONLReader(in io.Reader) (*JSONLReader, error) {
	j := &JSONLReader{sc: bufio.NewScanner(in)}
	j.sc.Buffer(make([]byte, 0, 64<<10), MaxJSONLLine)
	line, err := j.nextLine()
	if err == io.EOF {
		j.err = io.EOF
		return j, nil
	}
	if err != nil {
		return nil, err
	}
	var probe map[string]json.RawMessage
	json.Unmarshal(line, &probe)
	if _, ok := probe["header"]; !ok {
		j.pending = line
		return j, nil
	}
	var hl jsonlHeaderLine
	if err := strictUnmarshal(line, &hl); err != nil || hl.Header == nil {
		if err == nil {
			err = errors.New("header is null")
		}
		return nil, &LineError{Line: j.line, Err: err}
	}
	if j.header, err = headerFromJSON(hl.Header); err != nil {
		return nil, &LineError{Line: j.line, Err: err}
	}
	return j, nil
}

// Header returns the header line's header (zero without one).
func (j *JSONLReader) Header() Header { return j.header }

// Next returns the next record, io.EOF at the end, a *LineError for a
// line that is not a record.
func (j *JSONLReader) Next() (Record, error) {
	if j.err != nil {
		return Record{}, j.err
	}
	line := j.pending
	j.pending = nil
	if line == nil {
		var err error
		if line, err = j.nextLine(); err != nil {
			j.err = err
			return Record{}, err
		}
	}
	var jr jsonlRecord
	if err := strictUnmarshal(line, &jr); err != nil {
		j.err = &LineError{Line: j.line, Err: err}
		return Record{}, j.err
	}
	rec, err := recordFromJSON(&jr)
	if err != nil {
		j.err = &LineError{Line: j.line, Err: err}
		return Record{}, j.err
	}
	if j.header.FormatVersion < 3 {
		// An export of an older trace (or without a header line): its
		// typed fields are in its text.
		upgrade(&rec)
	}
	return rec, nil
}

func (j *JSONLReader) nextLine() ([]byte, error) {
	for j.sc.Scan() {
		j.line++
		line := bytes.TrimSpace(j.sc.Bytes())
		if len(line) > 0 {
			return bytes.Clone(line), nil
		}
	}
	if err := j.sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return nil, &LineError{Line: j.line + 1, Err: fmt.Errorf("longer than %d bytes", MaxJSONLLine)}
		}
		return nil, fmt.Errorf("read JSONL: %w", err)
	}
	return nil, io.EOF
}

// legacyKey matches a snake_case key of JSONL exports written before the
// keys became camelCase. A key is only ever a quoted name followed by a
// colon; inside a JSON string every quote is escaped, so string values
// (raw messages, SSE data) never match.
var legacyKey = regexp.MustCompile(`"(format_version|tasksim_version|offset_ns|raw_b64|event_id|task_id|seq_nrs|seq_nr|retry_ms|is_complete|error_code)"(\s*):`)

// legacyKeys maps the old keys to the current ones.
var legacyKeys = map[string]string{
	"format_version": "formatVersion", "tasksim_version": "tasksimVersion", "offset_ns": "offsetNs", "raw_b64": "rawB64",
	"event_id": "eventId", "task_id": "taskId", "seq_nrs": "seqNrs", "seq_nr": "seqNr", "retry_ms": "retryMs",
	"is_complete": "isComplete", "error_code": "errorCode",
}

// currentKeys rewrites the snake_case keys of an old export's line.
func currentKeys(line []byte) []byte {
	if bytes.IndexByte(line, '_') < 0 {
		return line
	}
	return legacyKey.ReplaceAllFunc(line, func(k []byte) []byte {
		m := legacyKey.FindSubmatch(k)
		return []byte(`"` + legacyKeys[string(m[1])] + `"` + string(m[2]) + `:`)
	})
}

func strictUnmarshal(b []byte, v any) error {
	b = currentKeys(b)
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if dec.More() {
		return errors.New("more than one JSON value on the line")
	}
	return nil
}

func parseWall(s string) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	t, err := time.Parse(wallLayout, s)
	if err != nil {
		return t, err
	}
	if t.Year() < 1678 || t.Year() > 2261 {
		return t, fmt.Errorf("time %s is outside the years 1678-2261 a trace can hold", s)
	}
	return t.UTC(), nil
}

func headerFromJSON(j *jsonlHeader) (Header, error) {
	h := Header{FormatVersion: j.FormatVersion, TasksimVersion: j.TasksimVersion, Protocol: j.Protocol, Seed: uint64(j.Seed)}
	if len(j.Command) > 0 {
		h.Command = j.Command
	}
	if f := j.Faults; f != nil {
		h.Faults = &Schedule{Note: f.Note}
		if len(f.Specs) > 0 {
			h.Faults.Specs = f.Specs
		}
		if len(f.Decisions) > 0 {
			h.Faults.Decisions = f.Decisions
		}
	}
	var err error
	if h.Created, err = parseWall(j.Created); err != nil {
		return h, fmt.Errorf("header created: %w", err)
	}
	for _, l := range j.Labels {
		h.Labels = append(h.Labels, Label{Key: l[0], Value: l[1]})
	}
	return h, nil
}

func recordFromJSON(j *jsonlRecord) (Record, error) {
	r := Record{Index: j.Index, Offset: time.Duration(j.OffsetNS), Conn: j.Conn, Exchange: j.Exchange,
		Stream: j.Stream, Note: j.Note}
	var err error
	if r.Wall, err = parseWall(j.Wall); err != nil {
		return r, fmt.Errorf("wall: %w", err)
	}
	var ok bool
	if r.Dir, ok = ParseDirection(j.Dir); !ok {
		return r, fmt.Errorf("dir %q: want c>s, s>c or -", j.Dir)
	}
	if r.Kind, ok = ParseKind(j.Kind); !ok {
		return r, fmt.Errorf("unknown kind %q", j.Kind)
	}
	switch {
	case j.Raw != nil && j.RawB64 != nil:
		return r, errors.New("both raw and raw_b64")
	case j.Raw != nil && *j.Raw != "":
		r.Raw = []byte(*j.Raw)
	case len(j.RawB64) > 0:
		r.Raw = j.RawB64
	}
	if h := j.HTTP; h != nil {
		r.HTTP = &HTTPHead{Method: h.Method, URL: h.URL, Proto: h.Proto, Status: h.Status}
		for _, f := range h.Header {
			r.HTTP.Header = append(r.HTTP.Header, HeaderField{Name: f[0], Value: f[1]})
		}
	}
	if s := j.SSE; s != nil {
		r.SSE = &SSEFields{Event: s.Event, Data: s.Data, NoData: s.NoData}
		if s.ID != nil {
			r.SSE.ID, r.SSE.HasID = *s.ID, true
		}
		if s.RetryMS != nil {
			// Checked in milliseconds before conversion, which would
			// overflow into a negative duration.
			if *s.RetryMS < 0 || *s.RetryMS > int64(math.MaxInt64/time.Millisecond) {
				return r, fmt.Errorf("sse retryMs %d: want 0 to %d", *s.RetryMS, int64(math.MaxInt64/time.Millisecond))
			}
			r.SSE.Retry, r.SSE.HasRetry = time.Duration(*s.RetryMS)*time.Millisecond, true
		}
	}
	if p := j.RPC; p != nil {
		r.RPC = &RPCFields{Type: p.Type, Method: p.Method, ID: p.ID, TaskID: p.TaskID, Status: p.Status,
			SeqNrs: p.SeqNrs, ErrorCode: p.ErrorCode}
		if p.Seq != nil {
			r.RPC.Seq, r.RPC.HasSeq = *p.Seq, true
		}
		if p.IsComplete != nil {
			r.RPC.IsComplete, r.RPC.HasIsComplete = *p.IsComplete, true
		}
	}
	if j.Fault != nil {
		if r.Fault, err = faultFromJSON(j.Fault); err != nil {
			return r, err
		}
	}
	if r.Side, ok = ParseSide(j.Side); !ok {
		return r, fmt.Errorf("side %q: want client, server or wire", j.Side)
	}
	r.Oversize = j.Oversize
	if r.End, ok = ParseEnd(j.End); !ok {
		return r, fmt.Errorf("end %q: want eof, client, server, stopped or error", j.End)
	}
	r.Batch = j.Batch
	return r, nil
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
