package rev20260728

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"strings"
	"unicode/utf8"

	"github.com/tasksim/tasksim/mcp"
)

// Streamable HTTP headers that mirror body fields so that intermediaries
// can route without reading the body (2026-07-28 Streamable HTTP,
// "Request Metadata"). Names are case-insensitive; values are not.
const (
	// HeaderProtocolVersion MUST be on every POST and equal the _meta
	// protocolVersion.
	HeaderProtocolVersion = "MCP-Protocol-Version"
	// HeaderMethod MUST be on every request and equal the body's method.
	HeaderMethod = "Mcp-Method"
	// HeaderName MUST be on the requests NameRules list and equal the
	// params member they name, Base64-encoded when it needs to be.
	HeaderName = "Mcp-Name"
	// HeaderParamPrefix starts the headers that mirror tool arguments marked
	// x-mcp-header ("Custom Headers from Tool Parameters").
	HeaderParamPrefix = "Mcp-Param-"
)

// The Base64 sentinel around a header value that cannot travel as plain
// ASCII (2026-07-28 Streamable HTTP, "Value Encoding"). The markers are
// case-sensitive.
const (
	base64Prefix = "=?base64?"
	base64Suffix = "?="
)

// EncodeHeaderValue returns v as a client sends it in Mcp-Name or an
// Mcp-Param header: as is when it is plain ASCII, else as
// =?base64?{Base64 of its UTF-8}?=. A value needs the encoding when it has
// a byte outside visible ASCII and space (non-ASCII, a control character,
// a tab), leading or trailing whitespace, or the shape of the sentinel
// itself (2026-07-28 Streamable HTTP, "Value Encoding").
func EncodeHeaderValue(v string) string {
	if isPlainHeaderValue(v) {
		return v
	}
	return base64Prefix + base64.StdEncoding.EncodeToString([]byte(v)) + base64Suffix
}

func isPlainHeaderValue(v string) bool {
	if v != strings.TrimSpace(v) || looksEncoded(v) {
		return false
	}
	for i := 0; i < len(v); i++ {
		if v[i] < 0x20 || v[i] > 0x7e {
			return false
		}
	}
	return true
}

func looksEncoded(v string) bool {
	return len(v) >= len(base64Prefix)+len(base64Suffix) &&
		strings.HasPrefix(v, base64Prefix) && strings.HasSuffix(v, base64Suffix)
}

// ErrBadHeaderValue is matched by the error of DecodeHeaderValue.
var ErrBadHeaderValue = errors.New("malformed header value")

// DecodeHeaderValue returns the value a header carries, decoding the
// Base64 sentinel form, as a server must before it compares the value with
// the body. A value with a character RFC 9110 does not allow in a field
// value (only visible ASCII, space and tab are), a sentinel whose content
// is not standard Base64, or one that does not decode to UTF-8, is an
// error matching ErrBadHeaderValue (2026-07-28 Streamable HTTP, "Value
// Encoding", "Server Validation").
func DecodeHeaderValue(v string) (string, error) {
	for i := 0; i < len(v); i++ {
		if c := v[i]; (c < 0x20 && c != '\t') || c > 0x7e {
			return "", fmt.Errorf("%w: byte 0x%02x at %d", ErrBadHeaderValue, c, i)
		}
	}
	if !looksEncoded(v) {
		return v, nil
	}
	b, err := base64.StdEncoding.Strict().DecodeString(v[len(base64Prefix) : len(v)-len(base64Suffix)])
	if err != nil {
		return "", fmt.Errorf("%w: base64: %v", ErrBadHeaderValue, err)
	}
	if !utf8.Valid(b) {
		return "", fmt.Errorf("%w: base64 content is not UTF-8", ErrBadHeaderValue)
	}
	return string(b), nil
}

// NameRules maps a method to the params member its Mcp-Name header
// mirrors. The core's are CoreNameRules; an extension adds its own with
// With (the tasks extension adds taskId for tasks/get, tasks/update and
// tasks/cancel).
type NameRules map[string]string

// CoreNameRules returns the core's rules: params.name for tools/call and
// prompts/get, params.uri for resources/read (2026-07-28 Streamable HTTP,
// "Standard Request Headers").
func CoreNameRules() NameRules {
	return NameRules{mcp.MethodToolsCall: "name", "prompts/get": "name", "resources/read": "uri"}
}

// With returns the union of r and more, in a map of its own.
func (r NameRules) With(more NameRules) NameRules {
	out := maps.Clone(r)
	if out == nil {
		out = NameRules{}
	}
	maps.Copy(out, more)
	return out
}

