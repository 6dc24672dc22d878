package check

import (
	"strconv"
	"strings"

	"github.com/tasksim/tasksim/traces"
)

// The Streamable HTTP rules of 2026-07-28: the routing headers and the
// absence of sessions.

func head26Of(rec traces.Record) *head26 {
	h := &head26{method: rec.HTTP.Method, rec: rec.Index}
	for _, f := range rec.HTTP.Header {
		var v *string
		var has *bool
		switch {
		case strings.EqualFold(f.Name, "Mcp-Method"):
			v, has = &h.mcpMethod, &h.hasMethod
		case strings.EqualFold(f.Name, "Mcp-Name"):
			v, has = &h.mcpName, &h.hasName
		case strings.EqualFold(f.Name, "MCP-Protocol-Version"):
			v, has = &h.version, &h.hasVersion
		default:
			continue
		}
		if !*has {
			*v, *has = f.Value, true
		}
	}
	return h
}

// responseHead26 judges HTTP-STATELESS on the head of an answer: the
// revision has no sessions, so a server never mints an Mcp-Session-Id,
// and a modern server answers GET and DELETE 405 (2026-07-28 Streamable
// HTTP, "Earlier Streamable HTTP Revisions"; notes 1.5).
func (c *Checker) responseHead26(rec traces.Record) {
	h := c.rev26.heads[exKey{rec.Conn, rec.Exchange}]
	if h == nil || rec.HTTP == nil {
		return
	}
	h.status = rec.HTTP.Status
	if id, ok := rec.HTTP.Get("Mcp-Session-Id"); ok {
		c.fail(RuleHTTPStateless, "a 2026-07-28 "+h.method+" was answered with Mcp-Session-Id "+id+"; the revision has no sessions", h.rec, rec.Index)
		return
	}
	if h.method == "GET" || h.method == "DELETE" {
		delete(c.rev26.heads, exKey{rec.Conn, rec.Exchange}) // nothing more to judge of it
		c.judge(RuleHTTPStateless, h.status == 405, "a 2026-07-28 "+h.method+" was answered "+strconv.Itoa(h.status)+", want 405", h.rec, rec.Index)
		return
	}
	c.ok(RuleHTTPStateless)
}

// headerProblem says what is wrong with the routing headers of a request
// over HTTP: Mcp-Method MUST be on every request and equal the method,
// Mcp-Name on tools/call, prompts/get, resources/read and tasks/* and
// equal the name, uri or taskId, MCP-Protocol-Version equal the _meta's
// protocolVersion (notes 1.2; Tasks, "Streamable HTTP: Routing Headers").
// A value sent base64-encoded (=?base64?...?=) is compared decoded.
func headerProblem(h *head26, method string, p *wire26Params) string {
	if h == nil || h.method != "POST" {
		return ""
	}
	var want *string
	switch method {
	case "tools/call", "prompts/get":
		want = p.Name
	case "resources/read":
		want = p.URI
	case m26Get, m26Update, m26Cancel:
		want = p.TaskID
	}
	switch {
	case !h.hasMethod:
		return "it has no Mcp-Method header"
	case decodeHeader(h.mcpMethod) != method:
		return "its Mcp-Method " + strconv.Quote(h.mcpMethod) + " is not its method " + strconv.Quote(method)
	case want != nil && !h.hasName:
		return "it has no Mcp-Name header"
	case want != nil && decodeHeader(h.mcpName) != *want:
		return "its Mcp-Name " + strconv.Quote(h.mcpName) + " is not " + strconv.Quote(*want)
	case h.hasVersion && p.Meta.Version != "" && h.version != p.Meta.Version:
		return "its MCP-Protocol-Version " + strconv.Quote(h.version) + " is not its _meta protocolVersion " + strconv.Quote(p.Meta.Version)
	}
	return ""
}
