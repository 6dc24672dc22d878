package rev20260728

import (
	"encoding/json"
	"fmt"

	"github.com/tasksim/tasksim/mcp"
)

// Error codes this revision defines, from the sub-range -32020..-32099 it
// reserves for the spec; on HTTP each is answered with 400 Bad Request
// (2026-07-28 Overview, "Error Codes"; schema.ts).
const (
	// CodeHeaderMismatch: a required HTTP header is missing, malformed or
	// does not match the body (2026-07-28 Streamable HTTP, "Server
	// Validation").
	CodeHeaderMismatch = -32020
	// CodeMissingRequiredClientCapability: the request needs a capability
	// its _meta did not declare; the data names it (2026-07-28 Overview,
	// "Per-request protocol fields").
	CodeMissingRequiredClientCapability = -32021
	// CodeUnsupportedProtocolVersion: the server does not implement the
	// request's protocol version; the data lists those it does (2026-07-28
	// Versioning, "Protocol Version Negotiation").
	CodeUnsupportedProtocolVersion = -32022
)

// Codes of earlier revisions that implementations of this one MUST NOT
// emit (2026-07-28 Overview, "Error Codes").
const (
	// CodeLegacyResourceNotFound is 2025-11-25's resource-not-found; this
	// revision answers -32602.
	CodeLegacyResourceNotFound = -32002
	// CodeLegacyURLElicitationRequired is 2025-11-25's URL elicitation
	// required.
	CodeLegacyURLElicitationRequired = -32042
)

// UnsupportedVersionData is the data of a -32022 error (schema.ts
// UnsupportedProtocolVersionError): the versions the server supports and
// the one the client asked for.
type UnsupportedVersionData struct {
	Supported []string `json:"supported"`
	Requested string   `json:"requested"`
}

// MissingCapabilityData is the data of a -32021 error (schema.ts
// MissingRequiredClientCapabilityError).
type MissingCapabilityData struct {
	RequiredCapabilities ClientCapabilities `json:"requiredCapabilities"`
}

// UnsupportedProtocolVersion returns the -32022 error for a request that
// asked for version requested.
func UnsupportedProtocolVersion(requested string, supported []string) *mcp.Error {
	if supported == nil {
		supported = []string{} // the schema requires an array
	}
	return withData(mcp.Errorf(CodeUnsupportedProtocolVersion, "Unsupported protocol version"),
		UnsupportedVersionData{Supported: supported, Requested: requested})
}

// MissingRequiredClientCapability returns the -32021 error naming the
// capabilities the request needed.
func MissingRequiredClientCapability(message string, required ClientCapabilities) *mcp.Error {
	return withData(mcp.Errorf(CodeMissingRequiredClientCapability, "%s", message),
		MissingCapabilityData{RequiredCapabilities: required})
}

// HeaderMismatch returns a -32020 error with the given message.
func HeaderMismatch(format string, args ...any) *mcp.Error {
	return mcp.Errorf(CodeHeaderMismatch, format, args...)
}

// DecodeErrorData reads the data of e into v, which should be the data
// type of e's code. An absent data member is an error.
func DecodeErrorData(e *mcp.Error, v any) error {
	if len(e.Data) == 0 {
		return fmt.Errorf("error %d carries no data", e.Code)
	}
	if err := json.Unmarshal(e.Data, v); err != nil {
		return fmt.Errorf("error %d: data: %w", e.Code, err)
	}
	return nil
}

func withData(e *mcp.Error, data any) *mcp.Error {
	// The data types hold strings and raw JSON only: Marshal cannot fail.
	e.Data, _ = json.Marshal(data)
	return e
}
