package streamhttp_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/tasksim/tasksim/mcp"
	rev "github.com/tasksim/tasksim/mcp/rev20260728"
	"github.com/tasksim/tasksim/mcp/server"
	"github.com/tasksim/tasksim/mcp/streamhttp"
)

// TestStatelessParamHeaders sends tools/call requests of
// test_custom_headers, whose region, priority and verbose arguments are
// marked x-mcp-header, with their Mcp-Param headers right and wrong. A
// request whose headers match its body (after Base64 decoding) runs; one
// with a header missing, different, malformed, or given for an argument
// the body lacks, is refused with -32020 and HTTP 400 before the tool
// runs (2026-07-28 Streamable HTTP, "Server Behavior for Custom Headers",
// "Value Encoding", "Server Validation").
func TestStatelessParamHeaders(t *testing.T) {
	s := newStatelessServer(t)
	call := func(args string) string {
		return request(mcp.MethodToolsCall, `"name":"`+server.ToolCustomHeaders+`","arguments":`+args, metaJSON(rev.ProtocolVersion))
	}
	base := headers(mcp.MethodToolsCall, server.ToolCustomHeaders)
	ok := []struct {
		name, args string
		hdr        []string
	}{
		{"plain", `{"region":"us-west1","query":"q"}`, []string{"Mcp-Param-Region", "us-west1"}},
		{"base64", `{"region":"Hello","query":"q"}`, []string{"Mcp-Param-Region", "=?base64?SGVsbG8=?="}},
		{"non-ASCII in base64", `{"region":"Hello, 世界","query":"q"}`, []string{"Mcp-Param-Region", "=?base64?SGVsbG8sIOS4lueVjA==?="}},
		{"no prefix is literal", `{"region":"SGVsbG8=","query":"q"}`, []string{"Mcp-Param-Region", "SGVsbG8="}},
		{"no suffix is literal", `{"region":"=?base64?SGVsbG8=","query":"q"}`, []string{"Mcp-Param-Region", "=?base64?SGVsbG8="}},
		{"lower-case header name", `{"region":"eu","query":"q"}`, []string{"mcp-param-region", "eu"}},
		{"integer and boolean", `{"region":"eu","priority":42,"verbose":false,"query":"q"}`,
			[]string{"Mcp-Param-Region", "eu", "Mcp-Param-Priority", "42", "Mcp-Param-Verbose", "false"}},
		{"integer compared as a number", `{"region":"eu","priority":42,"query":"q"}`,
			[]string{"Mcp-Param-Region", "eu", "Mcp-Param-Priority", "42.0"}},
		{"null argument, no header", `{"region":"eu","verbose":null,"query":"q"}`, []string{"Mcp-Param-Region", "eu"}},
		{"absent argument, no header", `{"query":"q"}`, nil},
	}
	for _, c := range ok {
		t.Run(c.name, func(t *testing.T) {
			a := s.do(http.MethodPost, call(c.args), with(base, c.hdr...))
			if a.status != http.StatusOK {
				t.Fatalf("status %d, want 200", a.status)
			}
			if blocks := complete(t, a.last(t)); len(blocks) != 1 || !strings.Contains(blocks[0].Text, `"query":"q"`) {
				t.Errorf("content %+v, want the arguments echoed", blocks)
			}
		})
	}
	bad := []struct {
		name, args string
		hdr        []string
		says       string
	}{
		{"missing", `{"region":"test-value","query":"q"}`, nil, "Mcp-Param-Region header is missing"},
		{"mismatched", `{"region":"us-west1","query":"q"}`, []string{"Mcp-Param-Region", "eu-west1"}, "does not match body value 'us-west1'"},
		{"base64 of another value", `{"region":"Hello","query":"q"}`, []string{"Mcp-Param-Region", "=?base64?SGVsbG9v?="}, "does not match"},
		{"base64 bad padding", `{"region":"Hello","query":"q"}`, []string{"Mcp-Param-Region", "=?base64?SGVsbG8?="}, "malformed"},
		{"base64 bad characters", `{"region":"Hello","query":"q"}`, []string{"Mcp-Param-Region", "=?base64?SGVs!!!bG8=?="}, "malformed"},
		{"base64 not UTF-8", `{"region":"x","query":"q"}`, []string{"Mcp-Param-Region", "=?base64?/w==?="}, "malformed"},
		{"raw non-ASCII", `{"region":"café","query":"q"}`, []string{"Mcp-Param-Region", "café"}, "malformed"},
		{"integer mismatched", `{"region":"eu","priority":42,"query":"q"}`, []string{"Mcp-Param-Region", "eu", "Mcp-Param-Priority", "43"}, "Mcp-Param-Priority"},
		{"boolean mismatched", `{"region":"eu","verbose":true,"query":"q"}`, []string{"Mcp-Param-Region", "eu", "Mcp-Param-Verbose", "TRUE"}, "Mcp-Param-Verbose"},
		{"header without an argument", `{"query":"q"}`, []string{"Mcp-Param-Region", "eu"}, "body has no value"},
	}
	for _, c := range bad {
		t.Run(c.name, func(t *testing.T) {
			a := s.do(http.MethodPost, call(c.args), with(base, c.hdr...))
			wantError(t, a, http.StatusBadRequest, rev.CodeHeaderMismatch, c.says)
		})
	}
	t.Run("given twice", func(t *testing.T) {
		req, err := http.NewRequest(http.MethodPost, s.url, strings.NewReader(call(`{"region":"eu","query":"q"}`)))
		if err != nil {
			t.Fatal(err)
		}
		for k, v := range base {
			req.Header.Set(k, v)
		}
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Content-Type", "application/json")
		req.Header.Add("Mcp-Param-Region", "eu")
		req.Header.Add("Mcp-Param-Region", "eu")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusBadRequest {
			t.Errorf("status %d, want 400", resp.StatusCode)
		}
	})
	s.noState()
}

