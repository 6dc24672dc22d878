package client

import (
	"context"

	"github.com/tasksim/tasksim/mcp/rev20260728/tasks"
)

// GetTask asks the state of a task once, outside of any call (Tasks,
// "Task Polling"): tasks/get with the extension declared, re-issued with
// a new id if its stream breaks, its answer checked as a call's poll is.
// A task the server does not know is a *TaskError (ErrTaskNotFound); a
// task whose ttl the server says passed, ErrTaskExpired.
func (s *Stateless) GetTask(ctx context.Context, id string) (*tasks.GetTaskResult, error) {
	c := &statelessCall{s: s, res: &StatelessResult{}, answered: map[string]bool{}}
	c.rec = &recorder{now: s.opts.Clock.Now, discard: true}
	return c.get(ctx, id)
}
