package mcp_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/tasksim/tasksim/mcp"
)

// idComparer compares IDs by their wire form; ID's field is unexported.
var idComparer = cmp.Comparer(func(a, b mcp.ID) bool { return a == b })

// errorCode returns the JSON-RPC code of err, or 0 when err is not an *mcp.Error.
func errorCode(err error) int {
	var e *mcp.Error
	if errors.As(err, &e) {
		return e.Code
	}
	return 0
}

// semantic decodes JSON into generic values, keeping numbers exact, so that
// two encodings can be compared regardless of member order and whitespace.
func semantic(t testing.TB, data []byte) any {
	t.Helper()
	if data == nil {
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		t.Fatalf("decode %s: %v", data, err)
	}
	return v
}

func TestDecodeMessage(t *testing.T) {
	tests := []struct {
		name     string
		in       string
		want     *mcp.Message // when the message is valid
		wantCode int          // when it is not
		wantID   mcp.ID       // returned with the error, when readable
	}{
		// Valid messages.
		{
			name: "request with int id and params object",
			in:   `{"jsonrpc":"2.0","id":1,"method":"tasks/get","params":{"taskId":"t1"}}`,
			want: &mcp.Message{ID: mcp.IntID(1), Method: "tasks/get", Params: json.RawMessage(`{"taskId":"t1"}`)},
		},
		{
			name: "request with string id",
			in:   `{"jsonrpc":"2.0","id":"req-1","method":"ping"}`,
			want: &mcp.Message{ID: mcp.StringID("req-1"), Method: "ping"},
		},
		{
			name: "request with negative id and members in another order",
			in:   `{"method":"ping","id":-5,"jsonrpc":"2.0"}`,
			want: &mcp.Message{ID: mcp.IntID(-5), Method: "ping"},
		},
		{
			name: "request without params",
			in:   `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`,
			want: &mcp.Message{ID: mcp.IntID(2), Method: "tools/list"},
		},
		{
			name: "request with params array",
			in:   `{"jsonrpc":"2.0","id":3,"method":"sum","params":[1, 2, 3]}`,
			want: &mcp.Message{ID: mcp.IntID(3), Method: "sum", Params: json.RawMessage(`[1, 2, 3]`)},
		},
		{
			name: "request with null params is a request without params",
			in:   `{"jsonrpc":"2.0","id":4,"method":"ping","params":null}`,
			want: &mcp.Message{ID: mcp.IntID(4), Method: "ping"},
		},
		{
			name: "notification",
			in:   `{"jsonrpc":"2.0","method":"notifications/tasks/status","params":{"taskId":"t1","status":"working"}}`,
			want: &mcp.Message{Method: "notifications/tasks/status", Params: json.RawMessage(`{"taskId":"t1","status":"working"}`)},
		},
		{
			name: "result response",
			in:   `{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"hi"}]}}`,
			want: &mcp.Message{ID: mcp.IntID(1), Result: json.RawMessage(`{"content":[{"type":"text","text":"hi"}]}`)},
		},
		{
			name: "error response with null id",
			in:   `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}`,
			want: &mcp.Message{ID: mcp.NullID, Error: &mcp.Error{Code: -32700, Message: "Parse error"}},
		},
		{
			name: "error response with data",
			in:   `{"jsonrpc":"2.0","id":"x","error":{"code":-32602,"message":"bad","data":{"field":"taskId"}}}`,
			want: &mcp.Message{ID: mcp.StringID("x"), Error: &mcp.Error{Code: -32602, Message: "bad", Data: json.RawMessage(`{"field":"taskId"}`)}},
		},
		{
			name: "surrounding whitespace",
			in:   "\r\n\t {\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"} \n",
			want: &mcp.Message{Method: "notifications/initialized"},
		},

		// Not JSON: parse error, no id.
		{name: "empty", in: ``, wantCode: mcp.CodeParseError},
		{name: "whitespace", in: " \t\r\n", wantCode: mcp.CodeParseError},
		{name: "not JSON", in: `hello`, wantCode: mcp.CodeParseError},
		{name: "truncated JSON", in: `{"jsonrpc":"2.0","id":1,"method":"ping"`, wantCode: mcp.CodeParseError},
		{name: "truncated batch", in: `[{"jsonrpc":"2.0","method":"ping"`, wantCode: mcp.CodeParseError},
		{name: "trailing garbage", in: `{"jsonrpc":"2.0","method":"ping"} x`, wantCode: mcp.CodeParseError},

		// JSON, but not a message: invalid request.
		{name: "JSON array batch", in: `[{"jsonrpc":"2.0","id":1,"method":"ping"}]`, wantCode: mcp.CodeInvalidRequest},
		{name: "empty batch", in: `[]`, wantCode: mcp.CodeInvalidRequest},
		{name: "JSON number", in: `42`, wantCode: mcp.CodeInvalidRequest},
		{name: "JSON string", in: `"ping"`, wantCode: mcp.CodeInvalidRequest},
		{name: "JSON null", in: `null`, wantCode: mcp.CodeInvalidRequest},
		{
			name:     "missing jsonrpc",
			in:       `{"id":3,"method":"ping"}`,
			wantCode: mcp.CodeInvalidRequest, wantID: mcp.IntID(3),
		},
		{
			name:     "jsonrpc 1.0",
			in:       `{"jsonrpc":"1.0","id":"a","method":"ping"}`,
			wantCode: mcp.CodeInvalidRequest, wantID: mcp.StringID("a"),
		},
		{
			name:     "jsonrpc a number",
			in:       `{"jsonrpc":2.0,"id":4,"method":"ping"}`,
			wantCode: mcp.CodeInvalidRequest, wantID: mcp.IntID(4),
		},
		{
			name:     "jsonrpc member in capitals",
			in:       `{"JSONRPC":"2.0","id":4,"method":"ping"}`,
			wantCode: mcp.CodeInvalidRequest, wantID: mcp.IntID(4),
		},
		{
			name:     "empty method",
			in:       `{"jsonrpc":"2.0","id":5,"method":""}`,
			wantCode: mcp.CodeInvalidRequest, wantID: mcp.IntID(5),
		},
		{
			name:     "method not a string",
			in:       `{"jsonrpc":"2.0","id":5,"method":5}`,
			wantCode: mcp.CodeInvalidRequest, wantID: mcp.IntID(5),
		},
		{
			name:     "method null",
			in:       `{"jsonrpc":"2.0","id":5,"method":null}`,
			wantCode: mcp.CodeInvalidRequest, wantID: mcp.IntID(5),
		},
		{
			name:     "method member capitalised",
			in:       `{"jsonrpc":"2.0","id":5,"Method":"ping"}`,
			wantCode: mcp.CodeInvalidRequest, wantID: mcp.IntID(5),
		},
		{
			name:     "method with result",
			in:       `{"jsonrpc":"2.0","id":6,"method":"ping","result":{}}`,
			wantCode: mcp.CodeInvalidRequest, wantID: mcp.IntID(6),
		},
		{
			name:     "method with error",
			in:       `{"jsonrpc":"2.0","id":6,"method":"ping","error":{"code":1,"message":"x"}}`,
			wantCode: mcp.CodeInvalidRequest, wantID: mcp.IntID(6),
		},
		{
			name:     "null id on a request",
			in:       `{"jsonrpc":"2.0","id":null,"method":"ping"}`,
			wantCode: mcp.CodeInvalidRequest, wantID: mcp.NullID,
		},
		{name: "fractional id", in: `{"jsonrpc":"2.0","id":1.5,"method":"ping"}`, wantCode: mcp.CodeInvalidRequest},
		{name: "exponent id", in: `{"jsonrpc":"2.0","id":1e3,"method":"ping"}`, wantCode: mcp.CodeInvalidRequest},
		{name: "id beyond int64", in: `{"jsonrpc":"2.0","id":9223372036854775808,"method":"ping"}`, wantCode: mcp.CodeInvalidRequest},
		{name: "object id", in: `{"jsonrpc":"2.0","id":{"n":1},"method":"ping"}`, wantCode: mcp.CodeInvalidRequest},
		{name: "array id", in: `{"jsonrpc":"2.0","id":[1],"method":"ping"}`, wantCode: mcp.CodeInvalidRequest},
		{name: "boolean id", in: `{"jsonrpc":"2.0","id":true,"method":"ping"}`, wantCode: mcp.CodeInvalidRequest},
		{
			name:     "params a string",
			in:       `{"jsonrpc":"2.0","id":7,"method":"ping","params":"x"}`,
			wantCode: mcp.CodeInvalidRequest, wantID: mcp.IntID(7),
		},
		{
			name:     "params a number",
			in:       `{"jsonrpc":"2.0","id":7,"method":"ping","params":1}`,
			wantCode: mcp.CodeInvalidRequest, wantID: mcp.IntID(7),
		},
		{name: "response without id", in: `{"jsonrpc":"2.0","result":{}}`, wantCode: mcp.CodeInvalidRequest},
		{
			name:     "result response with null id",
			in:       `{"jsonrpc":"2.0","id":null,"result":{}}`,
			wantCode: mcp.CodeInvalidRequest, wantID: mcp.NullID,
		},
		{
			name:     "result and error both",
			in:       `{"jsonrpc":"2.0","id":8,"result":{},"error":{"code":-32603,"message":"x"}}`,
			wantCode: mcp.CodeInvalidRequest, wantID: mcp.IntID(8),
		},
		{
			name:     "error not an object",
			in:       `{"jsonrpc":"2.0","id":8,"error":"boom"}`,
			wantCode: mcp.CodeInvalidRequest, wantID: mcp.IntID(8),
		},
		{
			name:     "error null",
			in:       `{"jsonrpc":"2.0","id":8,"error":null}`,
			wantCode: mcp.CodeInvalidRequest, wantID: mcp.IntID(8),
		},
		{
			name:     "error code fractional",
			in:       `{"jsonrpc":"2.0","id":8,"error":{"code":1.5,"message":"x"}}`,
			wantCode: mcp.CodeInvalidRequest, wantID: mcp.IntID(8),
		},
		{
			name:     "result member capitalised",
			in:       `{"jsonrpc":"2.0","id":8,"Result":{}}`,
			wantCode: mcp.CodeInvalidRequest, wantID: mcp.IntID(8),
		},
		{
			name:     "nothing but an id",
			in:       `{"jsonrpc":"2.0","id":9}`,
			wantCode: mcp.CodeInvalidRequest, wantID: mcp.IntID(9),
		},
		{name: "nothing", in: `{"jsonrpc":"2.0"}`, wantCode: mcp.CodeInvalidRequest},
		{name: "empty object", in: `{}`, wantCode: mcp.CodeInvalidRequest},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := mcp.DecodeMessage([]byte(tt.in))
			if tt.want != nil {
				if err != nil {
					t.Fatalf("DecodeMessage: %v", err)
				}
				if diff := cmp.Diff(tt.want, got, idComparer); diff != "" {
					t.Errorf("DecodeMessage mismatch (-want +got):\n%s", diff)
				}
				return
			}
			if code := errorCode(err); code != tt.wantCode {
				t.Errorf("DecodeMessage error = %v (code %d), want code %d", err, code, tt.wantCode)
			}
			var gotID mcp.ID
			if got != nil {
				gotID = got.ID
			}
			if gotID != tt.wantID {
				t.Errorf("id returned with the error = %q, want %q", gotID, tt.wantID)
			}
		})
	}
}

