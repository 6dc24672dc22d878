package suite

import (
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"github.com/tasksim/tasksim/mcp"
	"github.com/tasksim/tasksim/mcp/client"
)

// needs is what a scenario needs of the target, checked before it starts.
// Every scenario that calls a tool calls it task-augmented (a SEP-1905
// response mode travels in the task field too), so each need first
// requires the server's tasks.requests.tools.call.
type needs struct {
	// task asks for any task-capable tool; slow for one that works as
	// long as asked, fail for one that fails (each names what for, in the
	// skip reason); otherwise the streaming one.
	task       bool
	slow, fail string
	// modes are SEP-1905 response modes the server must offer.
	modes []mcp.ResponseMode
	// partial asks for SEP-2679 partial streaming, of the server and the
	// tool.
	partial bool
}

// need returns the tool the scenario uses, or a skip saying what the
// target lacks.
//
// What the server declares is checked before the tools it offers, so the
// reason of a skip names the most basic thing the target lacks: the tasks
// capability, then a SEP-1905 mode or SEP-2679 partial streaming, then a
// tool for the role.
func (e *Env) need(n needs) (toolChoice, error) {
	if e.tools.noTasks != "" {
		return toolChoice{}, e.Skip("%s", e.tools.noTasks)
	}
	if err := e.needModes(n.modes...); err != nil {
		return toolChoice{}, err
	}
	if n.partial && !e.probe.init.Capabilities.Tasks.PartialStreaming() {
		return toolChoice{}, e.Skip("the server does not declare tasks.streaming.partial (SEP-2679)")
	}
	var tc toolChoice
	var err error
	switch {
	case n.task:
		tc, err = e.needTask()
	case n.slow != "":
		tc, err = e.needRole(e.tools.slow, n.slow)
	case n.fail != "":
		tc, err = e.needRole(e.tools.fail, n.fail)
	default:
		tc, err = e.needStream()
	}
	if err != nil {
		return tc, err
	}
	if n.partial {
		if err := e.needPartial(tc); err != nil {
			return tc, err
		}
	}
	return tc, nil
}

// setup is the start of most scenarios: what need checks, then a
// recorded session with opts and faultSpecs (Env.Connect).
func (e *Env) setup(n needs, opts *client.Options, faultSpecs ...string) (toolChoice, *client.Session, error) {
	tc, err := e.need(n)
	if err != nil {
		return tc, nil, err
	}
	s, err := e.Connect(opts, faultSpecs...)
	return tc, s, err
}

// needTask returns the task-capable tool, or a skip.
func (e *Env) needTask() (toolChoice, error) {
	return e.needRole(e.tools.task, "")
}

// needStream returns the streaming tool, or a skip.
func (e *Env) needStream() (toolChoice, error) {
	return e.needRole(e.tools.stream, "")
}

// needSlow returns the tool that works as long as asked, or a skip
// saying what for.
func (e *Env) needSlow(what string) (toolChoice, error) {
	return e.needRole(e.tools.slow, what)
}

// needRole returns c if the suite may call it as a task, or a skip: the
// server declares no tasks.requests.tools.call, or c is no tool, or one
// that may not be called as a task (2025-11-25 Tasks, Tool-Level
// Negotiation: clients MUST NOT task-augment then).
func (e *Env) needRole(c toolChoice, what string) (toolChoice, error) {
	why := c.why
	if e.tools.noTasks != "" {
		why = e.tools.noTasks
	}
	switch {
	case why == "":
		return c, nil
	case what != "":
		return toolChoice{}, e.Skip("needs %s: %s", what, why)
	}
	return toolChoice{}, e.Skip("%s", why)
}

// needModes skips unless the server offers every SEP-1905 mode named.
func (e *Env) needModes(modes ...mcp.ResponseMode) error {
	have := e.probe.init.Capabilities.Tasks.ResponseModes()
	for _, m := range modes {
		if !slices.Contains(have, m) {
			return e.Skip("the server does not declare SEP-1905 response mode %s (tasks.responses.modes: %v)", m, have)
		}
	}
	return nil
}

// needPartial skips unless the server declares tasks.streaming.partial and
// the tool execution.streamPartial.
func (e *Env) needPartial(c toolChoice) error {
	if !e.probe.init.Capabilities.Tasks.PartialStreaming() {
		return e.Skip("the server does not declare tasks.streaming.partial (SEP-2679)")
	}
	if !c.partial {
		return e.Skip("tool %s does not declare execution.streamPartial", c.name)
	}
	return nil
}

// wait waits d, or until the scenario's ctx ends.
func (e *Env) wait(d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-e.Ctx.Done():
		return e.Ctx.Err()
	}
}

// errorCode returns the JSON-RPC error code of an answer, 0 for a result.
func errorCode(m *mcp.Message) int {
	if m == nil || m.Error == nil {
		return 0
	}
	return m.Error.Code
}

// expectInvalidParams asserts that m is a -32602 error answer.
func (e *Env) expectInvalidParams(rule string, m *mcp.Message, what string) {
	e.Expect(rule, errorCode(m) == mcp.CodeInvalidParams, "%s: want error -32602, got %s", what, describeAnswer(m))
}

func describeAnswer(m *mcp.Message) string {
	switch {
	case m == nil:
		return "no answer"
	case m.Error != nil:
		return fmt.Sprintf("error %d (%s)", m.Error.Code, m.Error.Message)
	}
	s := string(m.Result)
	if len(s) > 120 {
		s = s[:120] + "…"
	}
	return "result " + s
}

// text is content blocks as JSON, for comparing two results. No content
// and an empty list are the same: a result without content (as a
// cancelled task's may be) decodes to nil one way and to [] another.
func text(blocks []mcp.ContentBlock) string {
	if len(blocks) == 0 {
		return "[]"
	}
	b, _ := json.Marshal(blocks)
	return string(b)
}

// unknownTaskID is a task id no server gave out.
func (e *Env) unknownTaskID() string {
	return fmt.Sprintf("tasksim-check-unknown-%d", e.seed)
}
