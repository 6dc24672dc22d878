package server

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/tasksim/tasksim/mcp"
	rev "github.com/tasksim/tasksim/mcp/rev20260728"
)

// Names of the fixtures the official conformance suite's tasks scenarios
// (0.2.0, io.modelcontextprotocol/tasks) call.
const (
	ToolGreet            = "greet"
	ToolSlowCompute      = "slow_compute"
	ToolFailingJob       = "failing_job"
	ToolProtocolErrorJob = "protocol_error_job"
	ToolConfirmDelete    = "confirm_delete"
	ToolMultiInput       = "multi_input"
	ToolWithTask         = "test_tool_with_task"
)

// maxComputeSeconds bounds slow_compute's seconds, as maxDuration bounds
// the other tools' durations.
const maxComputeSeconds = 24 * 60 * 60

// TasksConformanceTools returns the fixtures the official conformance
// suite's tasks scenarios call. They are served to 2026-07-28 requests
// only: the 2025-11-25 tool list stays as it was.
//
//	greet               plain           "Hello, {name}!"
//	slow_compute        task (optional) waits seconds, then its result; cancelled when cancelled
//	failing_job         task (required) a tool execution error after 1 s: completed with isError
//	protocol_error_job  task (required) a JSON-RPC error: failed with error
//	confirm_delete      task (required) one elicitation/create through tasks/get and tasks/update
//	multi_input         task (required) two elicitation/create at once, answered in any grouping
//	test_tool_with_task task (required) asks user_name by multi round-trip before the task is made
func TasksConformanceTools() []*Tool {
	era := []mcp.Revision{mcp.Revision20260728}
	tool := func(name, desc, schema, support string, prepare func(json.RawMessage) (RunFunc, error)) *Tool {
		t := &Tool{
			Tool:      mcp.Tool{Name: name, Description: desc, InputSchema: json.RawMessage(schema)},
			Prepare:   prepare,
			Revisions: era,
		}
		if support != "" {
			t.Execution = &mcp.ToolExecution{TaskSupport: support}
		}
		return t
	}
	noArgs := `{"type":"object","properties":{}}`
	fixed := func(run RunFunc) func(json.RawMessage) (RunFunc, error) {
		return func(json.RawMessage) (RunFunc, error) { return run, nil }
	}
	withTask := tool(ToolWithTask, "Asks for user_name by a multi round-trip request, then runs as a task that greets the name (conformance fixture).",
		noArgs, mcp.TaskSupportRequired, fixed(func(_ context.Context, c *Call) (*mcp.CallToolResult, error) {
			name, _ := elicitedString(c.Answers()["user_name"], "name")
			return textResult(fmt.Sprintf("Hello, %s! (user_name gathered before the task)", name)), nil
		}))
	withTask.Input = func(_ json.RawMessage, answers rev.InputResponses, _ *rev.ClientCapabilities) rev.InputRequests {
		if name, ok := elicitedString(answers["user_name"], "name"); ok && name != "" {
			return nil
		}
		return rev.InputRequests{"user_name": elicitation("What is your name?", `{"name":{"type":"string"}}`, "name")}
	}
	return []*Tool{
		tool(ToolGreet, "Returns \"Hello, {name}!\" at once; never a task (conformance fixture).",
			`{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}`, "", prepareGreet),
		tool(ToolSlowCompute, "Waits seconds, then returns its label; a task when the request declares the tasks extension (conformance fixture).",
			`{"type":"object","properties":{"seconds":{"type":"number","minimum":0,"default":1},"label":{"type":"string"}}}`,
			mcp.TaskSupportOptional, prepareSlowCompute),
		tool(ToolFailingJob, "Returns a tool execution error after 1 s; only as a task (conformance fixture).",
			noArgs, mcp.TaskSupportRequired, fixed(func(ctx context.Context, c *Call) (*mcp.CallToolResult, error) {
				if err := c.Sleep(ctx, time.Second); err != nil {
					return nil, err
				}
				return &mcp.CallToolResult{IsError: true, Content: []mcp.ContentBlock{mcp.TextBlock("failing_job failed, as it always does")}}, nil
			})),
		tool(ToolProtocolErrorJob, "Ends with a JSON-RPC internal error; only as a task (conformance fixture).",
			noArgs, mcp.TaskSupportRequired, fixed(func(context.Context, *Call) (*mcp.CallToolResult, error) {
				return nil, mcp.Errorf(mcp.CodeInternalError, "protocol_error_job: an internal failure, as designed")
			})),
		tool(ToolConfirmDelete, "Asks the client to confirm through the task's inputRequests, then reports; only as a task (conformance fixture).",
			`{"type":"object","properties":{"filename":{"type":"string"}},"required":["filename"]}`,
			mcp.TaskSupportRequired, prepareConfirmDelete),
		tool(ToolMultiInput, "Asks two questions at once through the task's inputRequests, then reports both answers; only as a task (conformance fixture).",
			noArgs, mcp.TaskSupportRequired, fixed(func(ctx context.Context, c *Call) (*mcp.CallToolResult, error) {
				got, err := c.Ask(ctx,
					elicitation("First input: your name?", `{"name":{"type":"string"}}`, "name"),
					elicitation("Second input: your name?", `{"name":{"type":"string"}}`, "name"))
				if err != nil {
					return nil, err
				}
				names := make([]string, len(got))
				for i, g := range got {
					names[i], _ = elicitedString(g, "name")
				}
				return textResult("Received: " + strings.Join(names, ", ")), nil
			})),
		withTask,
	}
}