func TestMessageKind(t *testing.T) {
	tests := []struct {
		name string
		msg  mcp.Message
		want mcp.Kind
	}{
		{name: "request", msg: mcp.Message{ID: mcp.IntID(1), Method: "ping"}, want: mcp.KindRequest},
		{name: "notification", msg: mcp.Message{Method: "notifications/initialized"}, want: mcp.KindNotification},
		{name: "result", msg: mcp.Message{ID: mcp.IntID(1), Result: json.RawMessage(`{}`)}, want: mcp.KindResponse},
		{name: "error", msg: mcp.Message{ID: mcp.NullID, Error: &mcp.Error{Code: 1}}, want: mcp.KindResponse},
		{name: "empty", msg: mcp.Message{}, want: mcp.KindInvalid},
		{name: "id only", msg: mcp.Message{ID: mcp.IntID(1)}, want: mcp.KindInvalid},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.msg.Kind(); got != tt.want {
				t.Errorf("Kind() = %v, want %v", got, tt.want)
			}
		})
	}
}

func mustMessage(t *testing.T) func(*mcp.Message, error) *mcp.Message {
	return func(m *mcp.Message, err error) *mcp.Message {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
}

func TestMessageRoundTrip(t *testing.T) {
	must := mustMessage(t)
	ttl := int64(60000)
	tests := []struct {
		name string
		msg  *mcp.Message
	}{
		{
			name: "task-augmented tools/call",
			msg: must(mcp.NewRequest(mcp.IntID(1), mcp.MethodToolsCall, mcp.CallToolParams{
				Name:      "get_weather",
				Arguments: json.RawMessage(`{"city":"New York"}`),
				Task:      &mcp.TaskParams{TTL: &ttl, ResponseModes: []mcp.ResponseMode{mcp.ModeImmediate, mcp.ModeTask, mcp.ModeStreaming}},
			})),
		},
		{name: "request with string id", msg: must(mcp.NewRequest(mcp.StringID(`a "quoted" id`), mcp.MethodTasksGet, mcp.GetTaskParams{TaskID: "t1"}))},
		{name: "request without params", msg: must(mcp.NewRequest(mcp.IntID(0), mcp.MethodPing, nil))},
		{name: "notification", msg: must(mcp.NewNotification(mcp.NotificationInitialized, nil))},
		{
			name: "notification with awkward method",
			msg:  must(mcp.NewNotification("x/\x00\x01\x1f\"\\<>&\u2028\u2029\U000e0001é\t\n\b\f", map[string]int{"a": 1})),
		},
		{
			name: "partial notification",
			msg: must(mcp.NewNotification(mcp.NotificationTaskPartial, mcp.TaskPartialParams{
				TaskID: "t1", Content: []mcp.ContentBlock{mcp.TextBlock("chunk")}, Seq: 0,
			})),
		},
		{name: "result", msg: must(mcp.NewResult(mcp.StringID("r"), mcp.CallToolResult{Content: []mcp.ContentBlock{mcp.TextBlock("hi")}}))},
		{name: "error with null id", msg: mcp.NewError(mcp.NullID, mcp.Errorf(mcp.CodeParseError, "parse error: %s", "not JSON"))},
		{name: "error with zero id", msg: mcp.NewError(mcp.ID{}, mcp.Errorf(mcp.CodeInvalidRequest, "bad"))},
		{
			name: "error with data",
			msg:  mcp.NewError(mcp.IntID(3), &mcp.Error{Code: mcp.CodeInvalidParams, Message: "m", Data: json.RawMessage(`{"k":[1,2]}`)}),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, err := tt.msg.MarshalJSON()
			if err != nil {
				t.Fatalf("MarshalJSON: %v", err)
			}
			if !json.Valid(b) {
				t.Fatalf("MarshalJSON wrote invalid JSON: %s", b)
			}
			got, err := mcp.DecodeMessage(b)
			if err != nil {
				t.Fatalf("DecodeMessage(%s): %v", b, err)
			}
			if diff := cmp.Diff(tt.msg, got, idComparer); diff != "" {
				t.Errorf("round trip mismatch (-want +got):\n%s", diff)
			}
			// encoding/json must agree: it validates what MarshalJSON writes.
			viaJSON, err := json.Marshal(tt.msg)
			if err != nil {
				t.Fatalf("json.Marshal: %v", err)
			}
			if diff := cmp.Diff(semantic(t, b), semantic(t, viaJSON)); diff != "" {
				t.Errorf("json.Marshal differs from MarshalJSON (-MarshalJSON +json.Marshal):\n%s", diff)
			}
		})
	}
}

