package tasks

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/tasksim/tasksim/mcp"
	rev "github.com/tasksim/tasksim/mcp/rev20260728"
)

// ExtensionID identifies the extension in capabilities' "extensions" map
// (Tasks, "Extension Identifier").
const ExtensionID = "io.modelcontextprotocol/tasks"

// ResultTypeTask marks a CreateTaskResult. Servers MUST set it there and
// nowhere else (Tasks, "Polymorphic Results"). A client that negotiated
// the extension passes it to rev.ResultTypeOf.
const ResultTypeTask rev.ResultType = "task"

// Method names of the extension (Tasks, "Task Polling", "Task Update
// Requests", "Task Cancellation", "Task Status Notifications").
const (
	MethodGet          = "tasks/get"
	MethodUpdate       = "tasks/update"
	MethodCancel       = "tasks/cancel"
	NotificationStatus = "notifications/tasks"
)

// Declared reports whether a request's capabilities declare the extension.
// Only the request's own declaration counts: a server MUST NOT return a
// CreateTaskResult to a request without it, whatever earlier requests
// declared, and MUST answer tasks/* and a listen asking for taskIds
// without it with -32021 (Tasks, "Capability Negotiation", "Protocol
// Errors").
func Declared(caps *rev.ClientCapabilities) bool { return caps.HasExtension(ExtensionID) }

// RequiredCapabilities returns the data.requiredCapabilities of the -32021
// error a server answers when it cannot serve a request without the
// extension (Tasks, "Capability Negotiation").
func RequiredCapabilities() rev.ClientCapabilities {
	return rev.ClientCapabilities{}.WithExtension(ExtensionID)
}

// MissingCapability returns that -32021 error.
func MissingCapability() *mcp.Error {
	return rev.MissingRequiredClientCapability("Missing required client capability", RequiredCapabilities())
}

// NameRules returns the Mcp-Name rules the extension adds: params.taskId
// for tasks/get, tasks/update and tasks/cancel (Tasks, "Streamable HTTP:
// Routing Headers"). A server that speaks the extension checks
// rev.CoreNameRules().With(NameRules()).
func NameRules() rev.NameRules {
	return rev.NameRules{MethodGet: "taskId", MethodUpdate: "taskId", MethodCancel: "taskId"}
}

// IsRemovedMethod reports whether method is a task method of 2025-11-25
// that this extension does not have: tasks/result, which clients calling
// MUST receive -32601 for (SEP-2663, "Backward Compatibility"), tasks/list
// (2026-07-28 changelog, major change 6; Tasks, "Security
// Considerations"), and notifications/tasks/status, replaced by
// notifications/tasks.
func IsRemovedMethod(method string) bool {
	switch method {
	case mcp.MethodTasksResult, mcp.MethodTasksList, mcp.NotificationTaskStatus:
		return true
	}
	return false
}

// IsReserved reports whether method lies in a prefix reserved for this
// extension, tasks/ or notifications/tasks/ (Tasks, "Reservations"): a
// method there that the extension does not define, such as
// notifications/tasks/partial of the draft SEP-2679, is not standard on
// this wire.
func IsReserved(method string) bool {
	return strings.HasPrefix(method, "tasks/") || strings.HasPrefix(method, "notifications/tasks/")
}

// taskIDsKey is the member the extension adds to the subscriptions/listen
// filter and its acknowledgement (Tasks, "Task Status Notifications").
const taskIDsKey = "taskIds"

// TaskIDs returns the task ids of a listen filter or acknowledgement, nil
// when it names none.
func TaskIDs(f rev.SubscriptionFilter) ([]string, error) {
	raw, ok := f.Extra[taskIDsKey]
	if !ok {
		return nil, nil
	}
	var ids []string
	if err := json.Unmarshal(raw, &ids); err != nil {
		return nil, fmt.Errorf("notifications.taskIds must be an array of strings: %w", err)
	}
	return ids, nil
}

// WithTaskIDs returns f asking for notifications/tasks about ids (none
// removes the member), with an Extra map of its own.
func WithTaskIDs(f rev.SubscriptionFilter, ids []string) rev.SubscriptionFilter {
	extra := make(map[string]json.RawMessage, len(f.Extra)+1)
	for k, v := range f.Extra {
		extra[k] = v
	}
	delete(extra, taskIDsKey)
	if len(ids) > 0 {
		// A slice of strings always marshals.
		extra[taskIDsKey], _ = json.Marshal(ids)
	}
	if len(extra) == 0 {
		extra = nil
	}
	f.Extra = extra
	return f
}
