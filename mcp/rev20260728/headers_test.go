package rev20260728_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/tasksim/tasksim/mcp"
	rev "github.com/tasksim/tasksim/mcp/rev20260728"
)

// TestHeaderValueEncoding runs the encoding table of the spec (2026-07-28
// Streamable HTTP, "Value Encoding") both ways, and the cases its rules
// name that the table does not show.
func TestHeaderValueEncoding(t *testing.T) {
	for _, tc := range []struct{ name, value, header string }{
		{"plain ASCII", "us-west1", "us-west1"},
		{"non-ASCII", "Hello, 世界", "=?base64?SGVsbG8sIOS4lueVjA==?="},
		{"leading and trailing spaces", " padded ", "=?base64?IHBhZGRlZCA=?="},
		{"newline", "line1\nline2", "=?base64?bGluZTEKbGluZTI=?="},
		{"sentinel look-alike", "=?base64?literal?=", "=?base64?PT9iYXNlNjQ/bGl0ZXJhbD89?="},
		{"inner space stays plain", "get weather", "get weather"},
		{"URI stays plain", "file:///projects/myapp/config.json", "file:///projects/myapp/config.json"},
		{"tab", "a\tb", "=?base64?YQli?="},
		{"empty", "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := rev.EncodeHeaderValue(tc.value); got != tc.header {
				t.Errorf("EncodeHeaderValue(%q) = %q; want %q", tc.value, got, tc.header)
			}
			got, err := rev.DecodeHeaderValue(tc.header)
			if err != nil || got != tc.value {
				t.Errorf("DecodeHeaderValue(%q) = %q, %v; want %q", tc.header, got, err, tc.value)
			}
		})
	}
}

func TestDecodeHeaderValueRejects(t *testing.T) {
	for _, tc := range []struct{ name, header string }{
		{"not base64", "=?base64?***?="},
		{"unpadded base64", "=?base64?YQ?="},
		{"base64 of invalid UTF-8", "=?base64?/w==?="},
		{"control character", "a\x01b"},
		{"newline", "a\nb"},
		{"raw non-ASCII", "世界"},
		{"DEL", "a\x7fb"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got, err := rev.DecodeHeaderValue(tc.header); !errors.Is(err, rev.ErrBadHeaderValue) {
				t.Errorf("DecodeHeaderValue(%q) = %q, %v; want ErrBadHeaderValue", tc.header, got, err)
			}
		})
	}
	// Markers are case-sensitive: an upper-case one is a plain value.
	if got, err := rev.DecodeHeaderValue("=?BASE64?YQ==?="); err != nil || got != "=?BASE64?YQ==?=" {
		t.Errorf("upper-case markers: %q, %v", got, err)
	}
}