func TestAppendJSON(t *testing.T) {
	tests := []struct {
		name string
		msg  *mcp.Message
		want string
	}{
		{
			name: "request",
			msg:  &mcp.Message{ID: mcp.IntID(1), Method: mcp.MethodTasksGet, Params: json.RawMessage(`{"taskId":"t1"}`)},
			want: `{"jsonrpc":"2.0","id":1,"method":"tasks/get","params":{"taskId":"t1"}}`,
		},
		{
			name: "request with string id and no params",
			msg:  &mcp.Message{ID: mcp.StringID("p-1"), Method: mcp.MethodPing},
			want: `{"jsonrpc":"2.0","id":"p-1","method":"ping"}`,
		},
		{
			name: "notification",
			msg:  &mcp.Message{Method: mcp.NotificationInitialized},
			want: `{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		},
		{
			name: "notification with params",
			msg:  &mcp.Message{Method: mcp.NotificationTaskStatus, Params: json.RawMessage(`{"taskId":"t1","status":"completed"}`)},
			want: `{"jsonrpc":"2.0","method":"notifications/tasks/status","params":{"taskId":"t1","status":"completed"}}`,
		},
		{
			name: "method escaped as JSON",
			msg:  &mcp.Message{Method: "a\x01\n\"<"},
			want: `{"jsonrpc":"2.0","method":"a\u0001\n\"\u003c"}`,
		},
		{
			name: "result",
			msg:  &mcp.Message{ID: mcp.IntID(1), Result: json.RawMessage(`{"content":[]}`)},
			want: `{"jsonrpc":"2.0","id":1,"result":{"content":[]}}`,
		},
		{
			name: "result without a value is an empty object",
			msg:  &mcp.Message{ID: mcp.IntID(2)},
			want: `{"jsonrpc":"2.0","id":2,"result":{}}`,
		},
		{
			name: "error with NullID",
			msg:  mcp.NewError(mcp.NullID, mcp.Errorf(mcp.CodeParseError, "parse error: not JSON")),
			want: `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"parse error: not JSON"}}`,
		},
		{
			name: "error with zero id is null",
			msg:  &mcp.Message{Error: mcp.Errorf(mcp.CodeInvalidRequest, "x")},
			want: `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"x"}}`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			prefix := "data: "
			got, err := tt.msg.AppendJSON([]byte(prefix))
			if err != nil {
				t.Fatalf("AppendJSON: %v", err)
			}
			if diff := cmp.Diff(prefix+tt.want, string(got)); diff != "" {
				t.Errorf("AppendJSON mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

// TestMethodEscaping checks that a method is written byte for byte as
// encoding/json writes the same string.
func TestMethodEscaping(t *testing.T) {
	tests := []struct {
		name   string
		method string
	}{
		{name: "plain", method: "tools/call"},
		{name: "control characters", method: "\x00\x01\x07\x0b\x1f\x7f"},
		{name: "named escapes", method: "\b\f\n\r\t\"\\"},
		{name: "HTML", method: "<a href='x'>&</a>"},
		{name: "line separators", method: "a\u2028b\u2029c"},
		{name: "non-printable supplementary", method: "\U000e0001"},
		{name: "multibyte", method: "tâches/résultat ✓ 😀"},
		{name: "invalid UTF-8", method: "bad\xff\xfe utf8 \xc3"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := (&mcp.Message{Method: tt.method}).MarshalJSON()
			if err != nil {
				t.Fatal(err)
			}
			quoted, err := json.Marshal(tt.method)
			if err != nil {
				t.Fatal(err)
			}
			want := `{"jsonrpc":"2.0","method":` + string(quoted) + `}`
			if diff := cmp.Diff(want, string(got)); diff != "" {
				t.Errorf("MarshalJSON mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestID(t *testing.T) {
	tests := []struct {
		name      string
		id        mcp.ID
		wantWire  string
		wantZero  bool
		wantNull  bool
		wantInt   int64
		wantIsInt bool
	}{
		{name: "zero", id: mcp.ID{}, wantWire: "", wantZero: true},
		{name: "null", id: mcp.NullID, wantWire: "null", wantNull: true},
		{name: "int", id: mcp.IntID(7), wantWire: "7", wantInt: 7, wantIsInt: true},
		{name: "int zero", id: mcp.IntID(0), wantWire: "0", wantInt: 0, wantIsInt: true},
		{name: "negative int", id: mcp.IntID(-3), wantWire: "-3", wantInt: -3, wantIsInt: true},
		{name: "max int64", id: mcp.IntID(math.MaxInt64), wantWire: "9223372036854775807", wantInt: math.MaxInt64, wantIsInt: true},
		{name: "string", id: mcp.StringID("abc"), wantWire: `"abc"`},
		{name: "string of digits is not an int", id: mcp.StringID("7"), wantWire: `"7"`},
		{name: "empty string is present", id: mcp.StringID(""), wantWire: `""`},
		{name: "string with escapes", id: mcp.StringID("a\"b\\c\n\x01"), wantWire: `"a\"b\\c\n\u0001"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.id.String(); got != tt.wantWire {
				t.Errorf("String() = %q, want %q", got, tt.wantWire)
			}
			if got := tt.id.IsZero(); got != tt.wantZero {
				t.Errorf("IsZero() = %v, want %v", got, tt.wantZero)
			}
			if got := tt.id.IsNull(); got != tt.wantNull {
				t.Errorf("IsNull() = %v, want %v", got, tt.wantNull)
			}
			n, ok := tt.id.Int()
			if n != tt.wantInt || ok != tt.wantIsInt {
				t.Errorf("Int() = %d, %v, want %d, %v", n, ok, tt.wantInt, tt.wantIsInt)
			}
			b, err := json.Marshal(tt.id)
			if err != nil {
				t.Fatal(err)
			}
			wantJSON := tt.wantWire
			if tt.wantZero {
				wantJSON = "null"
			}
			if string(b) != wantJSON {
				t.Errorf("json.Marshal = %s, want %s", b, wantJSON)
			}
		})
	}
}