func textResult(text string) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.ContentBlock{mcp.TextBlock(text)}}
}

func prepareGreet(raw json.RawMessage) (RunFunc, error) {
	var a struct {
		Name string `json:"name"`
	}
	if err := decodeArgs(raw, &a); err != nil {
		return nil, err
	}
	return func(context.Context, *Call) (*mcp.CallToolResult, error) {
		return textResult("Hello, " + a.Name + "!"), nil
	}, nil
}

func prepareSlowCompute(raw json.RawMessage) (RunFunc, error) {
	a := struct {
		Seconds float64 `json:"seconds"`
		Label   string  `json:"label"`
	}{Seconds: 1}
	if err := decodeArgs(raw, &a); err != nil {
		return nil, err
	}
	// Compared in seconds before converting, as msArg does in milliseconds.
	if !(a.Seconds >= 0 && a.Seconds <= maxComputeSeconds) {
		return nil, mcp.Errorf(mcp.CodeInvalidParams, "invalid arguments: seconds must be between 0 and %d", maxComputeSeconds)
	}
	d := time.Duration(a.Seconds * float64(time.Second))
	return func(ctx context.Context, c *Call) (*mcp.CallToolResult, error) {
		// A cancelled task stops here; its status is cancelled already
		// (stateless_task.go), never completed or failed.
		if err := c.Sleep(ctx, d); err != nil {
			return nil, err
		}
		return textResult(fmt.Sprintf("Computed %q in %gs", a.Label, a.Seconds)), nil
	}, nil
}

func prepareConfirmDelete(raw json.RawMessage) (RunFunc, error) {
	var a struct {
		Filename string `json:"filename"`
	}
	if err := decodeArgs(raw, &a); err != nil {
		return nil, err
	}
	return func(ctx context.Context, c *Call) (*mcp.CallToolResult, error) {
		got, err := c.Ask(ctx, elicitation(fmt.Sprintf("Delete %s?", a.Filename), `{"confirm":{"type":"boolean"}}`, "confirm"))
		if err != nil {
			return nil, err
		}
		var ans struct {
			Action  string `json:"action"`
			Content struct {
				Confirm bool `json:"confirm"`
			} `json:"content"`
		}
		if json.Unmarshal(got[0], &ans) == nil && ans.Action == "accept" && ans.Content.Confirm {
			return textResult("Deleted " + a.Filename + " (pretend)."), nil
		}
		return textResult("Kept " + a.Filename + ": the deletion was not confirmed."), nil
	}, nil
}

// elicitation returns an elicitation/create request in form mode asking
// for the properties (a JSON object of primitive schemas), required
// naming the one that must be given.
func elicitation(message, properties, required string) rev.InputRequest {
	params, _ := json.Marshal(map[string]any{
		"mode":    "form",
		"message": message,
		"requestedSchema": map[string]any{
			"type":       "object",
			"properties": json.RawMessage(properties),
			"required":   []string{required},
		},
	})
	return rev.InputRequest{Method: rev.MethodElicitationCreate, Params: params}
}

// elicitedString reads member key of an accepted ElicitResult's content;
// ok is false for any other answer.
func elicitedString(answer json.RawMessage, key string) (string, bool) {
	var r struct {
		Action  string                     `json:"action"`
		Content map[string]json.RawMessage `json:"content"`
	}
	if len(answer) == 0 || json.Unmarshal(answer, &r) != nil || r.Action != "accept" {
		return "", false
	}
	var s string
	if json.Unmarshal(r.Content[key], &s) != nil {
		return "", false
	}
	return s, true
}
