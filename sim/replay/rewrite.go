package replay

import (
	"bytes"
	"encoding/json"
	"io"
	"slices"

	rev "github.com/tasksim/tasksim/mcp/rev20260728"
)

// What a replayed request sends in place of what was recorded: the live
// values the answers bound (compare.go), in its body and its headers.
//
//	recorded body ─▶ JSON tokens ─▶ task id / requestState value ─▶ live value
//	                            └─▶ member name under inputResponses ─▶ live inputRequests key
//	recorded Mcp-Name ─▶ decoded ─▶ task id ─▶ live id, encoded as a client must

// liveString is the live value of a recorded string that a request
// carries: a task id's or a requestState's anywhere, an inputRequests
// key's where it names a member of inputResponses (in, the member that
// holds the object it names a member of). ok is false when it is not
// mapped or maps to itself.
func (m *idMap) liveString(rec string, name bool, in string) (string, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	table := m.task
	if _, ok := table[rec]; !ok {
		table = m.state
	}
	if name && in == "inputResponses" {
		table = m.input
	}
	live, ok := table[rec]
	return live, ok && live != rec
}

// rewriteRequest replaces in body every JSON string that is a recorded
// task id or requestState, and every inputResponses key that answers a
// recorded inputRequests key, by its live value, leaving every other byte
// as it was. The strings are compared decoded, so that an escape the
// recorded client chose cannot hide one; a body that is not JSON has its
// JSON-quoted task ids and states replaced as bytes.
func (m *idMap) rewriteRequest(body []byte) []byte {
	out, err := rewriteStrings(body, m.liveString)
	if err != nil {
		return m.rewriteBytes(body)
	}
	return out
}

// jsonFrame is an object or array rewriteStrings is inside: for an
// object, whether a member name comes next, the last name, and the name
// of the member that holds it.
type jsonFrame struct {
	object, name bool
	key, in      string
}

// rewriteStrings returns body with each JSON string (value or member
// name) s for which live(s, name, in) is ok replaced by the JSON string
// of its live value; an error when body is not JSON.
func rewriteStrings(body []byte, live func(s string, name bool, in string) (string, bool)) ([]byte, error) {
	d := json.NewDecoder(bytes.NewReader(body))
	d.UseNumber()
	var out []byte
	var stack []jsonFrame
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
		var top *jsonFrame
		if len(stack) > 0 {
			top = &stack[len(stack)-1]
		}
		inObject := top != nil && top.object
		switch t := tok.(type) {
		case json.Delim:
			switch t {
			case '{', '[':
				in := ""
				if inObject {
					in = top.key
				}
				stack = append(stack, jsonFrame{object: t == '{', name: t == '{', in: in})
			default:
				stack = stack[:len(stack)-1]
				if len(stack) > 0 {
					stack[len(stack)-1].name = stack[len(stack)-1].object
				}
			}
		case string:
			name := inObject && top.name
			in := ""
			if top != nil {
				in = top.in
			}
			if l, ok := live(t, name, in); ok {
				// Between the previous token and this one there is only
				// white space and a ',' or ':': the string starts at its
				// first quote.
				start := prev + bytes.IndexByte(body[prev:end], '"')
				out = append(out, body[copied:start]...)
				out = appendJSONString(out, l)
				copied = end
			}
			if name {
				top.name, top.key = false, t
			} else if inObject {
				top.name = true
			}
		default:
			if inObject {
				top.name = true
			}
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
