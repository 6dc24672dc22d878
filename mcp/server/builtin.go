package server

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	"github.com/tasksim/tasksim/mcp"
)

// Names of the built-in tools.
const (
	ToolSlowText = mcp.ToolSlowText
	ToolInstant  = "instant"
	ToolSleep    = "sleep"
	ToolTaskOnly = "task_only"
	ToolEcho     = "echo"
)

// Limits on built-in tool arguments, so that one call cannot exhaust the
// server.
const (
	maxChunks    = 1_000_000
	maxChunkSize = 1 << 20
	maxDuration  = 24 * time.Hour
)

// BuiltinTools returns the tools the reference server offers by default,
// followed by the tools the official conformance suite calls: those of its
// 2025-11-25 scenarios, then those of its tasks scenarios and of its
// other 2026-07-28 scenarios (2026-07-28 requests only).
func BuiltinTools() []*Tool {
	tools := append([]*Tool{slowText(), instant(), sleepTool(ToolSleep, mcp.TaskSupportOptional), sleepTool(ToolTaskOnly, mcp.TaskSupportRequired), echo()},
		ConformanceTools()...)
	tools = append(tools, TasksConformanceTools()...)
	return append(tools, RevisionConformanceTools()...)
}

// SlowTextArgs are the arguments of slow_text.
type SlowTextArgs struct {
	// Chunks is how many content blocks the tool produces (default 5).
	Chunks int `json:"chunks"`
	// ChunkSize is the length of each block's text in bytes (default 32).
	ChunkSize int `json:"chunkSize"`
	// IntervalMs is the pause before each chunk, in milliseconds
	// (default 100).
	IntervalMs *float64 `json:"intervalMs"`
	// DurationMs, when set, spreads the chunks evenly over this total
	// duration instead (interval = duration / chunks).
	DurationMs *float64 `json:"durationMs"`
	// FailAfter, when >= 0, makes the tool fail after that many chunks.
	FailAfter *int `json:"failAfter"`
	// Progress sends a progress notification with each chunk when the
	// request carries a progress token (default true).
	Progress *bool `json:"progress"`
}

const slowTextSchema = `{"type":"object","properties":{` +
	`"chunks":{"type":"integer","minimum":0,"default":5,"description":"number of text chunks"},` +
	`"chunkSize":{"type":"integer","minimum":1,"default":32,"description":"bytes of text per chunk"},` +
	`"intervalMs":{"type":"number","minimum":0,"default":100,"description":"pause before each chunk, ms"},` +
	`"durationMs":{"type":"number","minimum":0,"description":"total duration, spread over the chunks (overrides intervalMs)"},` +
	`"failAfter":{"type":"integer","minimum":0,"description":"fail after this many chunks"},` +
	`"progress":{"type":"boolean","default":true,"description":"send progress with each chunk"}}}`

// ChunkText is the text of chunk i (from 1) of slow_text: a label padded
// to size bytes, so that a client can check order and completeness.
func ChunkText(i, size int) string {
	b := make([]byte, 0, max(size, 24))
	b = append(b, "chunk "...)
	b = strconv.AppendInt(b, int64(i), 10)
	b = append(b, ';')
	if len(b) >= size {
		return string(b[:size])
	}
	pad := byte('a' + (i-1)%26)
	for len(b) < size {
		b = append(b, pad)
	}
	return string(b)
}

func slowText() *Tool {
	return &Tool{
		Tool: mcp.Tool{
			Name:        ToolSlowText,
			Title:       "Slow text",
			Description: "Produces text in chunks over time: chunk count, chunk size, interval or total duration, and failure after k chunks are arguments. Streams with SEP-1905 and SEP-2679.",
			InputSchema: json.RawMessage(slowTextSchema),
			Execution:   &mcp.ToolExecution{TaskSupport: mcp.TaskSupportOptional, StreamPartial: true},
		},
		Incremental: true,
		Size: func(raw json.RawMessage) int64 {
			a := SlowTextArgs{Chunks: 5, ChunkSize: 32}
			if decodeArgs(raw, &a) != nil {
				return 0
			}
			// Each chunk is one stored block: its text and its overhead.
			return int64(a.Chunks) * (int64(a.ChunkSize) + blockOverhead + 4)
		},
		Prepare: prepareSlowText,
	}
}

// prepareSlowText reads slow_text's arguments and returns its run.
func prepareSlowText(raw json.RawMessage) (RunFunc, error) {
	a := SlowTextArgs{Chunks: 5, ChunkSize: 32}
	if err := decodeArgs(raw, &a); err != nil {
		return nil, err
	}
	switch {
	case a.Chunks < 0 || a.Chunks > maxChunks:
		return nil, mcp.Errorf(mcp.CodeInvalidParams, "invalid arguments: chunks must be between 0 and %d", maxChunks)
	case a.ChunkSize < 1 || a.ChunkSize > maxChunkSize:
		return nil, mcp.Errorf(mcp.CodeInvalidParams, "invalid arguments: chunkSize must be between 1 and %d", maxChunkSize)
	case a.FailAfter != nil && *a.FailAfter < 0:
		return nil, mcp.Errorf(mcp.CodeInvalidParams, "invalid arguments: failAfter must not be negative")
	}
	interval, err := a.interval()
	if err != nil {
		return nil, err
	}
	return a.run(interval), nil
}

