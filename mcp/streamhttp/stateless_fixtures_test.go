package streamhttp_test

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"image/png"
	"maps"
	"net/http"
	"slices"
	"strings"
	"testing"
	"testing/synctest"

	"github.com/tasksim/tasksim/mcp"
	rev "github.com/tasksim/tasksim/mcp/rev20260728"
	"github.com/tasksim/tasksim/mcp/server"
)

// These tests drive the fixtures of the conformance suite's scenarios for
// the 2026-07-28 requirements (server.RevisionConformanceTools) with raw
// HTTP requests inside synctest bubbles, as those scenarios do.

// metaCaps is a well-formed _meta declaring the client capabilities caps
// (a JSON object).
func metaCaps(caps string) string {
	return strings.Replace(metaJSON(rev.ProtocolVersion), `"io.modelcontextprotocol/clientCapabilities":{}`,
		`"io.modelcontextprotocol/clientCapabilities":`+caps, 1)
}

const allInputCaps = `{"elicitation":{},"sampling":{},"roots":{"listChanged":true}}`

// complete returns the content of a complete CallToolResult, failing the
// test on anything else.
func complete(t *testing.T, m *mcp.Message) []mcp.ContentBlock {
	t.Helper()
	var res rev.CallToolResult
	if m.Error != nil || json.Unmarshal(m.Result, &res) != nil || res.ResultType != rev.ResultComplete || res.IsError {
		t.Fatalf("%s %v, want a complete result", m.Result, m.Error)
	}
	return res.Content
}

// inputRequired returns the InputRequiredResult of m, failing the test on
// anything else.
func inputRequired(t *testing.T, m *mcp.Message) rev.InputRequiredResult {
	t.Helper()
	var ir rev.InputRequiredResult
	if m.Error != nil || json.Unmarshal(m.Result, &ir) != nil || ir.Validate() != nil || ir.RequestState == "" {
		t.Fatalf("%s %v, want an InputRequiredResult with a requestState", m.Result, m.Error)
	}
	return ir
}

// The content fixtures answer what tools-call-image, -audio,
// -embedded-resource and -mixed-content check: the block types, their
// mime types and data that decodes as what it says.
func TestStatelessContentFixtures(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newMemStatelessServer(t, nil)
		call := func(tool string) []mcp.ContentBlock {
			return complete(t, s.callWith(tool, `"arguments":{}`, metaJSON(rev.ProtocolVersion)).last(t))
		}
		img := call(server.ToolImageContent)
		if len(img) != 1 || img[0].Type != mcp.ContentImage || img[0].MimeType != "image/png" {
			t.Fatalf("image: %+v, want one image/png block", img)
		}
		raw, err := base64.StdEncoding.DecodeString(img[0].Data)
		if err != nil {
			t.Fatalf("image data: %v", err)
		}
		if cfg, err := png.DecodeConfig(bytes.NewReader(raw)); err != nil || cfg.Width != 1 || cfg.Height != 1 {
			t.Errorf("image: %+v (%v), want a 1x1 PNG", cfg, err)
		}
		audio := call(server.ToolAudioContent)
		if len(audio) != 1 || audio[0].Type != mcp.ContentAudio || audio[0].MimeType != "audio/wav" {
			t.Fatalf("audio: %+v, want one audio/wav block", audio)
		}
		if raw, err := base64.StdEncoding.DecodeString(audio[0].Data); err != nil || len(raw) < 44 || string(raw[:4]) != "RIFF" || string(raw[8:16]) != "WAVEfmt " {
			t.Errorf("audio data %q (%v), want a RIFF WAVE file", raw, err)
		}
		type resource struct{ URI, MimeType, Text string }
		res := func(b mcp.ContentBlock) resource {
			var r resource
			if b.Type != mcp.ContentResource || json.Unmarshal(b.Resource, &r) != nil {
				t.Fatalf("block %+v, want an embedded resource", b)
			}
			return r
		}
		if e := call(server.ToolEmbeddedResource); len(e) != 1 || res(e[0]) != (resource{"test://embedded-resource", "text/plain", server.EmbeddedResourceText}) {
			t.Errorf("embedded resource: %+v", e)
		}
		mixed := call(server.ToolMixedContent)
		if len(mixed) != 3 || mixed[0].Text != server.MixedContentText || mixed[1].Type != mcp.ContentImage ||
			res(mixed[2]) != (resource{"test://mixed-content-resource", "application/json", `{"test":"data","value":123}`}) {
			t.Errorf("mixed content: %+v", mixed)
		}
	})
}