// TestIDMapKey checks that a decoded id finds the entry made for the id that
// was sent: a client keys its pending requests by ID.
func TestIDMapKey(t *testing.T) {
	pending := map[mcp.ID]string{
		mcp.IntID(7):          "int 7",
		mcp.StringID("7"):     "string 7",
		mcp.StringID(`ab"c`):  "escaped",
		mcp.StringID("é"):     "unicode",
		mcp.StringID("<tag>"): "html",
	}
	tests := []struct {
		name string
		in   string
		want string
	}{
		{name: "int", in: `{"jsonrpc":"2.0","id":7,"result":{}}`, want: "int 7"},
		{name: "int with spaces", in: `{"jsonrpc":"2.0","id" :  7 ,"result":{}}`, want: "int 7"},
		{name: "string of digits", in: `{"jsonrpc":"2.0","id":"7","result":{}}`, want: "string 7"},
		{name: "string with unicode escapes", in: `{"jsonrpc":"2.0","id":"a\u0062\"c","result":{}}`, want: "escaped"},
		{name: "escaped non-ASCII", in: `{"jsonrpc":"2.0","id":"\u00e9","result":{}}`, want: "unicode"},
		{name: "raw non-ASCII", in: `{"jsonrpc":"2.0","id":"é","result":{}}`, want: "unicode"},
		{name: "unescaped HTML", in: `{"jsonrpc":"2.0","id":"<tag>","result":{}}`, want: "html"},
		{name: "unknown", in: `{"jsonrpc":"2.0","id":8,"result":{}}`, want: ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, err := mcp.DecodeMessage([]byte(tt.in))
			if err != nil {
				t.Fatal(err)
			}
			if got := pending[m.ID]; got != tt.want {
				t.Errorf("pending[%s] = %q, want %q", m.ID, got, tt.want)
			}
		})
	}
}