// interval is the time between two chunks: intervalMs, or durationMs
// spread over the chunks, else 100 ms.
func (a SlowTextArgs) interval() (time.Duration, error) {
	interval := 100 * time.Millisecond
	if a.IntervalMs != nil {
		d, err := msArg("intervalMs", *a.IntervalMs)
		if err != nil {
			return 0, err
		}
		interval = d
	}
	if a.DurationMs != nil {
		d, err := msArg("durationMs", *a.DurationMs)
		if err != nil {
			return 0, err
		}
		interval = 0
		if a.Chunks > 0 {
			interval = d / time.Duration(a.Chunks)
		}
	}
	return interval, nil
}

// run emits chunk i at start + i*interval, with progress unless asked
// not to, and fails after failAfter chunks when asked to.
func (a SlowTextArgs) run(interval time.Duration) RunFunc {
	progress := a.Progress == nil || *a.Progress
	return func(ctx context.Context, c *Call) (*mcp.CallToolResult, error) {
		total := float64(a.Chunks)
		start := c.Now()
		for i := 1; i <= a.Chunks; i++ {
			if a.FailAfter != nil && i > *a.FailAfter {
				return nil, fmt.Errorf("slow_text failed after %d chunks, as asked", *a.FailAfter)
			}
			// Chunk i is due at start + i*interval: a late wake-up
			// does not push the later chunks back.
			if err := c.Sleep(ctx, start.Add(time.Duration(i)*interval).Sub(c.Now())); err != nil {
				return nil, err
			}
			if err := c.Emit(ctx, mcp.TextBlock(ChunkText(i, a.ChunkSize))); err != nil {
				return nil, err
			}
			if progress {
				if err := c.Progress(ctx, float64(i), &total, ""); err != nil {
					return nil, err
				}
			}
		}
		if a.FailAfter != nil { // failAfter >= chunks: fail at the end
			return nil, fmt.Errorf("slow_text failed after %d chunks, as asked", a.Chunks)
		}
		return &mcp.CallToolResult{}, nil
	}
}

func msArg(name string, ms float64) (time.Duration, error) {
	// Compared in milliseconds before converting: 1e18 ms overflows a
	// Duration and would pass a check made after.
	d, ok := mcp.MillisFloat(ms, maxDuration)
	if !ok {
		return 0, mcp.Errorf(mcp.CodeInvalidParams, "invalid arguments: %s must be between 0 and %d", name, maxDuration.Milliseconds())
	}
	return d, nil
}

func instant() *Tool {
	return &Tool{
		Tool: mcp.Tool{
			Name:        ToolInstant,
			Title:       "Instant",
			Description: "Returns its text at once: its result is available at request time (SEP-1905 immediate mode).",
			InputSchema: json.RawMessage(`{"type":"object","properties":{"text":{"type":"string","default":"instant result"}}}`),
			Execution:   &mcp.ToolExecution{TaskSupport: mcp.TaskSupportOptional},
		},
		Prepare: func(raw json.RawMessage) (RunFunc, error) {
			a := struct {
				Text string `json:"text"`
			}{Text: "instant result"}
			if err := decodeArgs(raw, &a); err != nil {
				return nil, err
			}
			return func(context.Context, *Call) (*mcp.CallToolResult, error) {
				return &mcp.CallToolResult{Content: []mcp.ContentBlock{mcp.TextBlock(a.Text)}}, nil
			}, nil
		},
	}
}

func sleepTool(name, support string) *Tool {
	desc := "Waits durationMs, then returns one text block: a result produced all at once."
	if support == mcp.TaskSupportRequired {
		desc = "Like sleep, but may only be called as a task (execution.taskSupport required)."
	}
	return &Tool{
		Tool: mcp.Tool{
			Name:        name,
			Description: desc,
			InputSchema: json.RawMessage(`{"type":"object","properties":{"durationMs":{"type":"number","minimum":0,"default":1000},"text":{"type":"string","default":"done"}}}`),
			Execution:   &mcp.ToolExecution{TaskSupport: support},
		},
		Prepare: func(raw json.RawMessage) (RunFunc, error) {
			a := struct {
				DurationMs float64 `json:"durationMs"`
				Text       string  `json:"text"`
			}{DurationMs: 1000, Text: "done"}
			if err := decodeArgs(raw, &a); err != nil {
				return nil, err
			}
			d, err := msArg("durationMs", a.DurationMs)
			if err != nil {
				return nil, err
			}
			return func(ctx context.Context, c *Call) (*mcp.CallToolResult, error) {
				if err := c.Sleep(ctx, d); err != nil {
					return nil, err
				}
				return &mcp.CallToolResult{Content: []mcp.ContentBlock{mcp.TextBlock(a.Text)}}, nil
			}, nil
		},
	}
}

func echo() *Tool {
	return &Tool{
		Tool: mcp.Tool{
			Name:        ToolEcho,
			Description: "Returns its arguments as JSON text. Not callable as a task (no execution.taskSupport).",
			InputSchema: json.RawMessage(`{"type":"object"}`),
		},
		Prepare: func(raw json.RawMessage) (RunFunc, error) {
			text := string(raw)
			if text == "" {
				text = "{}"
			}
			return func(context.Context, *Call) (*mcp.CallToolResult, error) {
				return &mcp.CallToolResult{Content: []mcp.ContentBlock{mcp.TextBlock(text)}}, nil
			}, nil
		},
	}
}
