package traces

// describeReference is DescribeMessage as first written: every level
// decoded into maps. It is slow and plain, and its semantics are the
// specification FuzzDescribeDifferential holds DescribeMessage to: exact
// member names, escapes in names decoded, the last of duplicate members
// wins.

import (
	"bytes"
	"encoding/json"
	"math"
	"strconv"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

type refJSONObject map[string]json.RawMessage

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
//   - ErrorCode: error.code;
//   - ResultType: result.resultType.
func describeReference(raw []byte) *RPCFields {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || raw[0] != '{' {
		return nil
	}
	var m refJSONObject
	if json.Unmarshal(raw, &m) != nil {
		return nil
	}
	id, hasID := m["id"]
	method, hasMethod := refString(m["method"])
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
	params := refObject(m["params"])
	result := refObject(m["result"])
	task := refObject(result["task"])

	f.TaskID = refFirstString(params["taskId"], task["taskId"], result["taskId"],
		refObject(refObject(params["_meta"])[metaRelatedTask])["taskId"],
		refObject(refObject(result["_meta"])[metaRelatedTask])["taskId"])
	f.Status = refFirstString(params["status"], task["status"], result["status"])
	f.ResultType = refFirstString(result["resultType"])

	var segments []refJSONObject
	if json.Unmarshal(result["partial-content"], &segments) == nil {
		for _, s := range segments {
			if n, ok := refInt(s["seqNr"]); ok {
				f.SeqNrs = append(f.SeqNrs, n)
			}
		}
	}
	if method == methodTaskPartial {
		f.Seq, f.HasSeq = refInt(params["seq"])
	}
	if c, ok := result["isComplete"]; ok {
		f.HasIsComplete = json.Unmarshal(c, &f.IsComplete) == nil
	}
	if code, ok := refInt(refObject(m["error"])["code"]); ok && code >= math.MinInt32 && code <= math.MaxInt32 {
		f.ErrorCode = int(code)
	}
	return f
}

// object decodes a JSON object; anything else gives nil.
func refObject(raw json.RawMessage) refJSONObject {
	if len(raw) == 0 || raw[0] != '{' {
		return nil
	}
	var m refJSONObject
	if json.Unmarshal(raw, &m) != nil {
		return nil
	}
	return m
}

func refString(raw json.RawMessage) (string, bool) {
	if len(raw) == 0 || raw[0] != '"' {
		return "", false
	}
	var s string
	return s, json.Unmarshal(raw, &s) == nil
}

func refFirstString(vals ...json.RawMessage) string {
	for _, v := range vals {
		if s, ok := refString(v); ok && s != "" {
			return s
		}
	}
	return ""
}

// jsonInt reads a JSON number that is an integer (1, 1.0, 1e2).
func refInt(raw json.RawMessage) (int64, bool) {
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

// FuzzDescribeDifferential holds DescribeMessage to describeReference on
// any input.
func FuzzDescribeDifferential(f *testing.F) {
	for _, s := range []string{
		msgCall, msgSeg1, msgPartial,
		`{"jsonrpc":"2.0","id":"a-1","result":{"task":{"taskId":"t-1","status":"working"}}}`,
		`{"jsonrpc":"2.0","id":1,"result":{"partial-content":[{"seqNr":4,"type":"text","text":"a"},{"seqNr":5.0},null,{"seqNr":"6"}],"isComplete":true}}`,
		`{"jsonrpc":"2.0","id":1,"result":{"partial-content":[{"seqNr":4},7]}}`,
		`{"jsonrpc":"2.0","id":9,"method":"x","params":{"_meta":{"io.modelcontextprotocol/related-task":{"taskId":"t-3"}},"_meta":5}}`,
		`{"jsonrpc":"2.0","\u0069d":4,"error":{"code":-32602,"code":1e300}}`,
		`{"ID":1,"Method":"m","method":"n","id":null}`,
		"{\"id\":1,\"method\":\"a\xffb\",\"params\":{\"taskId\":\"\\u00e9\\ud800\"}}",
		` { "id" : [ 1 , { "a" : "}" } ] , "result" : { "status" : "x" , "isComplete" : null } } `,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		got, want := DescribeMessage(raw), describeReference(raw)
		if diff := cmp.Diff(want, got, cmpopts.EquateEmpty()); diff != "" {
			t.Fatalf("DescribeMessage(%q) differs from the reference (-want +got):\n%s", raw, diff)
		}
	})
}
