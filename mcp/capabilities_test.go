package mcp_test

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/tasksim/tasksim/mcp"
)

// TestServerCapabilitiesJSON checks the encoding against the shapes the
// specifications print.
func TestServerCapabilitiesJSON(t *testing.T) {
	toolCall := &mcp.TaskRequests{Tools: &mcp.ToolsTaskRequests{Call: &mcp.Empty{}}}
	tests := []struct {
		name string
		caps mcp.ServerCapabilities
		// spec is the "capabilities" value of the specification's example.
		spec string
		// want is the exact encoding.
		want string
	}{
		{
			name: "2025-11-25 Tasks server capabilities",
			caps: mcp.ServerCapabilities{Tasks: &mcp.TasksCapability{List: &mcp.Empty{}, Cancel: &mcp.Empty{}, Requests: toolCall}},
			spec: `{"tasks":{"list":{},"cancel":{},"requests":{"tools":{"call":{}}}}}`,
			want: `{"tasks":{"list":{},"cancel":{},"requests":{"tools":{"call":{}}}}}`,
		},
		{
			name: "SEP-1905 Server Capabilities",
			caps: mcp.ServerCapabilities{Tasks: &mcp.TasksCapability{Responses: &mcp.ResponsesCapability{
				Modes: []mcp.ResponseMode{mcp.ModeTask, mcp.ModeImmediate, mcp.ModeStreaming},
			}}},
			spec: `{"tasks":{"responses":{"modes":["task","immediate","streaming"]}}}`,
			want: `{"tasks":{"responses":{"modes":["task","immediate","streaming"]}}}`,
		},
		{
			name: "SEP-2679 §2.1 Server Capabilities",
			caps: mcp.ServerCapabilities{Tasks: &mcp.TasksCapability{
				List: &mcp.Empty{}, Cancel: &mcp.Empty{}, Requests: toolCall,
				Streaming: &mcp.StreamingCapability{Partial: &mcp.Empty{}},
			}},
			spec: `{"tasks":{"list":{},"cancel":{},"requests":{"tools":{"call":{}}},"streaming":{"partial":{}}}}`,
			want: `{"tasks":{"list":{},"cancel":{},"requests":{"tools":{"call":{}}},"streaming":{"partial":{}}}}`,
		},
		{
			name: "tasksim reference server: both SEPs",
			caps: mcp.ServerCapabilities{
				Tools: &mcp.ToolsCapability{},
				Tasks: &mcp.TasksCapability{
					List: &mcp.Empty{}, Cancel: &mcp.Empty{}, Requests: toolCall,
					Responses: &mcp.ResponsesCapability{Modes: []mcp.ResponseMode{mcp.ModeTask, mcp.ModeImmediate, mcp.ModeStreaming}},
					Streaming: &mcp.StreamingCapability{Partial: &mcp.Empty{}},
				},
			},
			spec: `{"tools":{},"tasks":{"list":{},"cancel":{},"requests":{"tools":{"call":{}}},"responses":{"modes":["task","immediate","streaming"]},"streaming":{"partial":{}}}}`,
			want: `{"tools":{},"tasks":{"list":{},"cancel":{},"requests":{"tools":{"call":{}}},"responses":{"modes":["task","immediate","streaming"]},"streaming":{"partial":{}}}}`,
		},
		{
			name: "no capabilities",
			caps: mcp.ServerCapabilities{},
			spec: `{}`,
			want: `{}`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := json.Marshal(tt.caps)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(semantic(t, []byte(tt.spec)), semantic(t, got)); diff != "" {
				t.Errorf("capabilities differ from the specification's shape (-spec +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.want, string(got)); diff != "" {
				t.Errorf("Marshal mismatch (-want +got):\n%s", diff)
			}
			var back mcp.ServerCapabilities
			if err := json.Unmarshal([]byte(tt.spec), &back); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.caps, back); diff != "" {
				t.Errorf("decoding the specification's example (-want +got):\n%s", diff)
			}
		})
	}
}

