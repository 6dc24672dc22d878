package plant

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/tasksim/tasksim/mcp"
	"github.com/tasksim/tasksim/mcp/server"
)

// Servers unlike tasksim's own, for the judge's tests: the suite must run
// on anyone's tools, and must not task-augment a call the server did not
// offer to run as a task.

// Names of ForeignTools.
const (
	ToolLongJob     = "long_job"
	ToolBrokenJob   = "broken_job"
	ToolQuickLookup = "quick_lookup"
)

// ForeignTools are task tools named, shaped and argued unlike slow_text,
// whose arguments the suite does not know:
//
//   - long_job {steps, totalMs} (both required): one text block "step i"
//     per step, spread over totalMs;
//   - broken_job {afterMs} (required): fails (a tool execution error)
//     after afterMs;
//   - quick_lookup {query}: answers "found <query>" at once.
//
// None declares execution.streamPartial.
func ForeignTools() []*server.Tool {
	return []*server.Tool{longJob(), brokenJob(), quickLookup()}
}

func longJob() *server.Tool {
	return &server.Tool{
		Tool: mcp.Tool{
			Name:        ToolLongJob,
			Description: "Works totalMs, one text block per step.",
			InputSchema: json.RawMessage(`{"type":"object","properties":{"steps":{"type":"integer","minimum":0},"totalMs":{"type":"integer","minimum":0}},"required":["steps","totalMs"]}`),
			Execution:   &mcp.ToolExecution{TaskSupport: mcp.TaskSupportOptional},
		},
		Incremental: true,
		Prepare: func(raw json.RawMessage) (server.RunFunc, error) {
			var a struct {
				Steps   *int   `json:"steps"`
				TotalMs *int64 `json:"totalMs"`
			}
			if json.Unmarshal(raw, &a) != nil || a.Steps == nil || a.TotalMs == nil || *a.Steps < 0 || *a.Steps > 10_000 || *a.TotalMs < 0 || *a.TotalMs > 3_600_000 {
				return nil, mcp.Errorf(mcp.CodeInvalidParams, "long_job wants steps (0..10000) and totalMs (0..3600000)")
			}
			steps, total := *a.Steps, time.Duration(*a.TotalMs)*time.Millisecond
			return func(ctx context.Context, c *server.Call) (*mcp.CallToolResult, error) {
				start := c.Now()
				for i := 1; i <= steps; i++ {
					if err := c.Sleep(ctx, start.Add(total*time.Duration(i)/time.Duration(steps)).Sub(c.Now())); err != nil {
						return nil, err
					}
					if err := c.Emit(ctx, mcp.TextBlock(fmt.Sprintf("step %d", i))); err != nil {
						return nil, err
					}
				}
				if steps == 0 {
					if err := c.Sleep(ctx, total); err != nil {
						return nil, err
					}
				}
				return &mcp.CallToolResult{}, nil
			}, nil
		},
	}
}

func brokenJob() *server.Tool {
	return &server.Tool{
		Tool: mcp.Tool{
			Name:        ToolBrokenJob,
			Description: "Fails after afterMs.",
			InputSchema: json.RawMessage(`{"type":"object","properties":{"afterMs":{"type":"integer","minimum":0}},"required":["afterMs"]}`),
			Execution:   &mcp.ToolExecution{TaskSupport: mcp.TaskSupportOptional},
		},
		Incremental: true,
		Prepare: func(raw json.RawMessage) (server.RunFunc, error) {
			var a struct {
				AfterMs *int64 `json:"afterMs"`
			}
			if json.Unmarshal(raw, &a) != nil || a.AfterMs == nil || *a.AfterMs < 0 || *a.AfterMs > 3_600_000 {
				return nil, mcp.Errorf(mcp.CodeInvalidParams, "broken_job wants afterMs (0..3600000)")
			}
			after := time.Duration(*a.AfterMs) * time.Millisecond
			return func(ctx context.Context, c *server.Call) (*mcp.CallToolResult, error) {
				if err := c.Emit(ctx, mcp.TextBlock("starting")); err != nil {
					return nil, err
				}
				if err := c.Sleep(ctx, after); err != nil {
					return nil, err
				}
				return nil, fmt.Errorf("broken_job broke after %s", after)
			}, nil
		},
	}
}

