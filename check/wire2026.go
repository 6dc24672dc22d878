package check

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"maps"
	"slices"
	"strconv"
	"strings"
)

// What the rules of 2026-07-28 read of its messages, decoded leniently
// as wire.go does for 2025-11-25.

// capsDecl is what a request's _meta says of the tasks extension.
type capsDecl uint8

const (
	capsUnknown capsDecl = iota // no io.modelcontextprotocol/clientCapabilities
	capsTasks                   // declares io.modelcontextprotocol/tasks
	capsNoTasks                 // declares capabilities without it
)

// extTasks is the tasks extension's identifier (Extension Identifier).
const extTasks = "io.modelcontextprotocol/tasks"

// wire26Params are the members of a 2026-07-28 request's params the
// rules read.
type wire26Params struct {
	TaskID         *string                    `json:"taskId"`
	Name           *string                    `json:"name"`
	URI            *string                    `json:"uri"`
	InputResponses map[string]json.RawMessage `json:"inputResponses"`
	Notifications  *struct {
		TaskIDs []string `json:"taskIds"`
	} `json:"notifications"`
	Meta struct {
		Version    string `json:"io.modelcontextprotocol/protocolVersion"`
		ClientInfo *struct {
			Name    string `json:"name"`
			Version string `json:"version"`
		} `json:"io.modelcontextprotocol/clientInfo"`
		Capabilities *struct {
			Extensions map[string]json.RawMessage `json:"extensions"`
		} `json:"io.modelcontextprotocol/clientCapabilities"`
	} `json:"_meta"`
}

// caps reads what the request declares of the tasks extension.
func (p *wire26Params) caps() capsDecl {
	switch c := p.Meta.Capabilities; {
	case c == nil:
		return capsUnknown
	case c.Extensions[extTasks] != nil:
		return capsTasks
	}
	return capsNoTasks
}

// wantsTasks reports whether a request asks for what only a client of
// the tasks extension may: tasks/get, tasks/update, tasks/cancel, or a
// listen for task ids (Error Handling, "Protocol Errors").
func (p *wire26Params) wantsTasks(method string) bool {
	switch method {
	case m26Get, m26Update, m26Cancel:
		return true
	case "subscriptions/listen":
		return p.Notifications != nil && p.Notifications.TaskIDs != nil
	}
	return false
}

// wire26Result is a result of the revision, member by member.
type wire26Result struct {
	members       map[string]json.RawMessage
	resultType    string
	hasResultType bool
}

func decode26Result(raw json.RawMessage) *wire26Result {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || raw[0] != '{' {
		return nil
	}
	r := &wire26Result{members: map[string]json.RawMessage{}}
	members(raw, func(name, v []byte) {
		n, ok := jsonString(name)
		if !ok {
			return
		}
		r.members[n] = v
	})
	if v, ok := r.members["resultType"]; ok {
		r.resultType, r.hasResultType = jsonString(v)
	}
	return r
}

// isCreate reports whether a tools/call result has the shape of a
// CreateTaskResult (Result & Task: a taskId and a status at the top),
// whatever its resultType says.
func (r *wire26Result) isCreate() bool { return r.str("taskId") != "" && r.str("status") != "" }

func (r *wire26Result) str(name string) string {
	s, _ := jsonString(r.members[name])
	return s
}

// object returns a member that is a JSON object, nil otherwise.
func (r *wire26Result) object(name string) map[string]json.RawMessage {
	v := bytes.TrimSpace(r.members[name])
	if len(v) == 0 || v[0] != '{' {
		return nil
	}
	m := map[string]json.RawMessage{}
	members(v, func(name, v []byte) {
		if n, ok := jsonString(name); ok {
			m[n] = v
		}
	})
	return m
}

// sortedJSON returns a JSON value with every object's members sorted, to
// compare two values whatever the order of their members.
func sortedJSON(raw json.RawMessage) string {
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return canonical(raw)
	}
	out, err := json.Marshal(v)
	if err != nil {
		return canonical(raw)
	}
	return string(out)
}

// isInteger reports whether a JSON value is a non-negative integer
// number (the conformance suite rejects fractional ttlMs and
// pollIntervalMs).
func isInteger(v json.RawMessage) bool {
	n, err := strconv.ParseFloat(string(v), 64)
	return err == nil && n >= 0 && n == float64(int64(n))
}

// outcome returns a DetailedTask's result (completed) or error (failed),
// canonical, "" in another status.
func outcome(res *wire26Result, status string) string {
	switch status {
	case "completed":
		return sortedJSON(res.members["result"])
	case "failed":
		return sortedJSON(res.members["error"])
	}
	return ""
}

// decodeHeader decodes a header value sent as =?base64?...?= (2026-07-28
// Streamable HTTP, "Request Metadata": non-ASCII values and values with
// leading or trailing spaces).
func decodeHeader(v string) string {
	if b, ok := strings.CutPrefix(v, "=?base64?"); ok {
		if b, ok := strings.CutSuffix(b, "?="); ok {
			if d, err := base64.StdEncoding.DecodeString(b); err == nil {
				return string(d)
			}
		}
	}
	return v
}

func sortedKeys(m map[string]json.RawMessage) []string { return slices.Sorted(maps.Keys(m)) }
