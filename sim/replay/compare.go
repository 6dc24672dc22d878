package replay

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	rev "github.com/tasksim/tasksim/mcp/rev20260728"
	"github.com/tasksim/tasksim/traces"
)

// Divergence is the first place where the live conversation differs from
// the recorded one.
type Divergence struct {
	// Record is the index of the recorded record that the live side did
	// not match, in the replayed trace.
	Record uint64 `json:"record"`
	// Stream is that record's stream (post:3, get:5, stdout).
	Stream string `json:"stream"`
	// Message names the recorded message: its JSON-RPC method or the
	// request it answers, its id, its task.
	Message string `json:"message"`
	// Path is the JSON path of the first differing value ("" when the
	// difference is not inside a message: a status code, a missing
	// message, a stream that ended early).
	Path string `json:"path,omitempty"`
	// Reason says what differs, in one line.
	Reason string `json:"reason"`
	// Recorded and Live are both sides: the messages, or what stood in
	// their place ("HTTP 200", "nothing within 5s", "end of stream").
	Recorded string `json:"recorded"`
	Live     string `json:"live"`
}

// String is the report: the message, where it differs, both sides.
func (d *Divergence) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "first divergence at record %d (%s, %s): ", d.Record, d.Stream, d.Message)
	if d.Path != "" {
		b.WriteString(d.Path + ": ")
	}
	b.WriteString(d.Reason + "\n")
	fmt.Fprintf(&b, "  recorded: %s\n", abbreviate(d.Recorded, 400))
	fmt.Fprintf(&b, "  live:     %s\n", abbreviate(d.Live, 400))
	return b.String()
}