func TestTasksCapabilityAccessors(t *testing.T) {
	tests := []struct {
		name          string
		in            string // an InitializeParams
		wantPartial   bool
		wantToolCall  bool
		wantModes     []mcp.ResponseMode
		wantTasksNil  bool
		wantSampling  bool
		wantElicitate bool
	}{
		{
			name:        "SEP-2679 §2.2 Client Capabilities",
			in:          `{"capabilities":{"tasks":{"streaming":{"partial":{}}}}}`,
			wantPartial: true,
		},
		{
			name:      "SEP-1905 Client Capability",
			in:        `{"capabilities":{"tasks":{"responses":{"modes":["task","immediate","streaming"]}}}}`,
			wantModes: []mcp.ResponseMode{mcp.ModeTask, mcp.ModeImmediate, mcp.ModeStreaming},
		},
		{
			name:          "2025-11-25 Tasks client capabilities",
			in:            `{"capabilities":{"tasks":{"list":{},"cancel":{},"requests":{"sampling":{"createMessage":{}},"elicitation":{"create":{}}}}}}`,
			wantSampling:  true,
			wantElicitate: true,
		},
		{
			name:        "partial with future extension fields",
			in:          `{"capabilities":{"tasks":{"streaming":{"partial":{"maxRate":10}}}}}`,
			wantPartial: true,
		},
		{
			name: "streaming without partial",
			in:   `{"capabilities":{"tasks":{"streaming":{}}}}`,
		},
		{
			name: "partial null is not declared",
			in:   `{"capabilities":{"tasks":{"streaming":{"partial":null}}}}`,
		},
		{
			name:         "no tasks capability",
			in:           `{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}`,
			wantTasksNil: true,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var p mcp.InitializeParams
			if err := json.Unmarshal([]byte(tt.in), &p); err != nil {
				t.Fatal(err)
			}
			tasks := p.Capabilities.Tasks
			if got := tasks == nil; got != tt.wantTasksNil {
				t.Errorf("Tasks == nil is %v, want %v", got, tt.wantTasksNil)
			}
			// The accessors accept a nil receiver.
			if got := tasks.PartialStreaming(); got != tt.wantPartial {
				t.Errorf("PartialStreaming() = %v, want %v", got, tt.wantPartial)
			}
			if got := tasks.ToolCall(); got != tt.wantToolCall {
				t.Errorf("ToolCall() = %v, want %v", got, tt.wantToolCall)
			}
			if diff := cmp.Diff(tt.wantModes, tasks.ResponseModes()); diff != "" {
				t.Errorf("ResponseModes() mismatch (-want +got):\n%s", diff)
			}
			gotSampling := tasks != nil && tasks.Requests != nil && tasks.Requests.Sampling != nil && tasks.Requests.Sampling.CreateMessage != nil
			if gotSampling != tt.wantSampling {
				t.Errorf("sampling.createMessage declared = %v, want %v", gotSampling, tt.wantSampling)
			}
			gotElicit := tasks != nil && tasks.Requests != nil && tasks.Requests.Elicitation != nil && tasks.Requests.Elicitation.Create != nil
			if gotElicit != tt.wantElicitate {
				t.Errorf("elicitation.create declared = %v, want %v", gotElicit, tt.wantElicitate)
			}
		})
	}
}

func TestServerToolCallCapability(t *testing.T) {
	var caps mcp.ServerCapabilities
	in := `{"tasks":{"list":{},"cancel":{},"requests":{"tools":{"call":{}}},"streaming":{"partial":{}}}}`
	if err := json.Unmarshal([]byte(in), &caps); err != nil {
		t.Fatal(err)
	}
	if !caps.Tasks.ToolCall() {
		t.Errorf("ToolCall() = false for %s", in)
	}
	if !caps.Tasks.PartialStreaming() {
		t.Errorf("PartialStreaming() = false for %s", in)
	}
	if got := caps.Tasks.ResponseModes(); got != nil {
		t.Errorf("ResponseModes() = %q, want nil", got)
	}
}