// tools/list of 2026-07-28 carries json_schema_2020_12_tool's inputSchema
// unchanged: every 2020-12 keyword the json-schema-2020-12 scenario looks
// for (SEP-1613, SEP-2106).
func TestStatelessJSONSchema2020Fixture(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newMemStatelessServer(t, nil)
		var list rev.ListToolsResult
		if err := json.Unmarshal(s.do(http.MethodPost, request(mcp.MethodToolsList, "", metaJSON(rev.ProtocolVersion)), headers(mcp.MethodToolsList, "")).last(t).Result, &list); err != nil {
			t.Fatal(err)
		}
		i := slices.IndexFunc(list.Tools, func(tool mcp.Tool) bool { return tool.Name == server.ToolJSONSchema2020 })
		if i < 0 {
			t.Fatalf("tools/list lacks %s", server.ToolJSONSchema2020)
		}
		var got, want any
		if json.Unmarshal(list.Tools[i].InputSchema, &got) != nil || json.Unmarshal([]byte(server.JSONSchema2020), &want) != nil {
			t.Fatalf("inputSchema %s", list.Tools[i].InputSchema)
		}
		gotJSON, _ := json.Marshal(got)
		wantJSON, _ := json.Marshal(want)
		if !bytes.Equal(gotJSON, wantJSON) {
			t.Errorf("inputSchema\n%s\nwant\n%s", gotJSON, wantJSON)
		}
		for _, k := range []string{`"$schema"`, `"$anchor"`, `"$ref"`, `"allOf"`, `"anyOf"`, `"if"`, `"then"`, `"else"`, `"additionalProperties":false`} {
			if !strings.Contains(string(gotJSON), k) {
				t.Errorf("inputSchema lacks %s", k)
			}
		}
	})
}

