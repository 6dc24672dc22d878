package rev20260728

import (
	"encoding/json"
	"maps"

	"github.com/tasksim/tasksim/mcp"
)

// ClientCapabilities are what a client declares in one request's _meta
// (schema.ts ClientCapabilities). They hold for that request only: a
// server MUST NOT infer capabilities from earlier requests (2026-07-28
// Overview, "Per-request protocol fields"). The empty object declares
// none. Members whose shape tasksim does not read are kept raw.
type ClientCapabilities struct {
	Experimental map[string]json.RawMessage `json:"experimental,omitempty"`
	// Roots and Sampling are deprecated as of this revision (SEP-2577).
	Roots       json.RawMessage `json:"roots,omitempty"`
	Sampling    json.RawMessage `json:"sampling,omitempty"`
	Elicitation json.RawMessage `json:"elicitation,omitempty"`
	// Extensions maps extension identifiers to their settings; an empty
	// object declares support with no settings (2026-07-28 Versioning,
	// "Extension Negotiation").
	Extensions map[string]json.RawMessage `json:"extensions,omitempty"`
}

// HasExtension reports whether c declares the extension id.
func (c *ClientCapabilities) HasExtension(id string) bool {
	if c == nil {
		return false
	}
	_, ok := c.Extensions[id]
	return ok
}

// HasElicitation reports whether c declares elicitation, which an
// elicitation/create in inputRequests needs (2026-07-28 Multi Round-Trip
// Requests, "Server Requirements" 7).
func (c *ClientCapabilities) HasElicitation() bool { return c != nil && len(c.Elicitation) > 0 }

// HasSampling reports whether c declares sampling, which a
// sampling/createMessage in inputRequests needs.
func (c *ClientCapabilities) HasSampling() bool { return c != nil && len(c.Sampling) > 0 }

// HasRoots reports whether c declares roots, which a roots/list in
// inputRequests needs.
func (c *ClientCapabilities) HasRoots() bool { return c != nil && len(c.Roots) > 0 }

// PromptsCapability is the server's "prompts" capability.
type PromptsCapability struct {
	ListChanged bool `json:"listChanged,omitempty"`
}

// ResourcesCapability is the server's "resources" capability.
type ResourcesCapability struct {
	Subscribe   bool `json:"subscribe,omitempty"`
	ListChanged bool `json:"listChanged,omitempty"`
}

// ServerCapabilities are what a server advertises in server/discover
// (schema.ts ServerCapabilities). Unlike 2025-11-25 there is no "tasks"
// member: tasks are the extension io.modelcontextprotocol/tasks, declared
// under Extensions.
type ServerCapabilities struct {
	Experimental map[string]json.RawMessage `json:"experimental,omitempty"`
	// Logging is deprecated as of this revision (SEP-2577).
	Logging     json.RawMessage            `json:"logging,omitempty"`
	Completions json.RawMessage            `json:"completions,omitempty"`
	Prompts     *PromptsCapability         `json:"prompts,omitempty"`
	Resources   *ResourcesCapability       `json:"resources,omitempty"`
	Tools       *mcp.ToolsCapability       `json:"tools,omitempty"`
	Extensions  map[string]json.RawMessage `json:"extensions,omitempty"`
}

// HasExtension reports whether c advertises the extension id.
func (c *ServerCapabilities) HasExtension(id string) bool {
	if c == nil {
		return false
	}
	_, ok := c.Extensions[id]
	return ok
}

// emptyObject is the settings of an extension with none.
var emptyObject = json.RawMessage(`{}`)

// WithExtension returns c with the extension id declared with no settings,
// in a map of its own.
func (c ClientCapabilities) WithExtension(id string) ClientCapabilities {
	c.Extensions = withKey(c.Extensions, id)
	return c
}

// WithExtension returns c with the extension id advertised with no
// settings, in a map of its own.
func (c ServerCapabilities) WithExtension(id string) ServerCapabilities {
	c.Extensions = withKey(c.Extensions, id)
	return c
}

func withKey(m map[string]json.RawMessage, id string) map[string]json.RawMessage {
	out := maps.Clone(m)
	if out == nil {
		out = map[string]json.RawMessage{}
	}
	out[id] = emptyObject
	return out
}
