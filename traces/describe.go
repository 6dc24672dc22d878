package traces

import (
	"bytes"
	"encoding/json"
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

type jsonObject map[string]json.RawMessage

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
func DescribeMessage(raw []byte) *RPCFields {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || raw[0] != '{' {
		return nil
	}
	var m jsonObject
	if json.Unmarshal(raw, &m) != nil {
		return nil
	}
	id, hasID := m["id"]
	method, hasMethod := jsonString(m["method"])
	_, hasResult := m["result"]
	_, hasError := m["error"]
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
		if json.Compact(&b, id) == nil {
			f.ID = b.String()
		}
	}
	params := object(m["params"])
	result := object(m["result"])
	task := object(result["task"])

	f.TaskID = firstString(params["taskId"], task["taskId"], result["taskId"],
		object(object(params["_meta"])[metaRelatedTask])["taskId"],
		object(object(result["_meta"])[metaRelatedTask])["taskId"])
	f.Status = firstString(params["status"], task["status"], result["status"])

	var segments []jsonObject
	if json.Unmarshal(result["partial-content"], &segments) == nil {
		for _, s := range segments {
			if n, ok := jsonInt(s["seqNr"]); ok {
				f.SeqNrs = append(f.SeqNrs, n)
			}
		}
	}
	if method == methodTaskPartial {
		f.Seq, f.HasSeq = jsonInt(params["seq"])
	}
	if c, ok := result["isComplete"]; ok {
		f.HasIsComplete = json.Unmarshal(c, &f.IsComplete) == nil
	}
	if code, ok := jsonInt(object(m["error"])["code"]); ok && code >= math.MinInt32 && code <= math.MaxInt32 {
		f.ErrorCode = int(code)
	}
	return f
}

// object decodes a JSON object; anything else gives nil.
func object(raw json.RawMessage) jsonObject {
	if len(raw) == 0 || raw[0] != '{' {
		return nil
	}
	var m jsonObject
	if json.Unmarshal(raw, &m) != nil {
		return nil
	}
	return m
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