func abbreviate(s string, n int) string {
	s = strings.TrimSpace(s)
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// describeRecord names a recorded message for a report: "answer to
// tools/call id 2, task t1" or "notifications/tasks/status, task t1".
func describeRecord(rec traces.Record, method func(id string) string) string {
	switch rec.Kind {
	case traces.KindResponseHead:
		return "response head"
	case traces.KindBodyEnd:
		return "end of stream"
	}
	rpc := rec.RPC
	if rpc == nil {
		rpc = traces.DescribeMessage(messageBytes(rec))
	}
	if rpc == nil {
		if rec.Kind == traces.KindSSEEvent {
			return "SSE event without a message"
		}
		return rec.Kind.String()
	}
	var s string
	switch rpc.Type {
	case "response":
		s = "answer to "
		if m := method(rpc.ID); m != "" {
			s += m + " "
		}
		s += "id " + rpc.ID
	case "":
		s = rec.Kind.String()
	default:
		s = rpc.Method
		if rpc.ID != "" {
			s += " id " + rpc.ID
		}
	}
	if rpc.TaskID != "" {
		s += ", task " + rpc.TaskID
	}
	return s
}

// messageBytes is the JSON-RPC text of a recorded item: an SSE event's
// data, a message's or a line's raw bytes.
func messageBytes(rec traces.Record) []byte {
	if rec.Kind == traces.KindSSEEvent {
		if rec.SSE == nil {
			return nil
		}
		return []byte(rec.SSE.Data)
	}
	return rec.Raw
}

// idMap maps what a replay declares variable, recorded value to live
// value: task ids, session ids, SSE event ids, request states. Safe for
// concurrent use.
type idMap struct {
	mu      sync.Mutex
	task    map[string]string
	session map[string]string
	event   map[string]string
	request map[string]string // JSON-RPC request ids (a client replay)
	state   map[string]string // MCP 2026-07-28 requestState values
}

func newIDMap() *idMap {
	return &idMap{task: map[string]string{}, session: map[string]string{}, event: map[string]string{},
		request: map[string]string{}, state: map[string]string{}}
}

func (m *idMap) bind(table map[string]string, rec, live string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := table[rec]; !ok {
		table[rec] = live
	}
}

func (m *idMap) lookup(table map[string]string, rec string) (string, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	v, ok := table[rec]
	return v, ok
}

// rebind binds a recorded value to the live value seen last: a
// requestState is valid for the retry that follows the answer carrying
// it, whatever the server minted for it before.
func (m *idMap) rebind(table map[string]string, rec, live string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	table[rec] = live
}

// liveString is the live value of a recorded string that a request
// carries: a task id's or a requestState's; ok is false for any other.
func (m *idMap) liveString(rec string) (string, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if live, ok := m.task[rec]; ok {
		return live, live != rec
	}
	live, ok := m.state[rec]
	return live, ok && live != rec
}

// rewriteRequest replaces every JSON string in body that is a recorded
// task id or requestState by its live value, leaving every other byte as
// it was. The strings are compared decoded, so that an escape the
// recorded client chose cannot hide one; a body that is not JSON has its
// JSON-quoted values replaced as bytes.
func (m *idMap) rewriteRequest(body []byte) []byte {
	out, err := rewriteStrings(body, m.liveString)
	if err != nil {
		return m.rewriteBytes(body)
	}
	return out
}

// rewriteStrings returns body with each JSON string value or member
// name s for which live(s) is ok replaced by the JSON string of its live
// value; an error when body is not one JSON value.
func rewriteStrings(body []byte, live func(string) (string, bool)) ([]byte, error) {
	d := json.NewDecoder(bytes.NewReader(body))
	d.UseNumber()
	var out []byte
	copied, prev := 0, 0
	for {
		tok, err := d.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		end := int(d.InputOffset())
		s, isString := tok.(string)
		if l, ok := live(s); isString && ok {
			// Between the previous token and this one there is only
			// white space and a ',' or ':': the string starts at its
			// first quote.
			start := prev + bytes.IndexByte(body[prev:end], '"')
			out = append(out, body[copied:start]...)
			out = appendJSONString(out, l)
			copied = end
		}
		prev = end
	}
	if copied == 0 {
		return body, nil
	}
	return append(out, body[copied:]...), nil
}

// appendJSONString appends s as a JSON string, without the HTML escapes
// encoding/json adds by default.
func appendJSONString(b []byte, s string) []byte {
	var buf bytes.Buffer
	e := json.NewEncoder(&buf)
	e.SetEscapeHTML(false)
	_ = e.Encode(s) // a string always encodes
	return append(b, bytes.TrimSuffix(buf.Bytes(), []byte("\n"))...)
}

// rewriteBytes replaces the JSON-quoted recorded task ids and
// requestStates in body by their live values, as bytes.
func (m *idMap) rewriteBytes(body []byte) []byte {
	m.mu.Lock()
	pairs := make([][2]string, 0, len(m.task)+len(m.state))
	for _, table := range []map[string]string{m.task, m.state} {
		for rec, live := range table {
			if rec != live {
				pairs = append(pairs, [2]string{rec, live})
			}
		}
	}
	m.mu.Unlock()
	// Longest first, so that an id that is a prefix of another cannot
	// take its place.
	slices.SortFunc(pairs, func(a, b [2]string) int { return len(b[0]) - len(a[0]) })
	for _, p := range pairs {
		rq, _ := json.Marshal(p[0])
		lq, _ := json.Marshal(p[1])
		body = bytes.ReplaceAll(body, rq, lq)
	}
	return body
}

// headerTask maps the task id an Mcp-Name header carries (MCP
// 2026-07-28: tasks/get, tasks/update and tasks/cancel name their task
// there, ext-tasks "Mcp-Name"), as sent (plain or Base64-encoded), to the
// live id, encoded as a client must (2026-07-28 Streamable HTTP, "Value
// Encoding"). The body's params.taskId is mapped by rewriteRequest; the
// server checks that the two agree. Any other value is kept as sent.
func (m *idMap) headerTask(v string) string {
	rec, err := rev.DecodeHeaderValue(v)
	if err != nil {
		return v
	}
	if live, ok := m.lookup(m.task, rec); ok && live != rec {
		return rev.EncodeHeaderValue(live)
	}
	return v
}

// variableKeys are members whose values differ from run to run by
// design: timestamps, which compare equal when both sides hold one (any
// string that reads as an RFC 3339 time does). Task ids are mapped
// instead (taskId).
var variableKeys = map[string]bool{"createdAt": true, "lastUpdatedAt": true}

// nonTerminal are the task statuses that timing decides between: a
// status read while a task runs may be either, and compares equal to the
// other (a terminal status must match exactly).
var nonTerminal = map[string]bool{"working": true, "input_required": true}

// difference is where two messages differ.
type difference struct{ path, reason string }

// compareJSON compares a recorded message with a live one structurally:
// same members, same values, except that timestamps may differ and task
// ids must map one to one (a recorded id seen first binds its live id).
// Members are compared in name order, array elements in order. It
// returns nil when they agree.
func (m *idMap) compareJSON(rec, live []byte) *difference {
	rv, rerr := decodeAny(rec)
	lv, lerr := decodeAny(live)
	switch {
	case rerr != nil && lerr != nil:
		if bytes.Equal(bytes.TrimSpace(rec), bytes.TrimSpace(live)) {
			return nil
		}
		return &difference{reason: "the bytes differ (neither is JSON)"}
	case rerr != nil || lerr != nil:
		return &difference{reason: "one side is not JSON"}
	}
	return m.compareValue("$", "", rv, lv)
}

func decodeAny(b []byte) (any, error) {
	if len(bytes.TrimSpace(b)) == 0 {
		return nil, fmt.Errorf("empty")
	}
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return nil, err
	}
	return v, nil
}

