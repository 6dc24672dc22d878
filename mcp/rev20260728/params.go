package rev20260728

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"strings"
)

// XMCPHeader is the inputSchema keyword that marks a tool argument to be
// mirrored into an Mcp-Param header (2026-07-28 Streamable HTTP, "Custom
// Headers from Tool Parameters").
const XMCPHeader = "x-mcp-header"

// ParamHeader is one tool argument a Streamable HTTP client mirrors into
// the header Mcp-Param-{Name}, read from the tool's inputSchema by
// ParamHeaders.
type ParamHeader struct {
	// Name is the x-mcp-header value: the header is HeaderParamPrefix+Name.
	Name string
	// Path is the chain of properties keys from the schema's root to the
	// argument.
	Path []string
	// Type is the argument's JSON Schema type: string, integer or boolean.
	Type string
}

// Header returns the name of the header that carries p.
func (p ParamHeader) Header() string { return HeaderParamPrefix + p.Name }

// ParamHeaders returns the arguments inputSchema marks with x-mcp-header,
// in the order of their header names, or an error when an annotation breaks
// the rules of "Schema Extension" (2026-07-28 Streamable HTTP): a name that
// is empty or not an RFC 9110 token, a name given twice (case-insensitively),
// a type other than string, integer or boolean, or an annotation that is
// not reached from the root through properties keys alone. A client MUST
// leave out a tool whose annotations are invalid; a server should declare
// none.
func ParamHeaders(inputSchema json.RawMessage) ([]ParamHeader, error) {
	if len(inputSchema) == 0 || !bytes.Contains(inputSchema, []byte(XMCPHeader)) && !bytes.Contains(inputSchema, []byte(`\u`)) {
		// No annotation, not even one with an escaped character in its key.
		return nil, nil
	}
	var root any
	if err := json.Unmarshal(inputSchema, &root); err != nil {
		return nil, fmt.Errorf("inputSchema: %w", err)
	}
	var out []ParamHeader
	if err := collectParamHeaders(root, nil, true, &out); err != nil {
		return nil, err
	}
	slices.SortFunc(out, func(a, b ParamHeader) int { return strings.Compare(a.Name, b.Name) })
	for i := 1; i < len(out); i++ {
		if strings.EqualFold(out[i-1].Name, out[i].Name) {
			return nil, fmt.Errorf("%s %q is given twice", XMCPHeader, out[i].Name)
		}
	}
	return out, nil
}

// collectParamHeaders walks a schema node at path. reachable says whether
// the node is reached from the root through properties keys alone.
func collectParamHeaders(node any, path []string, reachable bool, out *[]ParamHeader) error {
	switch n := node.(type) {
	case []any:
		for _, v := range n {
			if err := collectParamHeaders(v, path, false, out); err != nil {
				return err
			}
		}
	case map[string]any:
		if v, ok := n[XMCPHeader]; ok {
			p, err := paramHeaderAt(n, v, path, reachable)
			if err != nil {
				return err
			}
			*out = append(*out, p)
		}
		// Sorted, so that of two faults the same one is reported each time.
		for _, k := range slices.Sorted(maps.Keys(n)) {
			if props, ok := n[k].(map[string]any); ok && k == "properties" {
				for _, name := range slices.Sorted(maps.Keys(props)) {
					if err := collectParamHeaders(props[name], append(slices.Clip(path), name), reachable, out); err != nil {
						return err
					}
				}
				continue
			}
			if err := collectParamHeaders(n[k], path, false, out); err != nil {
				return err
			}
		}
	}
	return nil
}

func paramHeaderAt(schema map[string]any, v any, path []string, reachable bool) (ParamHeader, error) {
	name, _ := v.(string)
	where := "/" + strings.Join(path, "/")
	switch {
	case !reachable || len(path) == 0:
		return ParamHeader{}, fmt.Errorf("%s at %s: only a property reached through properties keys may carry it", XMCPHeader, where)
	case !isToken(name):
		return ParamHeader{}, fmt.Errorf("%s at %s: %q is not an HTTP field-name token", XMCPHeader, where, name)
	}
	typ, _ := schema["type"].(string)
	if typ != "string" && typ != "integer" && typ != "boolean" {
		return ParamHeader{}, fmt.Errorf("%s at %s: type %q is not string, integer or boolean", XMCPHeader, where, typ)
	}
	return ParamHeader{Name: name, Path: path, Type: typ}, nil
}

// isToken reports whether s is an RFC 9110 token (1*tchar).
func isToken(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0) {
			return false
		}
	}
	return true
}

// argumentAt returns the raw value at path in a tools/call's arguments,
// or nil when there is none or it is null: the header is then omitted
// (2026-07-28 Streamable HTTP, "Schema Extension": "If no value is present
// at that path in the call arguments, the header is omitted").
func argumentAt(arguments json.RawMessage, path []string) json.RawMessage {
	v := arguments
	for _, key := range path {
		var members map[string]json.RawMessage
		if json.Unmarshal(v, &members) != nil {
			return nil
		}
		if v = members[key]; v == nil {
			return nil
		}
	}
	if isNull(v) {
		return nil
	}
	return v
}

