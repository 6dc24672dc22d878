package sim

import (
	"encoding/json"

	"github.com/tasksim/tasksim/mcp"
)

// toolChoice is a tool a scenario calls, with its arguments.
type toolChoice struct {
	name string
	args json.RawMessage
	// why says why no tool fits (name is then "").
	why string
	// knownArgs says the suite knows the tool's arguments (tasksim's
	// slow_text): it can ask for more chunks or a failure.
	knownArgs bool
	partial   bool // execution.streamPartial
}

// toolset is what the suite picked from tools/list.
type toolset struct {
	// stream is a task-capable tool that produces content over time,
	// hinted by execution.streamPartial; task any task-capable tool.
	stream, task toolChoice
}

// slowTextName is the reference server's streaming tool, whose arguments
// the suite knows.
const slowTextName = "slow_text"

func taskCapable(t mcp.Tool) bool {
	return t.Execution != nil && (t.Execution.TaskSupport == mcp.TaskSupportOptional || t.Execution.TaskSupport == mcp.TaskSupportRequired)
}

// pickTools chooses the tools by their hints; name and args, when given,
// override the choice for both roles.
func pickTools(p *probeInfo, name string, args json.RawMessage) toolset {
	choose := func(t mcp.Tool) toolChoice {
		c := toolChoice{name: t.Name, args: args, partial: t.Execution != nil && t.Execution.StreamPartial}
		if t.Name == slowTextName && args == nil {
			c.knownArgs = true
		}
		return c
	}
	var ts toolset
	if name != "" {
		for _, t := range p.tools {
			if t.Name == name {
				ts.stream, ts.task = choose(t), choose(t)
				if !taskCapable(t) {
					ts.stream.why = "tool " + name + " declares no execution.taskSupport"
					ts.task.why = ts.stream.why
				}
				return ts
			}
		}
		ts.stream = toolChoice{why: "tools/list has no tool " + name + " (--tool)"}
		ts.task = ts.stream
		return ts
	}
	for _, t := range p.tools {
		if !taskCapable(t) {
			continue
		}
		if ts.task.name == "" {
			ts.task = choose(t)
		}
		if t.Execution.StreamPartial && (ts.stream.name == "" || t.Name == slowTextName) {
			ts.stream = choose(t)
		}
	}
	if ts.task.name == "" {
		ts.task.why = "no tool in tools/list declares execution.taskSupport (give one with --tool)"
	}
	if ts.stream.name == "" {
		if ts.task.name != "" {
			ts.stream = ts.task
		} else {
			ts.stream.why = ts.task.why
		}
	}
	return ts
}

// argsFor returns the arguments of c for a call shaped by the suite: for
// slow_text, chunks chunks every intervalMs, failing after failAfter (< 0:
// never); for another tool, its own arguments.
func (c toolChoice) argsFor(chunks, intervalMs, failAfter int) any {
	if !c.knownArgs {
		if c.args == nil {
			return map[string]any{}
		}
		return c.args
	}
	a := map[string]any{"chunks": chunks, "intervalMs": intervalMs, "chunkSize": 16}
	if failAfter >= 0 {
		a["failAfter"] = failAfter
	}
	return a
}