func quickLookup() *server.Tool {
	return &server.Tool{
		Tool: mcp.Tool{
			Name:        ToolQuickLookup,
			Description: "Answers at once.",
			InputSchema: json.RawMessage(`{"type":"object","properties":{"query":{"type":"string"}}}`),
			Execution:   &mcp.ToolExecution{TaskSupport: mcp.TaskSupportOptional},
		},
		Prepare: func(raw json.RawMessage) (server.RunFunc, error) {
			var a struct {
				Query string `json:"query"`
			}
			if len(raw) > 0 && json.Unmarshal(raw, &a) != nil {
				return nil, mcp.Errorf(mcp.CodeInvalidParams, "quick_lookup wants a query string")
			}
			return func(context.Context, *server.Call) (*mcp.CallToolResult, error) {
				return &mcp.CallToolResult{Content: []mcp.ContentBlock{mcp.TextBlock("found " + a.Query)}}, nil
			}, nil
		},
	}
}

// NoTasks makes ep a server without tasks, as the TypeScript SDK v2
// server is: its initialize result declares no tasks capability, and it
// processes a tools/call normally, ignoring any task field ("MUST process
// requests of that type normally, ignoring any task-augmentation
// metadata", 2025-11-25 Tasks, Capabilities). Its tools/list is left as
// it is, execution.taskSupport included: the capability alone must stop
// a client from task-augmenting (Tool-Level Negotiation).
func NoTasks(ep mcp.Endpoint) mcp.Endpoint { return noTasks{ep, true} }

// IgnoreTaskField is a planted bug: ep still declares
// tasks.requests.tools.call, yet answers every tools/call as a plain one,
// ignoring its task field: no task is ever created. No rule may pass on
// the tasks that do not exist.
func IgnoreTaskField(ep mcp.Endpoint) mcp.Endpoint { return noTasks{ep, false} }

type noTasks struct {
	inner     mcp.Endpoint
	undeclare bool
}

func (n noTasks) NewSession(out mcp.Outbox) mcp.Session {
	return noTasksSession{n.inner.NewSession(out), n.undeclare}
}

type noTasksSession struct {
	mcp.Session
	undeclare bool
}

func (s noTasksSession) Handle(ctx context.Context, msg *mcp.Message, r mcp.Replier) {
	switch msg.Method {
	case mcp.MethodInitialize:
		if s.undeclare {
			r = rewriteReplies{r, dropTasksCapability}
		}
	case mcp.MethodToolsCall:
		m := *msg
		m.Params = dropKey(msg.Params, "task")
		msg = &m
	}
	s.Session.Handle(ctx, msg, r)
}

// rewriteReplies passes each result through fix.
type rewriteReplies struct {
	mcp.Replier
	fix func(json.RawMessage) json.RawMessage
}

func (w rewriteReplies) Reply(ctx context.Context, msg *mcp.Message, final bool) error {
	if msg != nil && msg.Result != nil {
		m := *msg
		m.Result = w.fix(msg.Result)
		msg = &m
	}
	return w.Replier.Reply(ctx, msg, final)
}

func dropTasksCapability(result json.RawMessage) json.RawMessage {
	var r map[string]json.RawMessage
	if json.Unmarshal(result, &r) != nil {
		return result
	}
	r["capabilities"] = dropKey(r["capabilities"], "tasks")
	b, err := json.Marshal(r)
	if err != nil {
		return result
	}
	return b
}

// dropKey returns the JSON object obj without key; anything else as it is.
func dropKey(obj json.RawMessage, key string) json.RawMessage {
	var o map[string]json.RawMessage
	if json.Unmarshal(obj, &o) != nil || o == nil {
		return obj
	}
	delete(o, key)
	b, err := json.Marshal(o)
	if err != nil {
		return obj
	}
	return b
}