// readHTTPExample reads a request of the spec (testdata/*.http) into its
// headers and its JSON-RPC message.
func readHTTPExample(t *testing.T, name string) (http.Header, *mcp.Message) {
	t.Helper()
	req, err := http.ReadRequest(bufio.NewReader(bytes.NewReader(crlf(readExample(t, name)))))
	if err != nil {
		t.Fatal(err)
	}
	var body bytes.Buffer
	if _, err := body.ReadFrom(req.Body); err != nil {
		t.Fatal(err)
	}
	msg, err := mcp.DecodeMessage(body.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	return req.Header, msg
}

// crlf turns the head of an HTTP example into CRLF lines and gives it the
// Content-Length http.ReadRequest needs to read the body.
func crlf(b []byte) []byte {
	head, body, _ := bytes.Cut(b, []byte("\n\n"))
	var out bytes.Buffer
	for line := range strings.Lines(string(head)) {
		out.WriteString(strings.TrimRight(line, "\n") + "\r\n")
	}
	out.WriteString("Content-Length: " + strconv.Itoa(len(body)) + "\r\n\r\n")
	out.Write(body)
	return out.Bytes()
}

// TestCheckHeadersSpecExamples checks the spec's own requests pass, and
// that SetHeaders writes what they carry.
func TestCheckHeadersSpecExamples(t *testing.T) {
	for _, file := range []string{"core/http-tools-call.http", "core/http-resources-read.http"} {
		t.Run(file, func(t *testing.T) {
			h, msg := readHTTPExample(t, file)
			meta, err := rev.DecodeRequestMeta(msg.Params)
			if err != nil {
				t.Fatal(err)
			}
			if err := rev.CheckHeaders(h, msg.Method, msg.Params, meta.ProtocolVersion, rev.CoreNameRules()); err != nil {
				t.Fatalf("CheckHeaders: %v", err)
			}
			set := http.Header{}
			if err := rev.SetHeaders(set, msg.Method, msg.Params, meta.ProtocolVersion, rev.CoreNameRules()); err != nil {
				t.Fatal(err)
			}
			for _, k := range []string{rev.HeaderProtocolVersion, rev.HeaderMethod, rev.HeaderName} {
				if set.Get(k) != h.Get(k) {
					t.Errorf("SetHeaders %s = %q; the spec sends %q", k, set.Get(k), h.Get(k))
				}
			}
		})
	}
}

func TestCheckHeaders(t *testing.T) {
	const params = `{"name":"get_weather","_meta":{}}`
	good := func() http.Header {
		return http.Header{
			"Mcp-Protocol-Version": {"2026-07-28"},
			"Mcp-Method":           {"tools/call"},
			"Mcp-Name":             {"get_weather"},
		}
	}
	for _, tc := range []struct {
		name   string
		edit   func(http.Header)
		method string
		params string
		header string // the header the error names; "" for none
	}{
		{"good", func(http.Header) {}, "tools/call", params, ""},
		{"no protocol version", func(h http.Header) { h.Del("MCP-Protocol-Version") }, "tools/call", params, "MCP-Protocol-Version"},
		{"other protocol version", func(h http.Header) { h.Set("MCP-Protocol-Version", "2025-11-25") }, "tools/call", params, "MCP-Protocol-Version"},
		{"protocol version twice", func(h http.Header) { h.Add("MCP-Protocol-Version", "2026-07-28") }, "tools/call", params, "MCP-Protocol-Version"},
		{"no method", func(h http.Header) { h.Del("Mcp-Method") }, "tools/call", params, "Mcp-Method"},
		{"other method", func(h http.Header) { h.Set("Mcp-Method", "tools/list") }, "tools/call", params, "Mcp-Method"},
		{"method case differs", func(h http.Header) { h.Set("Mcp-Method", "Tools/Call") }, "tools/call", params, "Mcp-Method"},
		{"method base64", func(h http.Header) { h.Set("Mcp-Method", "=?base64?dG9vbHMvY2FsbA==?=") }, "tools/call", params, "Mcp-Method"},
		{"no name", func(h http.Header) { h.Del("Mcp-Name") }, "tools/call", params, "Mcp-Name"},
		{"other name", func(h http.Header) { h.Set("Mcp-Name", "foo") }, "tools/call", params, "Mcp-Name"},
		{"name base64 of the same", func(h http.Header) { h.Set("Mcp-Name", "=?base64?Z2V0X3dlYXRoZXI=?=") }, "tools/call", params, ""},
		{"name base64 of another", func(h http.Header) { h.Set("Mcp-Name", "=?base64?Zm9v?=") }, "tools/call", params, "Mcp-Name"},
		{"name bad base64", func(h http.Header) { h.Set("Mcp-Name", "=?base64?!!?=") }, "tools/call", params, "Mcp-Name"},
		{"name with a control character", func(h http.Header) { h.Set("Mcp-Name", "get\x01weather") }, "tools/call", params, "Mcp-Name"},
		{"body without name", func(http.Header) {}, "tools/call", `{"_meta":{}}`, "Mcp-Name"},
		{"body name not a string", func(http.Header) {}, "tools/call", `{"name":7}`, "Mcp-Name"},
		{"no name needed for tools/list", func(h http.Header) {
			h.Set("Mcp-Method", "tools/list")
			h.Del("Mcp-Name")
		}, "tools/list", `{"_meta":{}}`, ""},
		{"non-ASCII name", func(h http.Header) { h.Set("Mcp-Name", rev.EncodeHeaderValue("wetter-München")) }, "tools/call", `{"name":"wetter-München"}`, ""},
		{"non-ASCII name sent raw", func(h http.Header) { h.Set("Mcp-Name", "wetter-München") }, "tools/call", `{"name":"wetter-München"}`, "Mcp-Name"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := good()
			tc.edit(h)
			err := rev.CheckHeaders(h, tc.method, json.RawMessage(tc.params), "2026-07-28", rev.CoreNameRules())
			if tc.header == "" {
				if err != nil {
					t.Fatalf("CheckHeaders = %v", err)
				}
				return
			}
			var he *rev.HeaderError
			if !errors.As(err, &he) || !strings.EqualFold(he.Header, tc.header) {
				t.Fatalf("CheckHeaders = %v; want a HeaderError for %s", err, tc.header)
			}
			if !errors.Is(err, rev.ErrHeaderMismatch) || he.RPCError().Code != rev.CodeHeaderMismatch {
				t.Errorf("%v: not ErrHeaderMismatch / -32020", err)
			}
		})
	}
}

// TestHeaderMismatchMessage checks the error text has the spec example's
// shape.
func TestHeaderMismatchMessage(t *testing.T) {
	h := http.Header{"Mcp-Protocol-Version": {"2026-07-28"}, "Mcp-Method": {"tools/call"}, "Mcp-Name": {"foo"}}
	err := rev.CheckHeaders(h, "tools/call", json.RawMessage(`{"name":"bar"}`), "2026-07-28", rev.CoreNameRules())
	const want = "Header mismatch: Mcp-Name header value 'foo' does not match body value 'bar'"
	if err == nil || err.Error() != want {
		t.Fatalf("error %q; want %q", err, want)
	}
}

func TestSetHeadersEncodesAndFails(t *testing.T) {
	h := http.Header{}
	if err := rev.SetHeaders(h, "resources/read", json.RawMessage(`{"uri":" x "}`), "2026-07-28", rev.CoreNameRules()); err != nil {
		t.Fatal(err)
	}
	if got := h.Get(rev.HeaderName); got != "=?base64?IHgg?=" {
		t.Errorf("Mcp-Name = %q", got)
	}
	if err := rev.SetHeaders(http.Header{}, "prompts/get", json.RawMessage(`{}`), "2026-07-28", rev.CoreNameRules()); err == nil {
		t.Error("SetHeaders without params.name succeeded")
	}
}

func TestNameRulesWith(t *testing.T) {
	core := rev.CoreNameRules()
	all := core.With(rev.NameRules{"tasks/get": "taskId"})
	if all["tasks/get"] != "taskId" || all["tools/call"] != "name" {
		t.Fatalf("With = %v", all)
	}
	if _, ok := core["tasks/get"]; ok {
		t.Fatal("With changed its receiver")
	}
}
