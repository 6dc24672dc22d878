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
)

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
		Stream: j.Stream, Note: j.Note, Oversize: j.Oversize, Batch: j.Batch, Revision: j.Revision}
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
	if r.Raw, err = rawFromJSON(j); err != nil {
		return r, err
	}
	r.HTTP = httpFromJSON(j.HTTP)
	if r.SSE, err = sseFromJSON(j.SSE); err != nil {
		return r, err
	}
	r.RPC = rpcFromJSON(j.RPC)
	if r.RPC != nil && r.RPC.ResultType == "" {
		upgradeResultType(&r) // an export from before resultType, or one left out
	}
	if j.Fault != nil {
		if r.Fault, err = faultFromJSON(j.Fault); err != nil {
			return r, err
		}
	}
	if r.Side, ok = ParseSide(j.Side); !ok {
		return r, fmt.Errorf("side %q: want client, server or wire", j.Side)
	}
	if r.End, ok = ParseEnd(j.End); !ok {
		return r, fmt.Errorf("end %q: want eof, client, server, stopped or error", j.End)
	}
	return r, nil
}

// rawFromJSON reads a record's bytes from raw (text) or rawB64 (any
// bytes); an empty one is none.
func rawFromJSON(j *jsonlRecord) ([]byte, error) {
	switch {
	case j.Raw != nil && j.RawB64 != nil:
		return nil, errors.New("both raw and raw_b64")
	case j.Raw != nil && *j.Raw != "":
		return []byte(*j.Raw), nil
	case len(j.RawB64) > 0:
		return j.RawB64, nil
	}
	return nil, nil
}

func httpFromJSON(h *jsonlHTTP) *HTTPHead {
	if h == nil {
		return nil
	}
	out := &HTTPHead{Method: h.Method, URL: h.URL, Proto: h.Proto, Status: h.Status}
	for _, f := range h.Header {
		out.Header = append(out.Header, HeaderField{Name: f[0], Value: f[1]})
	}
	return out
}

func sseFromJSON(s *jsonlSSE) (*SSEFields, error) {
	if s == nil {
		return nil, nil
	}
	out := &SSEFields{Event: s.Event, Data: s.Data, NoData: s.NoData}
	if s.ID != nil {
		out.ID, out.HasID = *s.ID, true
	}
	if s.RetryMS != nil {
		// Checked in milliseconds before conversion, which would
		// overflow into a negative duration.
		if *s.RetryMS < 0 || *s.RetryMS > int64(math.MaxInt64/time.Millisecond) {
			return nil, fmt.Errorf("sse retryMs %d: want 0 to %d", *s.RetryMS, int64(math.MaxInt64/time.Millisecond))
		}
		out.Retry, out.HasRetry = time.Duration(*s.RetryMS)*time.Millisecond, true
	}
	return out, nil
}

func rpcFromJSON(p *jsonlRPC) *RPCFields {
	if p == nil {
		return nil
	}
	out := &RPCFields{Type: p.Type, Method: p.Method, ID: p.ID, TaskID: p.TaskID, Status: p.Status,
		SeqNrs: p.SeqNrs, ErrorCode: p.ErrorCode, ResultType: p.ResultType}
	if p.Seq != nil {
		out.Seq, out.HasSeq = *p.Seq, true
	}
	if p.IsComplete != nil {
		out.IsComplete, out.HasIsComplete = *p.IsComplete, true
	}
	return out
}
