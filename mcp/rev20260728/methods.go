package rev20260728

import "github.com/tasksim/tasksim/mcp"

// ProtocolVersion is the protocolVersion string of this revision, as
// _meta and the MCP-Protocol-Version header carry it.
const ProtocolVersion = string(mcp.Revision20260728)

// Method names this revision adds. tools/list, tools/call and
// notifications/cancelled keep the names package mcp gives them.
const (
	// MethodServerDiscover asks for the server's versions, capabilities and
	// identity; servers MUST implement it (2026-07-28 server/discover).
	MethodServerDiscover = "server/discover"
	// MethodSubscriptionsListen opens a long-lived notification stream
	// (2026-07-28 Subscriptions, "Opening a Stream").
	MethodSubscriptionsListen = "subscriptions/listen"

	// NotificationSubscriptionsAcknowledged is the first message of a
	// listen stream (2026-07-28 Subscriptions, "Acknowledgment").
	NotificationSubscriptionsAcknowledged = "notifications/subscriptions/acknowledged"
	// The notifications a listen stream carries when the filter asks for
	// them (schema.ts SubscriptionFilter).
	NotificationToolsListChanged     = "notifications/tools/list_changed"
	NotificationPromptsListChanged   = "notifications/prompts/list_changed"
	NotificationResourcesListChanged = "notifications/resources/list_changed"
	NotificationResourcesUpdated     = "notifications/resources/updated"

	// The server-to-client requests an InputRequests map may carry
	// (2026-07-28 Multi Round-Trip Requests, "Server Requirements").
	MethodElicitationCreate     = "elicitation/create"
	MethodSamplingCreateMessage = "sampling/createMessage"
	MethodRootsList             = "roots/list"
)

// removedMethods are the 2025-11-25 core methods this revision removed
// (2026-07-28 changelog, major changes 2, 4 and 5, minor change 11). The
// task methods it moved out are the tasks extension's to list.
var removedMethods = map[string]bool{
	mcp.MethodInitialize:                 true,
	mcp.NotificationInitialized:          true,
	mcp.MethodPing:                       true,
	"logging/setLevel":                   true,
	"resources/subscribe":                true,
	"resources/unsubscribe":              true,
	"notifications/roots/list_changed":   true,
	"notifications/elicitation/complete": true,
}

// IsRemovedMethod reports whether method is a 2025-11-25 core method that
// a server of this revision does not implement, so that a request for it
// gets -32601 (on HTTP with 404; 2026-07-28 Streamable HTTP, "Protocol
// Version Header"). A dual-era server still answers initialize to open a
// legacy session; this predicate is about a request that carries this
// revision's _meta.
func IsRemovedMethod(method string) bool { return removedMethods[method] }
