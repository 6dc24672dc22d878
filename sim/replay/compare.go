package replay

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

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
// value: task ids, session ids, SSE event ids, and in MCP 2026-07-28
// request states and input request keys. Safe for concurrent use.
type idMap struct {
	mu      sync.Mutex
	task    map[string]string
	session map[string]string
	event   map[string]string
	request map[string]string // JSON-RPC request ids (a client replay)
	state   map[string]string // MCP 2026-07-28 requestState values
	input   map[string]string // MCP 2026-07-28 inputRequests keys
	// echoed says the messages compared are a live client's (a client
	// replay), which must echo the recorded requestState it was served
	// unchanged (2026-07-28 Multi Round-Trip Requests, "Client
	// Requirements": the state is opaque, the client MUST NOT change
	// it): there a requestState compares exactly.
	echoed bool
}

func newIDMap() *idMap {
	return &idMap{task: map[string]string{}, session: map[string]string{}, event: map[string]string{},
		request: map[string]string{}, state: map[string]string{}, input: map[string]string{}}
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
// requestState or an inputRequests key is valid for the retry or
// tasks/update that follows the answer carrying it, whatever the server
// minted for it before.
func (m *idMap) rebind(table map[string]string, rec, live string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	table[rec] = live
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
		if key == "inputRequests" {
			return m.compareInputRequests(path, r, live)
		}
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

// compareInputRequests compares an inputRequests map (MCP 2026-07-28:
// an InputRequiredResult's, a DetailedTask's) whose keys the server
// chooses (Multi Round-Trip Requests, "InputRequests"; Tasks, "Task
// Update Requests"): a server may mint them per run. Each recorded key
// pairs with a live one: the same key if the live side has it, else one
// whose request is the same, else the first left, in name order; the
// requests must then agree, and the recorded key binds the live one, so
// that the inputResponses of the retry or tasks/update that answers them
// send the live key. A key on one side only is a difference.
func (m *idMap) compareInputRequests(path string, r map[string]any, live any) *difference {
	l, ok := live.(map[string]any)
	if !ok {
		return &difference{path, fmt.Sprintf("recorded an object, live %s", typeName(live))}
	}
	used := map[string]bool{}
	for _, k := range slices.Sorted(maps.Keys(r)) {
		lk := pairInputKey(k, r, l, used)
		p := path + "." + k
		if lk == "" {
			return &difference{p, "recorded " + short(r[k]) + ", live has no request left to pair with " + k}
		}
		used[lk] = true
		if d := m.compareValue(p, k, r[k], l[lk]); d != nil {
			return d
		}
		m.rebind(m.input, k, lk)
	}
	for _, lk := range slices.Sorted(maps.Keys(l)) {
		if !used[lk] {
			return &difference{path + "." + lk, "live " + short(l[lk]) + ", recorded has no request to pair with " + lk}
		}
	}
	return nil
}

// pairInputKey returns the live key that recorded key k pairs with: k
// itself, else the first unused live key (in name order, not a recorded
// key) whose request has the same JSON, else the first unused one; ""
// when none is left.
func pairInputKey(k string, r, l map[string]any, used map[string]bool) string {
	if _, ok := l[k]; ok && !used[k] {
		return k
	}
	want, _ := json.Marshal(r[k]) // decoded JSON: it encodes, members sorted
	first := ""
	for _, lk := range slices.Sorted(maps.Keys(l)) {
		if _, recorded := r[lk]; used[lk] || recorded {
			continue
		}
		if got, _ := json.Marshal(l[lk]); bytes.Equal(got, want) {
			return lk
		}
		if first == "" {
			first = lk
		}
	}
	return first
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
	if key == "requestState" && !m.echoed {
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
