package sim

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

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
		switch {
		case t.Name == slowTextName && args == nil:
			c.knownArgs = true
		case args == nil:
			// Calling with {} a tool that requires arguments would charge
			// the server with the suite's own invalid call.
			made, err := requiredArgs(t.InputSchema)
			if err != nil {
				return toolChoice{why: fmt.Sprintf("tool %s requires arguments the suite cannot make up (%v): give them with --tool and --args", t.Name, err)}
			}
			c.args = made
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
	unusable := ""
	for _, t := range p.tools {
		if !taskCapable(t) {
			continue
		}
		c := choose(t)
		if c.name == "" {
			unusable = c.why
			continue
		}
		if ts.task.name == "" {
			ts.task = c
		}
		if t.Execution.StreamPartial && (ts.stream.name == "" || t.Name == slowTextName) {
			ts.stream = c
		}
	}
	if ts.task.name == "" {
		ts.task.why = "no tool in tools/list declares execution.taskSupport (give one with --tool)"
		if unusable != "" {
			ts.task.why = unusable
		}
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

// requiredArgs makes the arguments of a tool whose input schema requires
// some: each required property gets its default, its const, its first
// enum value, or the simplest value of its type ("tasksim check", its
// minimum or 1, false, []). A property it cannot make (an object, a
// pattern or format to meet) is an error naming it. No required property:
// nil, the call's arguments are {}.
func requiredArgs(schema json.RawMessage) (json.RawMessage, error) {
	var s struct {
		Required   []string                   `json:"required"`
		Properties map[string]json.RawMessage `json:"properties"`
	}
	if len(schema) == 0 || json.Unmarshal(schema, &s) != nil || len(s.Required) == 0 {
		return nil, nil
	}
	out := map[string]any{}
	var bad []string
	for _, name := range s.Required {
		v, ok := simpleValue(s.Properties[name])
		if !ok {
			bad = append(bad, name)
			continue
		}
		out[name] = v
	}
	if len(bad) > 0 {
		return nil, errors.New(strings.Join(bad, ", "))
	}
	return json.Marshal(out)
}

// simpleValue is the value requiredArgs gives one property.
func simpleValue(prop json.RawMessage) (any, bool) {
	var p struct {
		Default   json.RawMessage   `json:"default"`
		Const     json.RawMessage   `json:"const"`
		Enum      []json.RawMessage `json:"enum"`
		Type      json.RawMessage   `json:"type"`
		Pattern   string            `json:"pattern"`
		Format    string            `json:"format"`
		MinLength int               `json:"minLength"`
		MaxLength *int              `json:"maxLength"`
		Minimum   *float64          `json:"minimum"`
		Maximum   *float64          `json:"maximum"`
		MinItems  int               `json:"minItems"`
	}
	if len(prop) == 0 || json.Unmarshal(prop, &p) != nil {
		return nil, false
	}
	switch {
	case len(p.Default) > 0:
		return p.Default, true
	case len(p.Const) > 0:
		return p.Const, true
	case len(p.Enum) > 0:
		return p.Enum[0], true
	}
	var types []string
	if json.Unmarshal(p.Type, &types) != nil {
		var one string
		if json.Unmarshal(p.Type, &one) != nil {
			return nil, false
		}
		types = []string{one}
	}
	types = slices.DeleteFunc(types, func(t string) bool { return t == "null" })
	if len(types) == 0 {
		return nil, false
	}
	const word = "tasksim check"
	switch types[0] {
	case "string":
		if p.Pattern != "" || p.Format != "" || p.MinLength > len(word) || p.MaxLength != nil && *p.MaxLength < len(word) {
			return nil, false
		}
		return word, true
	case "integer", "number":
		v := 1.0
		switch {
		case p.Minimum != nil:
			v = *p.Minimum
		case p.Maximum != nil && *p.Maximum < v:
			v = *p.Maximum
		}
		if types[0] == "integer" && v != float64(int64(v)) {
			return nil, false
		}
		return v, true
	case "boolean":
		return false, true
	case "array":
		if p.MinItems > 0 {
			return nil, false
		}
		return []any{}, true
	}
	return nil, false
}