// compareValue compares one recorded value with its live counterpart at
// path; key is the member that holds it ("" in an array or at the top),
// which says whether it is a time, a status or a task id.
func (m *idMap) compareValue(path, key string, rec, live any) *difference {
	switch r := rec.(type) {
	case map[string]any:
		return m.compareObject(path, r, live)
	case []any:
		return m.compareArray(path, key, r, live)
	case string:
		return m.compareString(path, key, r, live)
	default:
		return compareLiteral(path, key, rec, live)
	}
}

// compareObject compares two objects member by member, in name order; a
// member on one side only is a difference.
func (m *idMap) compareObject(path string, r map[string]any, live any) *difference {
	l, ok := live.(map[string]any)
	if !ok {
		return &difference{path, fmt.Sprintf("recorded an object, live %s", typeName(live))}
	}
	keys := make([]string, 0, len(r)+len(l))
	for k := range r {
		keys = append(keys, k)
	}
	for k := range l {
		if _, ok := r[k]; !ok {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	for _, k := range keys {
		p := path + "." + k
		rv, rok := r[k]
		lv, lok := l[k]
		switch {
		case !lok:
			return &difference{p, "recorded " + short(rv) + ", live has no " + k}
		case !rok:
			return &difference{p, "live " + short(lv) + ", recorded has no " + k}
		}
		if d := m.compareValue(p, k, rv, lv); d != nil {
			return d
		}
	}
	return nil
}

// compareArray compares two arrays element by element, then their
// lengths.
func (m *idMap) compareArray(path, key string, r []any, live any) *difference {
	l, ok := live.([]any)
	if !ok {
		return &difference{path, fmt.Sprintf("recorded an array, live %s", typeName(live))}
	}
	for i := range min(len(r), len(l)) {
		if d := m.compareValue(path+"["+strconv.Itoa(i)+"]", key, r[i], l[i]); d != nil {
			return d
		}
	}
	if len(r) != len(l) {
		return &difference{path, fmt.Sprintf("recorded %d elements, live %d", len(r), len(l))}
	}
	return nil
}

// compareString compares two strings: two times agree, two non-terminal
// statuses agree, a task id must map one to one, any other string must
// be the same.
func (m *idMap) compareString(path, key, r string, live any) *difference {
	l, ok := live.(string)
	if !ok {
		return &difference{path, fmt.Sprintf("recorded %s, live %s", short(r), short(live))}
	}
	if isTimestamp(r) && isTimestamp(l) {
		return nil
	}
	if key == "status" && nonTerminal[r] && nonTerminal[l] {
		return nil
	}
	if key == "requestState" {
		// Opaque, and sealed by the server that minted it (2026-07-28
		// Multi Round-Trip Requests, "Server Requirements" 4): any string
		// on both sides; the live one replaces the recorded one in the
		// retry that echoes it.
		m.rebind(m.state, r, l)
		return nil
	}
	if variableKeys[key] && r != l {
		return &difference{path, fmt.Sprintf("recorded %s, live %s (a time may differ, but both must be times)", short(r), short(live))}
	}
	if mapped, known := m.lookup(m.task, r); key == "taskId" || known {
		return m.compareTask(path, r, l, mapped, known)
	}
	if r != l {
		return &difference{path, fmt.Sprintf("recorded %s, live %s", short(r), short(live))}
	}
	return nil
}

// compareTask compares a recorded task id r with live id l: a recorded
// id not seen before binds l; one seen before must map to l.
func (m *idMap) compareTask(path, r, l, mapped string, known bool) *difference {
	if !known {
		m.bind(m.task, r, l)
		mapped, _ = m.lookup(m.task, r)
	}
	if mapped != l {
		return &difference{path, fmt.Sprintf("recorded task %q (live %q in this replay), live %q", r, mapped, l)}
	}
	return nil
}

// compareLiteral compares numbers, booleans and nulls: the same literal,
// except that a pollInterval may be any number.
func compareLiteral(path, key string, rec, live any) *difference {
	if _, ok := rec.(json.Number); ok && key == "pollInterval" {
		// A hint the server may tune as it runs: any number.
		if _, ok := live.(json.Number); ok {
			return nil
		}
	}
	if fmt.Sprint(rec) != fmt.Sprint(live) || typeName(rec) != typeName(live) {
		return &difference{path, fmt.Sprintf("recorded %s, live %s", short(rec), short(live))}
	}
	return nil
}

func isTimestamp(s string) bool {
	if len(s) < 20 || s[4] != '-' {
		return false
	}
	_, err := time.Parse(time.RFC3339Nano, s)
	return err == nil
}

func typeName(v any) string {
	switch v.(type) {
	case map[string]any:
		return "an object"
	case []any:
		return "an array"
	case string:
		return "a string"
	case json.Number:
		return "a number"
	case bool:
		return "a boolean"
	case nil:
		return "null"
	}
	return fmt.Sprintf("%T", v)
}

func short(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return abbreviate(string(b), 80)
}