// The input-required-result fixtures: round 1 asks under the keys the
// scenarios name, the retry with the answers and the echoed requestState
// completes; multi_round asks twice with two different states; the
// capabilities fixture asks only what the request declares; a tampered
// state is -32602 (2026-07-28 Multi Round-Trip Requests).
func TestStatelessInputRequiredFixtures(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newMemStatelessServer(t, nil)
		meta := metaCaps(allInputCaps)
		elicit := accept(`{"name":"Alice"}`)
		sample := `{"role":"assistant","content":{"type":"text","text":"Paris."},"model":"m","stopReason":"endTurn"}`
		roots := `{"roots":[{"uri":"file:///test/root","name":"Test Root"}]}`
		for _, tc := range []struct {
			tool    string
			asked   map[string]string // key -> method
			answers string
			says    string
		}{
			{server.ToolInputElicitation, map[string]string{"user_name": rev.MethodElicitationCreate}, `{"user_name":` + elicit + `}`, "Hello, Alice!"},
			{server.ToolInputSampling, map[string]string{"capital_question": rev.MethodSamplingCreateMessage}, `{"capital_question":` + sample + `}`, "Paris."},
			{server.ToolInputListRoots, map[string]string{"client_roots": rev.MethodRootsList}, `{"client_roots":` + roots + `}`, "file:///test/root"},
			{server.ToolInputRequestState, map[string]string{"confirm": rev.MethodElicitationCreate}, `{"confirm":` + accept(`{"ok":true}`) + `}`, server.StateOK},
			{server.ToolInputMultiple, map[string]string{"user_name": rev.MethodElicitationCreate, "greeting": rev.MethodSamplingCreateMessage, "client_roots": rev.MethodRootsList},
				`{"user_name":` + elicit + `,"greeting":` + sample + `,"client_roots":` + roots + `}`, "Name: Alice; greeting: Paris.; roots: file:///test/root"},
		} {
			ir := inputRequired(t, s.callWith(tc.tool, `"arguments":{}`, meta).last(t))
			got := map[string]string{}
			for k, q := range ir.InputRequests {
				got[k] = q.Method
			}
			if !maps.Equal(got, tc.asked) {
				t.Errorf("%s asked %v, want %v", tc.tool, got, tc.asked)
			}
			c := complete(t, s.callWith(tc.tool, `"arguments":{},"inputResponses":`+tc.answers+`,"requestState":"`+ir.RequestState+`"`, meta).last(t))
			if len(c) != 1 || !strings.Contains(c[0].Text, tc.says) {
				t.Errorf("%s answered %+v, want a text with %q", tc.tool, c, tc.says)
			}
		}

		r1 := inputRequired(t, s.callWith(server.ToolInputMultiRound, `"arguments":{}`, meta).last(t))
		r2 := inputRequired(t, s.callWith(server.ToolInputMultiRound, `"arguments":{},"inputResponses":{"step1":`+elicit+`},"requestState":"`+r1.RequestState+`"`, meta).last(t))
		if _, ok := r1.InputRequests["step1"]; !ok || r2.InputRequests["step2"].Method != rev.MethodElicitationCreate || r2.RequestState == r1.RequestState {
			t.Errorf("multi round: %+v then %+v, want step1, then step2 under a new state", r1, r2)
		}
		if c := complete(t, s.callWith(server.ToolInputMultiRound, `"arguments":{},"inputResponses":{"step2":`+accept(`{"color":"blue"}`)+`},"requestState":"`+r2.RequestState+`"`, meta).last(t)); !strings.Contains(c[0].Text, "blue") {
			t.Errorf("multi round 3: %+v, want the color", c)
		}

		only := inputRequired(t, s.callWith(server.ToolInputCapabilities, `"arguments":{}`, metaCaps(`{"sampling":{}}`)).last(t))
		if keys := slices.Sorted(maps.Keys(only.InputRequests)); !slices.Equal(keys, []string{"capital_question"}) {
			t.Errorf("sampling declared: asked %v, want only capital_question", keys)
		}
		if c := complete(t, s.callWith(server.ToolInputCapabilities, `"arguments":{}`, metaJSON(rev.ProtocolVersion)).last(t)); len(c) != 1 {
			t.Errorf("nothing declared: %+v, want a result without asking", c)
		}

		st := inputRequired(t, s.callWith(server.ToolInputTampered, `"arguments":{}`, meta).last(t)).RequestState
		wantError(t, s.callWith(server.ToolInputTampered, `"arguments":{},"inputResponses":{"confirm":`+accept(`{"ok":true}`)+`},"requestState":"`+st+`-TAMPERED"`, meta),
			http.StatusOK, mcp.CodeInvalidParams, "fails verification")
	})
}

// The server-stateless scenario's diagnostic tools: test_missing_capability
// without sampling declared is -32021 naming sampling, HTTP 400;
// test_streaming_elicitation asks by an InputRequiredResult and puts no
// request on the response stream; test_logging_tool sends no
// notifications/message to a request without a logLevel (2026-07-28
// "Client Capabilities", Multi Round-Trip Requests).
func TestStatelessDiagnosticFixtures(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newMemStatelessServer(t, nil)
		e := wantError(t, s.callWith(server.ToolMissingCapability, `"arguments":{}`, metaJSON(rev.ProtocolVersion)), http.StatusBadRequest, rev.CodeMissingRequiredClientCapability)
		var data rev.MissingCapabilityData
		if err := rev.DecodeErrorData(e, &data); err != nil || !data.RequiredCapabilities.HasSampling() {
			t.Errorf("error data %s (%v), want requiredCapabilities.sampling", e.Data, err)
		}
		a := s.callWith(server.ToolStreamingElicit, `"arguments":{}`, metaCaps(`{"elicitation":{}}`))
		for _, m := range a.msgs {
			if m.Kind() == mcp.KindRequest {
				t.Errorf("a request on the response stream: %s", m.Method)
			}
		}
		if ir := inputRequired(t, a.last(t)); ir.InputRequests["user_name"].Method != rev.MethodElicitationCreate {
			t.Errorf("streaming elicitation asked %+v, want an elicitation under user_name", ir.InputRequests)
		}
		a = s.callWith(server.ToolLoggingDiagnostics, `"arguments":{}`, metaJSON(rev.ProtocolVersion))
		for _, m := range a.msgs {
			if m.Method == mcp.NotificationMessage {
				t.Errorf("a log message without a logLevel: %+v", m)
			}
		}
		complete(t, a.last(t))
	})
}
