package rev20260728

import (
	"encoding/json"

	"github.com/tasksim/tasksim/mcp"
)

// ListToolsResult is the result of tools/list in this revision: the
// 2025-11-25 list with a resultType and, being cacheable, ttlMs and
// cacheScope (schema.ts ListToolsResult, CacheableResult). Tools have no
// "execution" member here: the server alone decides whether a call
// becomes a task (Tasks, "Server-Directed Task Creation").
type ListToolsResult struct {
	ResultType ResultType  `json:"resultType"`
	Meta       *ResultMeta `json:"_meta,omitempty"`
	Tools      []mcp.Tool  `json:"tools"`
	NextCursor string      `json:"nextCursor,omitempty"`
	TTLMs      int64       `json:"ttlMs"`
	CacheScope CacheScope  `json:"cacheScope"`
}

// CallToolResult is the result of a tools/call that completed: the
// 2025-11-25 result with a resultType, "complete" (schema.ts
// CallToolResult).
type CallToolResult struct {
	ResultType        ResultType         `json:"resultType"`
	Meta              *ResultMeta        `json:"_meta,omitempty"`
	Content           []mcp.ContentBlock `json:"content"`
	StructuredContent json.RawMessage    `json:"structuredContent,omitempty"`
	IsError           bool               `json:"isError,omitempty"`
}