// TestStatelessParamHeadersListed checks that the 2026-07-28 tools/list
// carries test_custom_headers with its x-mcp-header annotations, and that
// an Mcp-Param header sent for a tool that declares none is ignored
// ("Intermediate servers that do not recognize an Mcp-Param-{Name} header
// MUST forward it and otherwise ignore it").
func TestStatelessParamHeadersListed(t *testing.T) {
	s := newStatelessServer(t)
	a := s.do(http.MethodPost, request(mcp.MethodToolsList, "", metaJSON(rev.ProtocolVersion)), headers(mcp.MethodToolsList, ""))
	if a.status != http.StatusOK || !strings.Contains(string(a.last(t).Result), `"x-mcp-header":"Region"`) {
		t.Fatalf("status %d: tools/list does not carry the x-mcp-header of %s", a.status, server.ToolCustomHeaders)
	}
	a = s.do(http.MethodPost, request(mcp.MethodToolsCall, `"name":"echo","arguments":{"text":"hi"}`, metaJSON(rev.ProtocolVersion)),
		with(headers(mcp.MethodToolsCall, "echo"), "Mcp-Param-Text", "other"))
	if a.status != http.StatusOK || a.last(t).Error != nil {
		t.Errorf("status %d: an Mcp-Param header of a tool that declares none was not ignored", a.status)
	}
}

// TestClientMirrorsParamHeaders drives the reference server with the
// stateless client transport: once a tools/list answer named
// test_custom_headers' x-mcp-header arguments, its tools/call carries them
// in Mcp-Param headers, Base64-encoded where they must be, and the server,
// which checks them, runs the call (2026-07-28 Streamable HTTP, "Client
// Behavior"). A call sent before any tools/list cannot know them: the
// server refuses it with -32020, and the caller lists the tools first.
func TestClientMirrorsParamHeaders(t *testing.T) {
	s := newStatelessServer(t)
	tr := &streamhttp.ClientTransport{URL: s.url, Revision: mcp.Revision20260728}
	conn, err := tr.Connect(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	meta := json.RawMessage(metaJSON(rev.ProtocolVersion))
	send := func(id int64, method, fields string) *mcp.Message {
		t.Helper()
		params := `{` + fields + `"_meta":` + string(meta) + `}`
		if err := conn.Write(t.Context(), &mcp.Message{ID: mcp.IntID(id), Method: method, Params: json.RawMessage(params)}); err != nil {
			t.Fatal(err)
		}
		m, err := conn.Read(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	call := `"name":"` + server.ToolCustomHeaders + `","arguments":{"region":" Zürich ","priority":3,"verbose":null,"query":"q"},`
	if m := send(1, mcp.MethodToolsCall, call); m.Error == nil || m.Error.Code != rev.CodeHeaderMismatch {
		t.Fatalf("tools/call before tools/list: %+v, want -32020", m)
	}
	if m := send(2, mcp.MethodToolsList, ""); m.Error != nil {
		t.Fatalf("tools/list: %v", m.Error)
	}
	m := send(3, mcp.MethodToolsCall, call)
	if m.Error != nil {
		t.Fatalf("tools/call after tools/list: %v", m.Error)
	}
	if !strings.Contains(string(m.Result), "Zürich") {
		t.Errorf("result %s does not echo the arguments", m.Result)
	}
}
