package streamhttp

import (
	"strings"

	"github.com/tasksim/tasksim/mcp"
)

// Header names of Streamable HTTP (2025-11-25 Transports, "Session
// Management", "Protocol Version Header", "Resumability and Redelivery"), in
// the canonical form net/http stores them under.
const (
	headerSession     = "Mcp-Session-Id"
	headerProtocol    = "Mcp-Protocol-Version"
	headerLastEventID = "Last-Event-Id"
)

// Shared header values. net/http never modifies a header's value slice, so
// one slice serves every response and spares an allocation per request.
var (
	valueJSON        = []string{"application/json"}
	valueEventStream = []string{"text/event-stream"}
	valueNoCache     = []string{"no-cache"}
	valueNoBuffering = []string{"no"}
	valueAllow       = []string{"GET, POST, DELETE"}
)

// accepts reports whether the Accept header values list a media range that
// covers typ/sub with a non-zero quality. The most specific matching range
// decides (RFC 9110 §12.5.1), so "text/*;q=0, text/event-stream" accepts
// text/event-stream. Wildcards count: "*/*" lists every type, "text/*" every
// text type; "listing" a type, as the transport asks of clients, is what a
// media range does. An absent header lists nothing.
func accepts(values []string, typ, sub string) bool {
	best, accepted := 0, false
	for _, v := range values {
		for v != "" {
			var elem string
			elem, v, _ = strings.Cut(v, ",")
			rng, params, _ := strings.Cut(elem, ";")
			rt, rs, ok := strings.Cut(strings.TrimSpace(rng), "/")
			if !ok {
				continue
			}
			rt, rs = strings.TrimSpace(rt), strings.TrimSpace(rs)
			spec := 0
			switch {
			case strings.EqualFold(rt, typ) && strings.EqualFold(rs, sub):
				spec = 3
			case strings.EqualFold(rt, typ) && rs == "*":
				spec = 2
			case rt == "*" && rs == "*":
				spec = 1
			}
			if spec > best {
				best, accepted = spec, !zeroQuality(params)
			}
		}
	}
	return accepted
}

// zeroQuality reports whether media-range parameters carry q=0.
func zeroQuality(params string) bool {
	for params != "" {
		var p string
		p, params, _ = strings.Cut(params, ";")
		k, v, _ := strings.Cut(p, "=")
		if !strings.EqualFold(strings.TrimSpace(k), "q") {
			continue
		}
		v = strings.TrimSpace(v)
		if v == "" || v[0] != '0' {
			return false
		}
		return strings.Trim(v[1:], ".0") == ""
	}
	return false
}

// isJSONContentType reports whether a Content-Type value is
// application/json. Parameters are allowed; a charset, if given, must be
// UTF-8, the only encoding JSON-RPC messages may use (2025-11-25
// Transports: messages "MUST be UTF-8 encoded").
func isJSONContentType(v string) bool {
	mt, params, _ := strings.Cut(v, ";")
	if !strings.EqualFold(strings.TrimSpace(mt), "application/json") {
		return false
	}
	for params != "" {
		var p string
		p, params, _ = strings.Cut(params, ";")
		k, val, _ := strings.Cut(p, "=")
		if strings.EqualFold(strings.TrimSpace(k), "charset") {
			val = strings.Trim(strings.TrimSpace(val), `"`)
			if !strings.EqualFold(val, "utf-8") && !strings.EqualFold(val, "utf8") {
				return false
			}
		}
	}
	return true
}

// protocolVersionOK checks the MCP-Protocol-Version header: absent is fine
// (the server then assumes mcp.DefaultHTTPProtocolVersion), present it must
// name a supported revision (2025-11-25 Transports, "Protocol Version
// Header": an invalid or unsupported one "MUST" get 400).
func protocolVersionOK(values []string) bool {
	for _, v := range values {
		if !mcp.IsSupportedProtocolVersion(strings.TrimSpace(v)) {
			return false
		}
	}
	return true
}
