package traces

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestDescribeMessage(t *testing.T) {
	cases := []struct {
		name string
		raw  string
		want *RPCFields
	}{
		{"task-augmented call", msgCall, &RPCFields{Type: "request", Method: "tools/call", ID: "1"}},
		{"create task result",
			`{"jsonrpc":"2.0","id":"a-1","result":{"task":{"taskId":"t-1","status":"working","createdAt":"2025-11-25T10:30:00Z","ttl":60000}}}`,
			&RPCFields{Type: "response", ID: `"a-1"`, TaskID: "t-1", Status: "working"}},
		{"tasks/get request", `{"jsonrpc":"2.0","id":3,"method":"tasks/get","params":{"taskId":"t-1"}}`,
			&RPCFields{Type: "request", Method: "tasks/get", ID: "3", TaskID: "t-1"}},
		{"tasks/get result", `{"jsonrpc":"2.0","id":3,"result":{"taskId":"t-1","status":"completed","pollInterval":5000}}`,
			&RPCFields{Type: "response", ID: "3", TaskID: "t-1", Status: "completed"}},
		{"status notification",
			`{"jsonrpc":"2.0","method":"notifications/tasks/status","params":{"taskId":"t-2","status":"failed","statusMessage":"boom"}}`,
			&RPCFields{Type: "notification", Method: "notifications/tasks/status", TaskID: "t-2", Status: "failed"}},
		{"SEP-1905 segment", msgSeg1, &RPCFields{Type: "response", ID: "1", TaskID: "786512e2-9e0d-44bd-8f29-789f320fe840",
			SeqNrs: []int64{1}, HasIsComplete: true}},
		{"SEP-1905 final segments",
			`{"jsonrpc":"2.0","id":1,"result":{"partial-content":[{"seqNr":4,"type":"text","text":"a"},{"seqNr":5.0,"type":"text","text":"b"},{"seqNr":"6"}],"isComplete":true}}`,
			&RPCFields{Type: "response", ID: "1", SeqNrs: []int64{4, 5}, IsComplete: true, HasIsComplete: true}},
		{"SEP-2679 partial", msgPartial, &RPCFields{Type: "notification", Method: "notifications/tasks/partial", TaskID: "t-9", HasSeq: true}},
		{"seq on another method is not a seq", `{"jsonrpc":"2.0","method":"notifications/progress","params":{"seq":3}}`,
			&RPCFields{Type: "notification", Method: "notifications/progress"}},
		{"related-task meta in params",
			`{"jsonrpc":"2.0","id":9,"method":"sampling/createMessage","params":{"_meta":{"io.modelcontextprotocol/related-task":{"taskId":"t-3"}}}}`,
			&RPCFields{Type: "request", Method: "sampling/createMessage", ID: "9", TaskID: "t-3"}},
		{"error response", `{"jsonrpc":"2.0","id":4,"error":{"code":-32602,"message":"Failed to retrieve task: Task has expired"}}`,
			&RPCFields{Type: "response", ID: "4", ErrorCode: -32602}},
		{"null id", `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}`,
			&RPCFields{Type: "response", ID: "null", ErrorCode: -32700}},
		{"spaced id", "{\"jsonrpc\":\"2.0\",\"id\": \"x y\" ,\"method\":\"ping\"}\n", &RPCFields{Type: "request", Method: "ping", ID: `"x y"`}},
		{"huge error code ignored", `{"jsonrpc":"2.0","id":4,"error":{"code":1e300}}`, &RPCFields{Type: "response", ID: "4"}},
		{"not JSON", `hello`, nil},
		{"invalid JSON", `{"jsonrpc":"2.0","id":1,`, nil},
		{"array (a batch)", `[{"jsonrpc":"2.0","id":1,"method":"ping"}]`, nil},
		{"object without method or result", `{"jsonrpc":"2.0","id":1}`, nil},
		{"result without id", `{"result":{}}`, nil},
		{"method not a string", `{"jsonrpc":"2.0","method":7}`, nil},
		{"empty", ``, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := DescribeMessage([]byte(tc.raw))
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}
