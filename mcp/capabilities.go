package mcp

import "encoding/json"

// Empty is a presence-only capability: it marshals as {}.
type Empty struct{}

// Implementation names a client or server in initialize.
type Implementation struct {
	Name    string `json:"name"`
	Title   string `json:"title,omitempty"`
	Version string `json:"version"`
}

// ToolsCapability is the server's "tools" capability.
type ToolsCapability struct {
	ListChanged bool `json:"listChanged,omitempty"`
}

// TaskRequests lists the request types that may be task-augmented
// (2025-11-25 Tasks, "Capabilities").
type TaskRequests struct {
	Tools       *ToolsTaskRequests       `json:"tools,omitempty"`
	Sampling    *SamplingTaskRequests    `json:"sampling,omitempty"`
	Elicitation *ElicitationTaskRequests `json:"elicitation,omitempty"`
}

// ToolsTaskRequests says tools/call may be task-augmented.
type ToolsTaskRequests struct {
	Call *Empty `json:"call,omitempty"`
}

// SamplingTaskRequests says sampling/createMessage may be task-augmented.
type SamplingTaskRequests struct {
	CreateMessage *Empty `json:"createMessage,omitempty"`
}

// ElicitationTaskRequests says elicitation/create may be task-augmented.
type ElicitationTaskRequests struct {
	Create *Empty `json:"create,omitempty"`
}

// ResponsesCapability is SEP-1905's tasks.responses: the response modes a
// party supports.
type ResponsesCapability struct {
	Modes []ResponseMode `json:"modes,omitempty"`
}

// StreamingCapability is SEP-2679's tasks.streaming (§2).
type StreamingCapability struct {
	Partial *Empty `json:"partial,omitempty"`
}

// TasksCapability is the "tasks" capability of either party, with the
// members both SEPs add.
type TasksCapability struct {
	List      *Empty               `json:"list,omitempty"`
	Cancel    *Empty               `json:"cancel,omitempty"`
	Requests  *TaskRequests        `json:"requests,omitempty"`
	Responses *ResponsesCapability `json:"responses,omitempty"`
	Streaming *StreamingCapability `json:"streaming,omitempty"`
}

// PartialStreaming reports whether tasks.streaming.partial is declared.
func (t *TasksCapability) PartialStreaming() bool {
	return t != nil && t.Streaming != nil && t.Streaming.Partial != nil
}

// ResponseModes returns the declared tasks.responses.modes.
func (t *TasksCapability) ResponseModes() []ResponseMode {
	if t == nil || t.Responses == nil {
		return nil
	}
	return t.Responses.Modes
}

// ToolCall reports whether tasks.requests.tools.call is declared.
func (t *TasksCapability) ToolCall() bool {
	return t != nil && t.Requests != nil && t.Requests.Tools != nil && t.Requests.Tools.Call != nil
}

// ServerCapabilities are a server's capabilities in InitializeResult.
type ServerCapabilities struct {
	Tools        *ToolsCapability           `json:"tools,omitempty"`
	Tasks        *TasksCapability           `json:"tasks,omitempty"`
	Logging      *Empty                     `json:"logging,omitempty"`
	Prompts      json.RawMessage            `json:"prompts,omitempty"`
	Resources    json.RawMessage            `json:"resources,omitempty"`
	Completions  *Empty                     `json:"completions,omitempty"`
	Experimental map[string]json.RawMessage `json:"experimental,omitempty"`
}

// ClientCapabilities are a client's capabilities in InitializeParams.
type ClientCapabilities struct {
	Tasks        *TasksCapability           `json:"tasks,omitempty"`
	Roots        json.RawMessage            `json:"roots,omitempty"`
	Sampling     json.RawMessage            `json:"sampling,omitempty"`
	Elicitation  json.RawMessage            `json:"elicitation,omitempty"`
	Experimental map[string]json.RawMessage `json:"experimental,omitempty"`
}

// InitializeParams are the params of initialize.
type InitializeParams struct {
	ProtocolVersion string             `json:"protocolVersion"`
	Capabilities    ClientCapabilities `json:"capabilities"`
	ClientInfo      Implementation     `json:"clientInfo"`
}

// InitializeResult is the result of initialize.
type InitializeResult struct {
	ProtocolVersion string             `json:"protocolVersion"`
	Capabilities    ServerCapabilities `json:"capabilities"`
	ServerInfo      Implementation     `json:"serverInfo"`
	Instructions    string             `json:"instructions,omitempty"`
}