// headerText is the text a header carries for the argument value raw, as
// "Value Encoding" converts it before encoding: a string as is, a number
// in decimal, a boolean as true or false. ok is false for an object or an
// array, which no annotation may name.
func headerText(raw json.RawMessage) (text string, ok bool) {
	raw = bytes.TrimSpace(raw)
	switch {
	case len(raw) == 0:
		return "", false
	case raw[0] == '"':
		var s string
		return s, json.Unmarshal(raw, &s) == nil
	case string(raw) == "true", string(raw) == "false":
		return string(raw), true
	case raw[0] == '-' || raw[0] >= '0' && raw[0] <= '9':
		f, err := strconv.ParseFloat(string(raw), 64)
		if err != nil {
			return "", false
		}
		return strconv.FormatFloat(f, 'f', -1, 64), true
	}
	return "", false
}

// SetParamHeaders sets the Mcp-Param headers of a tools/call whose tool
// declares params (ParamHeaders of its inputSchema), as a client MUST: one
// header for each argument present and not null, its value converted and
// encoded with EncodeHeaderValue (2026-07-28 Streamable HTTP, "Client
// Behavior").
func SetParamHeaders(h http.Header, arguments json.RawMessage, params []ParamHeader) {
	for _, p := range params {
		raw := argumentAt(arguments, p.Path)
		if raw == nil {
			continue
		}
		if text, ok := headerText(raw); ok {
			h.Set(p.Header(), EncodeHeaderValue(text))
		}
	}
}

// CheckParamHeaders checks the Mcp-Param headers of a tools/call against
// its arguments, as a server that reads the body MUST (2026-07-28
// Streamable HTTP, "Server Behavior for Custom Headers", "Server
// Validation"): for each of params, an argument present and not null
// needs its header, whose value, decoded from the Base64 sentinel form
// when it has it, equals the argument (integers compared as numbers); a
// header without an argument, a header given twice, and a value with a
// character a field value may not hold or a broken Base64 sentinel are
// refused. The error is a *HeaderError (-32020, HTTP 400).
func CheckParamHeaders(h http.Header, arguments json.RawMessage, params []ParamHeader) error {
	for _, p := range params {
		if err := checkParamHeader(h, arguments, p); err != nil {
			return err
		}
	}
	return nil
}

func checkParamHeader(h http.Header, arguments json.RawMessage, p ParamHeader) error {
	name := p.Header()
	values := h.Values(name)
	raw := argumentAt(arguments, p.Path)
	switch {
	case raw == nil && len(values) == 0:
		return nil
	case raw == nil:
		return &HeaderError{Header: name, Reason: "header is given but the body has no value at arguments." + strings.Join(p.Path, ".")}
	case len(values) == 0:
		return &HeaderError{Header: name, Reason: "header is missing: the body has a value at arguments." + strings.Join(p.Path, ".")}
	case len(values) > 1:
		return &HeaderError{Header: name, Reason: "header is given more than once"}
	}
	v, err := DecodeHeaderValue(values[0])
	if err != nil {
		return &HeaderError{Header: name, Reason: "header value is malformed: " + err.Error()}
	}
	body, ok := headerText(raw)
	if !ok {
		return &HeaderError{Header: name, Reason: "the body value is not a string, a number or a boolean"}
	}
	if v == body || isNumber(raw) && sameNumber(v, body) {
		return nil
	}
	return &HeaderError{Header: name, Reason: fmt.Sprintf("header value '%s' does not match body value '%s'", v, body)}
}

func isNumber(raw json.RawMessage) bool {
	raw = bytes.TrimSpace(raw)
	return len(raw) > 0 && (raw[0] == '-' || raw[0] >= '0' && raw[0] <= '9')
}

// sameNumber compares two decimal texts as numbers: a server SHOULD
// compare integers numerically, so 42.0 equals 42 (2026-07-28 Streamable
// HTTP, "Server Validation").
func sameNumber(a, b string) bool {
	x, err1 := strconv.ParseFloat(strings.TrimSpace(a), 64)
	y, err2 := strconv.ParseFloat(b, 64)
	return err1 == nil && err2 == nil && x == y
}

// ToolHeaders is implemented by a stateless endpoint whose tools declare
// x-mcp-header arguments. A Streamable HTTP transport finds it by type
// assertion and checks a tools/call's Mcp-Param headers against
// ParamHeaders(tool) with CheckParamHeaders before the endpoint sees the
// request. ParamHeaders returns nil for a tool that declares none or that
// the endpoint does not know; what it returns is not changed by the caller.
type ToolHeaders interface {
	ParamHeaders(tool string) []ParamHeader
}
