package rev20260728_test

import (
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"

	rev "github.com/tasksim/tasksim/mcp/rev20260728"
)

// TestParamHeaders reads the x-mcp-header annotations of input schemas,
// valid and not, by the rules of 2026-07-28 Streamable HTTP, "Schema
// Extension".
func TestParamHeaders(t *testing.T) {
	got, err := rev.ParamHeaders(json.RawMessage(`{"type":"object","properties":{` +
		`"region":{"type":"string","x-mcp-header":"Region"},` +
		`"opts":{"type":"object","properties":{"dry":{"type":"boolean","x-mcp-header":"Dry-Run"}}},` +
		`"n":{"type":"integer","x-mcp-header":"N"},"q":{"type":"string"}}}`))
	if err != nil {
		t.Fatal(err)
	}
	want := []rev.ParamHeader{{Name: "Dry-Run", Path: []string{"opts", "dry"}, Type: "boolean"},
		{Name: "N", Path: []string{"n"}, Type: "integer"}, {Name: "Region", Path: []string{"region"}, Type: "string"}}
	if !slices.EqualFunc(got, want, func(a, b rev.ParamHeader) bool {
		return a.Name == b.Name && a.Type == b.Type && slices.Equal(a.Path, b.Path)
	}) {
		t.Errorf("ParamHeaders = %+v, want %+v", got, want)
	}
	if got, err := rev.ParamHeaders(json.RawMessage(`{"type":"object","properties":{"a":{"type":"string"}}}`)); err != nil || got != nil {
		t.Errorf("no annotation: %v, %v; want nil, nil", got, err)
	}
	if got, err := rev.ParamHeaders(json.RawMessage(`{"properties":{"a":{"type":"string","x\u002dmcp-header":"A"}}}`)); err != nil || len(got) != 1 || got[0].Name != "A" {
		t.Errorf("an escaped key: %+v, %v; want the annotation A", got, err)
	}
	bad := []struct{ name, schema, says string }{
		{"empty name", `{"properties":{"v":{"type":"string","x-mcp-header":""}}}`, "token"},
		{"space", `{"properties":{"v":{"type":"string","x-mcp-header":"My Region"}}}`, "token"},
		{"colon", `{"properties":{"v":{"type":"string","x-mcp-header":"Region:Primary"}}}`, "token"},
		{"non-ASCII", `{"properties":{"v":{"type":"string","x-mcp-header":"Région"}}}`, "token"},
		{"control", `{"properties":{"v":{"type":"string","x-mcp-header":"Region\t1"}}}`, "token"},
		{"not a string", `{"properties":{"v":{"type":"string","x-mcp-header":7}}}`, "token"},
		{"number", `{"properties":{"v":{"type":"number","x-mcp-header":"Score"}}}`, "type"},
		{"object", `{"properties":{"v":{"type":"object","x-mcp-header":"Data"}}}`, "type"},
		{"duplicate, other case", `{"properties":{"a":{"type":"string","x-mcp-header":"MyField"},"b":{"type":"string","x-mcp-header":"myfield"}}}`, "twice"},
		{"under items", `{"properties":{"v":{"type":"array","items":{"type":"string","x-mcp-header":"V"}}}}`, "only a property"},
		{"under anyOf", `{"anyOf":[{"properties":{"v":{"type":"string","x-mcp-header":"V"}}}]}`, "only a property"},
		{"at the root", `{"type":"string","x-mcp-header":"V"}`, "only a property"},
	}
	for _, c := range bad {
		if _, err := rev.ParamHeaders(json.RawMessage(c.schema)); err == nil || !strings.Contains(err.Error(), c.says) {
			t.Errorf("%s: err %v, want one saying %q", c.name, err, c.says)
		}
	}
}

// TestSetParamHeadersRoundTrip sets the Mcp-Param headers of arguments as
// a client must, and checks that a server accepts what it set: values
// converted and Base64-encoded where "Value Encoding" says, null and
// absent arguments without a header.
func TestSetParamHeadersRoundTrip(t *testing.T) {
	params, err := rev.ParamHeaders(json.RawMessage(`{"properties":{` +
		`"s":{"type":"string","x-mcp-header":"S"},"n":{"type":"integer","x-mcp-header":"N"},` +
		`"b":{"type":"boolean","x-mcp-header":"B"},"z":{"type":"string","x-mcp-header":"Z"},"gone":{"type":"string","x-mcp-header":"Gone"}}}`))
	if err != nil {
		t.Fatal(err)
	}
	args := json.RawMessage(`{"s":" padded ","n":-7,"b":true,"z":null}`)
	h := http.Header{}
	rev.SetParamHeaders(h, args, params)
	want := http.Header{"Mcp-Param-S": {"=?base64?IHBhZGRlZCA=?="}, "Mcp-Param-N": {"-7"}, "Mcp-Param-B": {"true"}}
	if len(h) != len(want) {
		t.Errorf("headers %v, want %v", h, want)
	}
	for k, v := range want {
		if got := h.Get(k); got != v[0] {
			t.Errorf("%s = %q, want %q", k, got, v[0])
		}
	}
	if err := rev.CheckParamHeaders(h, args, params); err != nil {
		t.Errorf("CheckParamHeaders of what SetParamHeaders set: %v", err)
	}
}
