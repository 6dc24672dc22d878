package mcp

import "encoding/json"

// Meta is a _meta object.
type Meta map[string]any

// WithRelatedTask returns m (allocated if nil) with the related-task key set.
func (m Meta) WithRelatedTask(taskID string) Meta {
	if m == nil {
		m = Meta{}
	}
	m[MetaRelatedTask] = RelatedTask{TaskID: taskID}
	return m
}

// RelatedTaskID returns the task id of the related-task key, if present.
func (m Meta) RelatedTaskID() (string, bool) {
	switch v := m[MetaRelatedTask].(type) {
	case RelatedTask:
		return v.TaskID, v.TaskID != ""
	case map[string]any:
		id, ok := v["taskId"].(string)
		return id, ok && id != ""
	}
	return "", false
}

// RequestMeta is the _meta of a request's params.
type RequestMeta struct {
	// ProgressToken is a string or a number; kept raw so that it is echoed
	// exactly.
	ProgressToken json.RawMessage `json:"progressToken,omitempty"`
}

// Task support values of a tool's execution.taskSupport (2025-11-25 Tasks,
// "Tool-Level Negotiation").
const (
	TaskSupportForbidden = "forbidden"
	TaskSupportOptional  = "optional"
	TaskSupportRequired  = "required"
)

// ToolExecution is a tool's "execution" member: taskSupport (2025-11-25) and
// streamPartial (SEP-2679 §3).
type ToolExecution struct {
	TaskSupport   string `json:"taskSupport,omitempty"`
	StreamPartial bool   `json:"streamPartial,omitempty"`
}

// Tool is one entry of tools/list.
type Tool struct {
	Name         string          `json:"name"`
	Title        string          `json:"title,omitempty"`
	Description  string          `json:"description,omitempty"`
	InputSchema  json.RawMessage `json:"inputSchema"`
	OutputSchema json.RawMessage `json:"outputSchema,omitempty"`
	Annotations  json.RawMessage `json:"annotations,omitempty"`
	Execution    *ToolExecution  `json:"execution,omitempty"`
}

// ListToolsParams are the params of tools/list.
type ListToolsParams struct {
	Cursor string `json:"cursor,omitempty"`
}

// ListToolsResult is the result of tools/list.
type ListToolsResult struct {
	Tools      []Tool `json:"tools"`
	NextCursor string `json:"nextCursor,omitempty"`
}

// CallToolParams are the params of tools/call. Task is set on a
// task-augmented call.
type CallToolParams struct {
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments,omitempty"`
	Task      *TaskParams     `json:"task,omitempty"`
	Meta      *RequestMeta    `json:"_meta,omitempty"`
}

// CallToolResult is the result of a plain tools/call and of tasks/result for
// a tool-call task.
type CallToolResult struct {
	Content           []ContentBlock  `json:"content"`
	StructuredContent json.RawMessage `json:"structuredContent,omitempty"`
	IsError           bool            `json:"isError,omitempty"`
	Meta              Meta            `json:"_meta,omitempty"`
}

// PartialResult is a SEP-1905 streaming response ("Case 3"): segments with
// seqNr, isComplete, and optionally the task. It answers a streaming
// tools/call (several times, with the request's id) and a tasks/result with
// lastSeqNr. Content is used instead of PartialContent only for a failure
// with no segment to carry it ("Streaming Behavior").
type PartialResult struct {
	Task           *Task          `json:"task,omitempty"`
	PartialContent []Segment      `json:"partial-content"`
	Content        []ContentBlock `json:"content,omitempty"`
	IsError        bool           `json:"isError"`
	IsComplete     bool           `json:"isComplete"`
	Meta           Meta           `json:"_meta,omitempty"`
}

// ToolCallResponse is every shape a tools/call or tasks/result answer can
// take, for a client to decode without knowing the mode in advance: a plain
// or immediate result (Content), a CreateTaskResult (Task), or a streaming
// response (PartialContent, IsComplete).
type ToolCallResponse struct {
	Content           []ContentBlock  `json:"content,omitempty"`
	StructuredContent json.RawMessage `json:"structuredContent,omitempty"`
	IsError           bool            `json:"isError,omitempty"`
	Task              *Task           `json:"task,omitempty"`
	PartialContent    []Segment       `json:"partial-content,omitempty"`
	IsComplete        *bool           `json:"isComplete,omitempty"`
	Meta              Meta            `json:"_meta,omitempty"`
}

// ProgressParams are the params of notifications/progress.
type ProgressParams struct {
	ProgressToken json.RawMessage `json:"progressToken"`
	Progress      float64         `json:"progress"`
	Total         *float64        `json:"total,omitempty"`
	Message       string          `json:"message,omitempty"`
	Meta          Meta            `json:"_meta,omitempty"`
}

// CancelledParams are the params of notifications/cancelled.
type CancelledParams struct {
	RequestID ID     `json:"requestId"`
	Reason    string `json:"reason,omitempty"`
}
