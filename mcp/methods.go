package mcp

import "slices"

// Method names.
const (
	MethodInitialize  = "initialize"
	MethodPing        = "ping"
	MethodToolsList   = "tools/list"
	MethodToolsCall   = "tools/call"
	MethodTasksGet    = "tasks/get"
	MethodTasksResult = "tasks/result"
	MethodTasksList   = "tasks/list"
	MethodTasksCancel = "tasks/cancel"

	NotificationInitialized = "notifications/initialized"
	NotificationCancelled   = "notifications/cancelled"
	NotificationProgress    = "notifications/progress"
	NotificationTaskStatus  = "notifications/tasks/status"
	// NotificationTaskPartial carries incremental task content (SEP-2679 §1).
	NotificationTaskPartial = "notifications/tasks/partial"
	NotificationMessage     = "notifications/message"
)

// ToolSlowText names the reference server's streaming tool (chunks of
// text over a duration), the workload the load generator and the
// simulator call: a server they drive offers a tool of that name and
// arguments.
const ToolSlowText = "slow_text"

// Keys of the _meta object.
const (
	// MetaRelatedTask associates a message with a task (2025-11-25 Tasks,
	// "Related Task Metadata").
	MetaRelatedTask = "io.modelcontextprotocol/related-task"
	// MetaFallbackMode warns that the server fell back to another response
	// mode than the client asked for (SEP-1905, "Capability Negotiation").
	MetaFallbackMode = "io.modelcontextprotocol/fallback-mode"
	// MetaModelImmediateResponse is the optional text for the model in a
	// CreateTaskResult (2025-11-25 Tasks, "Creating Tasks").
	MetaModelImmediateResponse = "io.modelcontextprotocol/model-immediate-response"
	// MetaCompletedAt is where tasksim's reference server reports, in a task
	// result, the server-side time the task reached its terminal status
	// (RFC 3339 with nanoseconds). The load generator reads it to measure
	// discovery delay. It is a tasksim extension, not part of any spec.
	MetaCompletedAt = "dev.tasksim/completed-at"
)

// Protocol revisions.
const (
	LatestProtocolVersion = "2025-11-25"
	// DefaultHTTPProtocolVersion is assumed when an HTTP request carries no
	// MCP-Protocol-Version header (Streamable HTTP, "Protocol Version Header").
	DefaultHTTPProtocolVersion = "2025-03-26"
)

// supportedProtocolVersions is the list SupportedProtocolVersions copies.
var supportedProtocolVersions = []string{"2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"}

// SupportedProtocolVersions lists the protocol versions an initialize
// request may negotiate, newest first, in a slice of the caller's own: the
// versions of the 2025-11-25 era ([Revision20251125]). The stateless
// 2026-07-28 revision has no initialize and is not among them; see
// [Revision.ProtocolVersions] and [RevisionOf].
func SupportedProtocolVersions() []string { return slices.Clone(supportedProtocolVersions) }

// IsSupportedProtocolVersion reports whether v is one of SupportedProtocolVersions.
func IsSupportedProtocolVersion(v string) bool {
	return slices.Contains(supportedProtocolVersions, v)
}

// NegotiateProtocolVersion returns the version a server answers an
// initialize request with: the client's if supported, else the latest.
func NegotiateProtocolVersion(requested string) string {
	if IsSupportedProtocolVersion(requested) {
		return requested
	}
	return LatestProtocolVersion
}
