package server

import (
	"context"
	"encoding/json"
	"time"

	"github.com/tasksim/tasksim/mcp"
)

// Fixture texts the official conformance suite's server scenarios expect.
const (
	SimpleText         = "This is a simple text response for testing."
	ErrorHandlingText  = "This tool intentionally returns an error for testing"
	ReconnectionResult = "Reconnection test completed successfully. If you received this, the client properly reconnected after stream closure."
)

// ConformanceTools returns the tools the official conformance suite's
// server scenarios call: test_simple_text, test_error_handling,
// test_tool_with_progress and test_reconnection.
func ConformanceTools() []*Tool {
	fixed := func(name, desc string, run RunFunc) *Tool {
		return &Tool{
			Tool: mcp.Tool{Name: name, Description: desc, InputSchema: json.RawMessage(`{"type":"object","properties":{}}`)},
			Prepare: func(json.RawMessage) (RunFunc, error) {
				return run, nil
			},
		}
	}
	return []*Tool{
		fixed("test_simple_text", "Returns a fixed text (conformance fixture).",
			func(context.Context, *Call) (*mcp.CallToolResult, error) {
				return &mcp.CallToolResult{Content: []mcp.ContentBlock{mcp.TextBlock(SimpleText)}}, nil
			}),
		fixed("test_error_handling", "Returns a tool execution error (conformance fixture).",
			func(context.Context, *Call) (*mcp.CallToolResult, error) {
				return &mcp.CallToolResult{IsError: true, Content: []mcp.ContentBlock{mcp.TextBlock(ErrorHandlingText)}}, nil
			}),
		fixed("test_tool_with_progress", "Sends progress 0, 50, 100 of 100 before its result (conformance fixture).",
			func(ctx context.Context, c *Call) (*mcp.CallToolResult, error) {
				total := 100.0
				for i, p := range []float64{0, 50, 100} {
					if i > 0 {
						if err := c.Sleep(ctx, 50*time.Millisecond); err != nil {
							return nil, err
						}
					}
					if err := c.Progress(ctx, p, &total, ""); err != nil {
						return nil, err
					}
				}
				return &mcp.CallToolResult{Content: []mcp.ContentBlock{mcp.TextBlock("Progress test completed")}}, nil
			}),
		fixed("test_reconnection", "Closes its SSE connection before answering; the answer arrives when the client resumes with Last-Event-ID (conformance fixture).",
			func(ctx context.Context, c *Call) (*mcp.CallToolResult, error) {
				c.CloseConnection()
				if err := c.Sleep(ctx, 100*time.Millisecond); err != nil {
					return nil, err
				}
				return &mcp.CallToolResult{Content: []mcp.ContentBlock{mcp.TextBlock(ReconnectionResult)}}, nil
			}),
	}
}