func TestIDUnmarshalJSON(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		want    mcp.ID
		wantErr bool
	}{
		{name: "int", in: `{"requestId":12}`, want: mcp.IntID(12)},
		{name: "string", in: `{"requestId":"r-12"}`, want: mcp.StringID("r-12")},
		{name: "null", in: `{"requestId":null}`, want: mcp.NullID},
		{name: "fraction", in: `{"requestId":1.5}`, wantErr: true},
		{name: "object", in: `{"requestId":{}}`, wantErr: true},
		{name: "bool", in: `{"requestId":false}`, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var p mcp.CancelledParams
			err := json.Unmarshal([]byte(tt.in), &p)
			if gotErr := err != nil; gotErr != tt.wantErr {
				t.Fatalf("Unmarshal error = %v, want error %v", err, tt.wantErr)
			}
			if p.RequestID != tt.want {
				t.Errorf("RequestID = %q, want %q", p.RequestID, tt.want)
			}
		})
	}
}

func TestDecodeParams(t *testing.T) {
	ttl := int64(60000)
	tests := []struct {
		name    string
		raw     string
		want    mcp.CallToolParams
		wantErr string // the whole message, when the params are invalid
	}{
		{
			name: "task-augmented call",
			raw:  `{"name":"get_weather","arguments":{"city":"New York"},"task":{"ttl":60000,"responseModes":["immediate","task","streaming"]}}`,
			want: mcp.CallToolParams{
				Name:      "get_weather",
				Arguments: json.RawMessage(`{"city":"New York"}`),
				Task:      &mcp.TaskParams{TTL: &ttl, ResponseModes: []mcp.ResponseMode{mcp.ModeImmediate, mcp.ModeTask, mcp.ModeStreaming}},
			},
		},
		{name: "absent params decode as empty", raw: ``, want: mcp.CallToolParams{}},
		{
			name:    "name not a string",
			raw:     `{"name":5}`,
			wantErr: "invalid params: name must be string, not number",
		},
		{
			name:    "nested ttl not a number",
			raw:     `{"name":"x","task":{"ttl":"long"}}`,
			wantErr: "invalid params: task.ttl must be int64, not string",
		},
		{
			name:    "response modes not an array",
			raw:     `{"name":"x","task":{"responseModes":"task"}}`,
			wantErr: "invalid params: task.responseModes must be []mcp.ResponseMode, not string",
		},
		{
			name:    "not JSON",
			raw:     `{"name":`,
			wantErr: "invalid params: unexpected end of JSON input",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got mcp.CallToolParams
			err := mcp.DecodeParams(json.RawMessage(tt.raw), &got)
			if tt.wantErr != "" {
				var e *mcp.Error
				if !errors.As(err, &e) {
					t.Fatalf("DecodeParams error = %v, want *mcp.Error", err)
				}
				if e.Code != mcp.CodeInvalidParams || e.Message != tt.wantErr {
					t.Errorf("DecodeParams error = %d %q, want %d %q", e.Code, e.Message, mcp.CodeInvalidParams, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("DecodeParams: %v", err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("DecodeParams mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestErrorError(t *testing.T) {
	err := error(mcp.Errorf(mcp.CodeMethodNotFound, "method %q not found", "x/y"))
	if got, want := err.Error(), `jsonrpc error -32601: method "x/y" not found`; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
}
