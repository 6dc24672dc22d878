package client

import (
	"encoding/json"
	"fmt"

	"github.com/tasksim/tasksim/mcp"
)

// onTaskNotifications handles notifications/tasks/status and
// notifications/tasks/partial for the call's task. Each one postpones the
// next poll: the server is talking (SEP-2679 §4 leaves polling
// available; 2025-11-25 Tasks: requestors MUST NOT rely on status
// notifications, so polling resumes when they stop).
func (c *call) onTaskNotifications() {
	notes, err := c.task.take()
	for _, n := range notes {
		if c.done() {
			return
		}
		m := n.msg
		switch m.Method {
		case mcp.NotificationTaskStatus:
			var p mcp.TaskStatusParams
			if err := json.Unmarshal(m.Params, &p); err != nil {
				c.rec.add(Event{Kind: EventError, TaskID: c.taskID, Method: m.Method, Err: err})
				continue
			}
			if c.updateTask(p.Task, SourceNotification) && c.mode != ModePoll {
				c.afterStatus(SourceNotification)
			}
		case mcp.NotificationTaskPartial:
			if n.partial == nil { // the reader could not decode it: say why
				var p mcp.TaskPartialParams
				err := json.Unmarshal(m.Params, &p)
				c.rec.add(Event{Kind: EventError, TaskID: c.taskID, Method: m.Method, Err: err})
				continue
			}
			c.onPartial(*n.partial)
		}
	}
	if err != nil && !c.done() {
		c.task = nil
		c.finishIncomplete(fmt.Errorf("tools/call %s: %w", c.o.Name, err))
		return
	}
	c.postponePoll()
}

// postponePoll restarts the poll timer after task notifications, outside
// poll mode: the server is talking.
func (c *call) postponePoll() {
	if c.mode != ModePoll && !c.done() && c.pollC != nil {
		c.armPoll()
	}
}

func (c *call) onPartial(p mcp.TaskPartialParams) {
	e := Event{Kind: EventPartial, TaskID: c.taskID, Seq: p.Seq, Bytes: contentBytes(p.Content...), Source: SourceNotification}
	switch c.par.add(p) {
	case partialDuplicate:
		e.Kind = EventDuplicate
	case partialAfterTerminal:
		e.Kind = EventDiscarded
		e.Detail = "partial after a terminal status"
	case partialGap:
		c.rec.add(Event{Kind: EventDataLoss, TaskID: c.taskID, Seq: p.Seq, Detail: "seq jumped: data loss, not filled in (SEP-2679 §1.3 rule 4)"})
		fallthrough
	case partialAccepted:
		if len(p.Content) == 0 {
			e.Detail = "empty content (SEP-2679 §1.3 rule 5)"
		}
		c.rec.add(e)
		if c.o.OnPartial != nil {
			c.o.OnPartial(p)
		}
		return
	}
	c.rec.add(e)
}