// ErrHeaderMismatch is matched by every *HeaderError.
var ErrHeaderMismatch = errors.New("header mismatch")

// HeaderError says which routing header is missing, malformed or
// different from the body. The server answers -32020 with HTTP 400
// (2026-07-28 Streamable HTTP, "Server Validation").
type HeaderError struct {
	Header string
	Reason string
}

func (e *HeaderError) Error() string { return "Header mismatch: " + e.Header + " " + e.Reason }

// Is makes a *HeaderError match ErrHeaderMismatch.
func (e *HeaderError) Is(target error) bool { return target == ErrHeaderMismatch }

// RPCError returns the error response's error object: -32020.
func (e *HeaderError) RPCError() *mcp.Error { return HeaderMismatch("%s", e.Error()) }

// CheckHeaders checks the routing headers of a POST against its body, as a
// server that reads the body must (2026-07-28 Streamable HTTP, "Server
// Validation"): MCP-Protocol-Version present and equal to version (the
// _meta protocolVersion), Mcp-Method present and equal to method, and for
// a method in rules Mcp-Name present and, once decoded, equal to the
// params member the rule names. A header given twice is malformed. The
// error is a *HeaderError; it does not look at Mcp-Param headers.
func CheckHeaders(h http.Header, method string, params json.RawMessage, version string, rules NameRules) error {
	return checkHeaders(h, method, paramsMembers(params), version, rules)
}

// checkHeaders is CheckHeaders of params whose members are members (nil
// when params is not an object).
func checkHeaders(h http.Header, method string, members map[string]json.RawMessage, version string, rules NameRules) error {
	if err := checkHeader(h, HeaderProtocolVersion, version, false); err != nil {
		return err
	}
	if err := checkHeader(h, HeaderMethod, method, false); err != nil {
		return err
	}
	member, ok := rules[method]
	if !ok {
		return nil
	}
	body, err := nameMember(members, member)
	if err != nil {
		return &HeaderError{Header: HeaderName, Reason: err.Error()}
	}
	return checkHeader(h, HeaderName, body, true)
}

func checkHeader(h http.Header, name, body string, encoded bool) error {
	values := h.Values(name)
	switch {
	case len(values) == 0:
		return &HeaderError{Header: name, Reason: "header is missing"}
	case len(values) > 1:
		return &HeaderError{Header: name, Reason: "header is given more than once"}
	}
	v := values[0]
	if encoded {
		decoded, err := DecodeHeaderValue(v)
		if err != nil {
			return &HeaderError{Header: name, Reason: "header value is malformed: " + err.Error()}
		}
		v = decoded
	} else if _, err := DecodeHeaderValue(v); err != nil || looksEncoded(v) {
		// Only Mcp-Name and Mcp-Param may use the sentinel; here it, like
		// a character outside the field-value set, is malformed.
		return &HeaderError{Header: name, Reason: fmt.Sprintf("header value %q is malformed", v)}
	}
	if v != body {
		return &HeaderError{Header: name, Reason: fmt.Sprintf("header value '%s' does not match body value '%s'", v, body)}
	}
	return nil
}

// nameMember returns the string member of params (whose members are
// members, nil when params is not an object) a Mcp-Name rule names.
func nameMember(members map[string]json.RawMessage, member string) (string, error) {
	if members == nil {
		return "", errors.New("body has no params object")
	}
	var s string
	if raw, ok := members[member]; !ok || json.Unmarshal(raw, &s) != nil {
		return "", fmt.Errorf("body has no string params.%s", member)
	}
	return s, nil
}

// SetHeaders sets the routing headers of a POST the way a client must:
// MCP-Protocol-Version, Mcp-Method, and for a method in rules Mcp-Name,
// encoded with EncodeHeaderValue (2026-07-28 Streamable HTTP, "Standard
// Request Headers"). It fails when the params lack the member a rule
// names.
func SetHeaders(h http.Header, method string, params json.RawMessage, version string, rules NameRules) error {
	h.Set(HeaderProtocolVersion, version)
	h.Set(HeaderMethod, method)
	member, ok := rules[method]
	if !ok {
		return nil
	}
	v, err := nameMember(paramsMembers(params), member)
	if err != nil {
		return fmt.Errorf("%s: %w", HeaderName, err)
	}
	h.Set(HeaderName, EncodeHeaderValue(v))
	return nil
}
