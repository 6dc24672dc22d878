package rev20260728_test

import (
	"encoding/json"
	"slices"
	"testing"

	"github.com/tasksim/tasksim/mcp"
	rev "github.com/tasksim/tasksim/mcp/rev20260728"
)

func TestErrorCodesAreTheSpecs(t *testing.T) {
	// schema.ts HEADER_MISMATCH, MISSING_REQUIRED_CLIENT_CAPABILITY,
	// UNSUPPORTED_PROTOCOL_VERSION.
	if rev.CodeHeaderMismatch != -32020 || rev.CodeMissingRequiredClientCapability != -32021 || rev.CodeUnsupportedProtocolVersion != -32022 {
		t.Fatal("error codes differ from schema.ts")
	}
}

func TestUnsupportedProtocolVersionData(t *testing.T) {
	e := rev.UnsupportedProtocolVersion("1900-01-01", []string{"2026-07-28", "2025-11-25"})
	if e.Code != rev.CodeUnsupportedProtocolVersion {
		t.Fatalf("code %d", e.Code)
	}
	var d rev.UnsupportedVersionData
	if err := rev.DecodeErrorData(e, &d); err != nil {
		t.Fatal(err)
	}
	if d.Requested != "1900-01-01" || !slices.Equal(d.Supported, []string{"2026-07-28", "2025-11-25"}) {
		t.Fatalf("data %+v", d)
	}
	// An empty list is an empty array, not null: the schema requires an
	// array.
	e = rev.UnsupportedProtocolVersion("x", nil)
	if string(e.Data) != `{"supported":[],"requested":"x"}` {
		t.Fatalf("data %s", e.Data)
	}
}

func TestMissingRequiredClientCapabilityData(t *testing.T) {
	e := rev.MissingRequiredClientCapability("needs elicitation", rev.ClientCapabilities{Elicitation: json.RawMessage(`{}`)})
	if e.Code != rev.CodeMissingRequiredClientCapability || e.Message != "needs elicitation" {
		t.Fatalf("%+v", e)
	}
	if string(e.Data) != `{"requiredCapabilities":{"elicitation":{}}}` {
		t.Fatalf("data %s", e.Data)
	}
	if err := rev.DecodeErrorData(&mcp.Error{Code: -32021}, new(rev.MissingCapabilityData)); err == nil {
		t.Fatal("DecodeErrorData of an error without data succeeded")
	}
}
