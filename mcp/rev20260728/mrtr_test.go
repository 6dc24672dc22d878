package rev20260728_test

import (
	"encoding/json"
	"testing"

	rev "github.com/tasksim/tasksim/mcp/rev20260728"
)

func TestInputRequiredResultValidate(t *testing.T) {
	elicit := rev.InputRequests{"k": {Method: rev.MethodElicitationCreate}}
	for _, tc := range []struct {
		name  string
		r     rev.InputRequiredResult
		valid bool
	}{
		{"requests", rev.InputRequiredResult{ResultType: rev.ResultInputRequired, InputRequests: elicit}, true},
		{"state only", rev.InputRequiredResult{ResultType: rev.ResultInputRequired, RequestState: "s"}, true},
		{"neither", rev.InputRequiredResult{ResultType: rev.ResultInputRequired}, false},
		{"empty map and no state", rev.InputRequiredResult{ResultType: rev.ResultInputRequired, InputRequests: rev.InputRequests{}}, false},
		{"wrong resultType", rev.InputRequiredResult{ResultType: rev.ResultComplete, RequestState: "s"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := tc.r.Validate(); (err == nil) != tc.valid {
				t.Fatalf("Validate = %v; want valid=%v", err, tc.valid)
			}
		})
	}
}

func TestInputRequestsValidate(t *testing.T) {
	all := &rev.ClientCapabilities{Elicitation: json.RawMessage(`{}`), Sampling: json.RawMessage(`{}`), Roots: json.RawMessage(`{}`)}
	for _, tc := range []struct {
		name   string
		method string
		caps   *rev.ClientCapabilities
		valid  bool
	}{
		{"elicitation declared", rev.MethodElicitationCreate, all, true},
		{"sampling declared", rev.MethodSamplingCreateMessage, all, true},
		{"roots declared", rev.MethodRootsList, all, true},
		{"elicitation undeclared", rev.MethodElicitationCreate, &rev.ClientCapabilities{Sampling: json.RawMessage(`{}`)}, false},
		{"no capabilities", rev.MethodSamplingCreateMessage, nil, false},
		{"not an input request", "tools/call", all, false},
		{"a 2025-11-25 task method", "tasks/result", all, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := rev.InputRequests{"k": {Method: tc.method, Params: json.RawMessage(`{}`)}}
			if err := r.Validate(tc.caps); (err == nil) != tc.valid {
				t.Fatalf("Validate = %v; want valid=%v", err, tc.valid)
			}
		})
	}
}

// TestRetryEchoesState checks the retry's params: the answers, the state
// echoed byte for byte, and no state when the server sent none (2026-07-28
// Multi Round-Trip Requests, "Client Requirements" 2).
func TestRetryEchoesState(t *testing.T) {
	answers := rev.InputResponses{"k": json.RawMessage(`{"action":"accept","content":{"name":"Alice"}}`)}
	r := rev.InputRequiredResult{ResultType: rev.ResultInputRequired, RequestState: "eyJ4Ijox fQ==", InputRequests: rev.InputRequests{"k": {Method: rev.MethodElicitationCreate}}}
	p := rev.CallToolParams{Name: "test_tool_with_task", InputResponseParams: r.Retry(answers)}
	b, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	const want = `{"name":"test_tool_with_task","inputResponses":{"k":{"action":"accept","content":{"name":"Alice"}}},"requestState":"eyJ4Ijox fQ=="}`
	if string(b) != want {
		t.Fatalf("retry params %s; want %s", b, want)
	}
	r.RequestState = ""
	b, _ = json.Marshal(rev.CallToolParams{Name: "x", InputResponseParams: r.Retry(answers)})
	if string(b) != `{"name":"x","inputResponses":{"k":{"action":"accept","content":{"name":"Alice"}}}}` {
		t.Fatalf("retry without state: %s", b)
	}
}