func TestMetaRelatedTaskID(t *testing.T) {
	decode := func(s string) mcp.Meta {
		t.Helper()
		var m mcp.Meta
		if err := json.Unmarshal([]byte(s), &m); err != nil {
			t.Fatal(err)
		}
		return m
	}
	roundTrip := func(m mcp.Meta) mcp.Meta {
		t.Helper()
		b, err := json.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		return decode(string(b))
	}
	tests := []struct {
		name   string
		meta   mcp.Meta
		wantID string
		wantOK bool
	}{
		{name: "built on nil", meta: mcp.Meta(nil).WithRelatedTask("t-1"), wantID: "t-1", wantOK: true},
		{name: "built on existing keys", meta: mcp.Meta{"other": 1}.WithRelatedTask("t-2"), wantID: "t-2", wantOK: true},
		{name: "built then encoded and decoded", meta: roundTrip(mcp.Meta(nil).WithRelatedTask("t-3")), wantID: "t-3", wantOK: true},
		{
			name:   "decoded from the spec",
			meta:   decode(`{"io.modelcontextprotocol/related-task":{"taskId":"786512e2-9e0d-44bd-8f29-789f320fe840"}}`),
			wantID: "786512e2-9e0d-44bd-8f29-789f320fe840", wantOK: true,
		},
		{name: "nil", meta: nil},
		{name: "absent", meta: decode(`{"other":{"taskId":"x"}}`)},
		{name: "empty task id", meta: decode(`{"io.modelcontextprotocol/related-task":{"taskId":""}}`)},
		{name: "task id not a string", meta: decode(`{"io.modelcontextprotocol/related-task":{"taskId":7}}`)},
		{name: "not an object", meta: decode(`{"io.modelcontextprotocol/related-task":"t-1"}`)},
		{name: "built with empty id", meta: mcp.Meta(nil).WithRelatedTask("")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			id, ok := tt.meta.RelatedTaskID()
			if id != tt.wantID || ok != tt.wantOK {
				t.Errorf("RelatedTaskID() = %q, %v, want %q, %v", id, ok, tt.wantID, tt.wantOK)
			}
		})
	}
	t.Run("WithRelatedTask keeps other keys", func(t *testing.T) {
		m := mcp.Meta{mcp.MetaFallbackMode: "task"}.WithRelatedTask("t-4")
		got, err := json.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		want := `{"io.modelcontextprotocol/fallback-mode":"task","io.modelcontextprotocol/related-task":{"taskId":"t-4"}}`
		if diff := cmp.Diff(want, string(got)); diff != "" {
			t.Errorf("Marshal mismatch (-want +got):\n%s", diff)
		}
	})
	t.Run("decoded inside a streaming response", func(t *testing.T) {
		// SEP-1905 "Example SSE event for streaming result".
		data := `{"jsonrpc":"2.0","id":1,"result":{"partial-content":[{"seqNr":3,"type":"text","text":"Additional segment"}],"isComplete":false,"_meta":{"io.modelcontextprotocol/related-task":{"taskId":"786512e2-9e0d-44bd-8f29-789f320fe840"}}}}`
		msg, err := mcp.DecodeMessage([]byte(data))
		if err != nil {
			t.Fatal(err)
		}
		var res mcp.ToolCallResponse
		if err := mcp.DecodeParams(msg.Result, &res); err != nil {
			t.Fatal(err)
		}
		id, ok := res.Meta.RelatedTaskID()
		if id != "786512e2-9e0d-44bd-8f29-789f320fe840" || !ok {
			t.Errorf("RelatedTaskID() = %q, %v", id, ok)
		}
		if res.IsComplete == nil || *res.IsComplete {
			t.Errorf("IsComplete = %v, want false", res.IsComplete)
		}
		want := []mcp.Segment{{SeqNr: 3, ContentBlock: mcp.TextBlock("Additional segment")}}
		if diff := cmp.Diff(want, res.PartialContent, cmp.Transformer("fields", contentFields)); diff != "" {
			t.Errorf("PartialContent mismatch (-want +got):\n%s", diff)
		}
	})
}
