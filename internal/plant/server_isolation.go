package plant

import (
	"context"
	"sync"

	"github.com/tasksim/tasksim/mcp"
)

// LeakTaskNotifications sends every task notification of a session
// (notifications/tasks/status, notifications/tasks/partial) to every other
// session too, as mcp-go v1.2.1 does (its sendTaskStatusNotification calls
// SendNotificationToAllClients). Another session learns the task's id and
// status: TASK-ISOLATION (2025-11-25 Tasks › Security Considerations ›
// Task Isolation and Access Control).
func LeakTaskNotifications(inner mcp.Endpoint) mcp.Endpoint {
	var mu sync.Mutex
	var all []mcp.Outbox
	send := func(ctx context.Context, msg *mcp.Message, self mcp.Outbox) error {
		err := self.Send(ctx, msg)
		if msg.Method != mcp.NotificationTaskStatus && msg.Method != mcp.NotificationTaskPartial {
			return err
		}
		mu.Lock()
		others := make([]mcp.Outbox, 0, len(all))
		for _, o := range all {
			if o != self {
				others = append(others, o)
			}
		}
		mu.Unlock()
		for _, o := range others {
			_ = o.Send(ctx, msg) // a closed session refuses: nothing to leak to
		}
		return err
	}
	return &endpoint{inner: inner, perSession: func(out mcp.Outbox) hooks {
		mu.Lock()
		all = append(all, out)
		mu.Unlock()
		return hooks{send: send}
	}}
}
