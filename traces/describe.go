package traces

import (
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"strconv"
)

// Names DescribeMessage looks for (MCP 2025-11-25 Tasks, SEP-1905,
// SEP-2679). The traces package does not import the protocol package: a
// trace must describe traffic that breaks the protocol too.
const (
	metaRelatedTask   = "io.modelcontextprotocol/related-task"
	methodTaskPartial = "notifications/tasks/partial"
)

// The shapes DescribeMessage decodes: the envelope into raw members (one
// pass), then params, result and error into structs that name only what
// it reads, with raw leaves so that a member of the wrong type is simply
// not read. Content, which is most of a message's bytes, is skipped
// without being decoded.
type (
	descEnvelope struct {
		ID     json.RawMessage `json:"id"`
		Method json.RawMessage `json:"method"`
		Params json.RawMessage `json:"params"`
		Result json.RawMessage `json:"result"`
		Error  json.RawMessage `json:"error"`
	}
	descMeta struct {
		Related struct {
			TaskID json.RawMessage `json:"taskId"`
		} `json:"io.modelcontextprotocol/related-task"`
	}
	descParams struct {
		TaskID json.RawMessage `json:"taskId"`
		Status json.RawMessage `json:"status"`
		Seq    json.RawMessage `json:"seq"`
		Meta   descMeta        `json:"_meta"`
	}
	descResult struct {
		Task struct {
			TaskID json.RawMessage `json:"taskId"`
			Status json.RawMessage `json:"status"`
		} `json:"task"`
		TaskID         json.RawMessage `json:"taskId"`
		Status         json.RawMessage `json:"status"`
		PartialContent []struct {
			SeqNr json.RawMessage `json:"seqNr"`
		} `json:"partial-content"`
		IsComplete json.RawMessage `json:"isComplete"`
		Meta       descMeta        `json:"_meta"`
	}
	descError struct {
		Code json.RawMessage `json:"code"`
	}
)

// DescribeMessage returns what a trace reader wants to know of one
// JSON-RPC message without parsing it again, or nil if raw is not a JSON
// object shaped like a JSON-RPC message (a "method", or a "result" or
// "error" with an "id"). It never fails: fields it cannot read stay zero.
//
//   - Type: "request" (method and id), "notification" (method, no id) or
//     "response";
//   - ID: the id as on the wire, compacted (`7`, `"a"`, `null`);
//   - TaskID: params.taskId, result.task.taskId, result.taskId, or the
//     io.modelcontextprotocol/related-task meta of params or result;
//   - Status: params.status, result.task.status or result.status;
//   - SeqNrs: the seqNr of each item of result["partial-content"];
//   - Seq: params.seq of notifications/tasks/partial;
//   - IsComplete: result.isComplete;
//   - ErrorCode: error.code.
//
// Member names are matched exactly, as JSON-RPC's are case-sensitive.
func DescribeMessage(raw []byte) *RPCFields {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || raw[0] != '{' {
		return nil
	}
	var m descEnvelope
	if !decodeLenient(raw, &m) {
		return nil
	}
	exactNames(raw, &m)
	hasID := m.ID != nil
	method, hasMethod := jsonString(m.Method)
	hasResult, hasError := m.Result != nil, m.Error != nil
	f := &RPCFields{}
	switch {
	case hasMethod && hasID:
		f.Type, f.Method = "request", method
	case hasMethod:
		f.Type, f.Method = "notification", method
	case (hasResult || hasError) && hasID:
		f.Type = "response"
	default:
		return nil
	}
	if hasID {
		var b bytes.Buffer
		if json.Compact(&b, m.ID) == nil {
			f.ID = b.String()
		}
	}
	var params descParams
	var result descResult
	if isObject(m.Params) {
		decodeLenient(m.Params, &params)
	}
	if isObject(m.Result) {
		decodeLenient(m.Result, &result)
	}
	f.TaskID = firstString(params.TaskID, result.Task.TaskID, result.TaskID,
		params.Meta.Related.TaskID, result.Meta.Related.TaskID)
	f.Status = firstString(params.Status, result.Task.Status, result.Status)
	for _, s := range result.PartialContent {
		if n, ok := jsonInt(s.SeqNr); ok {
			f.SeqNrs = append(f.SeqNrs, n)
		}
	}
	if method == methodTaskPartial {
		f.Seq, f.HasSeq = jsonInt(params.Seq)
	}
	if result.IsComplete != nil {
		f.HasIsComplete = json.Unmarshal(result.IsComplete, &f.IsComplete) == nil
	}
	var e descError
	if isObject(m.Error) && decodeLenient(m.Error, &e) {
		if code, ok := jsonInt(e.Code); ok && code >= math.MinInt32 && code <= math.MaxInt32 {
			f.ErrorCode = int(code)
		}
	}
	return f
}

// decodeLenient unmarshals raw into v, keeping what it could read when a
// member has the wrong type; it reports false only for text that is not
// JSON.
func decodeLenient(raw []byte, v any) bool {
	err := json.Unmarshal(raw, v)
	var typeErr *json.UnmarshalTypeError
	return err == nil || errors.As(err, &typeErr)
}

func isObject(raw json.RawMessage) bool { return len(raw) > 0 && raw[0] == '{' }

// exactNames drops the members decoding found under another spelling:
// encoding/json matches names without regard to case, JSON-RPC does not.
// A member it found must appear in raw with its exact quoted name.
func exactNames(raw []byte, m *descEnvelope) {
	for _, f := range []struct {
		name string
		v    *json.RawMessage
	}{{`"id"`, &m.ID}, {`"method"`, &m.Method}, {`"params"`, &m.Params}, {`"result"`, &m.Result}, {`"error"`, &m.Error}} {
		if *f.v != nil && !bytes.Contains(raw, []byte(f.name)) {
			*f.v = nil
		}
	}
}

func jsonString(raw json.RawMessage) (string, bool) {
	if len(raw) == 0 || raw[0] != '"' {
		return "", false
	}
	var s string
	return s, json.Unmarshal(raw, &s) == nil
}

func firstString(vals ...json.RawMessage) string {
	for _, v := range vals {
		if s, ok := jsonString(v); ok && s != "" {
			return s
		}
	}
	return ""
}

// jsonInt reads a JSON number that is an integer (1, 1.0, 1e2).
func jsonInt(raw json.RawMessage) (int64, bool) {
	if len(raw) == 0 {
		return 0, false
	}
	if n, err := strconv.ParseInt(string(raw), 10, 64); err == nil {
		return n, true
	}
	f, err := strconv.ParseFloat(string(raw), 64)
	if err != nil || f != math.Trunc(f) || f < math.MinInt64 || f >= math.MaxInt64 {
		return 0, false
	}
	return int64(f), true
}
