package suite

import (
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync/atomic"

	"github.com/tasksim/tasksim/internal/toolargs"
	"github.com/tasksim/tasksim/mcp"
)

// toolChoice is a tool a scenario calls, with its arguments.
type toolChoice struct {
	// name is the tool; "" when no tool fits. A tool named with why set
	// exists but may not be called as a task.
	name string
	// args is the arguments' template (toolargs: placeholders filled per
	// call); "" calls the tool with {}.
	args string
	// why says why the tool may not be used (name may still be set).
	why string
	// knownArgs says the suite knows the tool's arguments (tasksim's
	// slow_text called without --args): it can ask for more chunks or a
	// failure.
	knownArgs bool
	partial   bool // execution.streamPartial
	// seed and calls make {{draw}} and {{task}} of the template.
	seed  uint64
	calls *atomic.Int64
}

// toolset is what the suite picked from tools/list and the options.
type toolset struct {
	// task is any task-capable tool; stream one that produces content
	// over time (hinted by execution.streamPartial); slow one that works
	// as long as the scenario asks (a task to cancel, to outlive its ttl
	// or its stream); fail one that fails.
	task, stream, slow, fail toolChoice
	// noTasks, when set, says why no tools/call may carry a task: the
	// server does not declare tasks.requests.tools.call.
	noTasks string
}

// slowTextName is the reference server's streaming tool, whose arguments
// the suite knows.
const slowTextName = "slow_text"

// noTasksWhy is the reason of every scenario skipped because the server
// does not let tools/call be task-augmented.
const noTasksWhy = "the server declares no tasks capability for tools/call (tasks.requests.tools.call): no task augmentation may be sent to it (2025-11-25 Tasks, Tool-Level Negotiation)"

// taskCapable reports whether t may be called as a task: execution.taskSupport
// optional or required. Absent or "forbidden", a client MUST NOT (2025-11-25
// Tasks, Tool-Level Negotiation).
func taskCapable(t mcp.Tool) bool {
	return t.Execution != nil && (t.Execution.TaskSupport == mcp.TaskSupportOptional || t.Execution.TaskSupport == mcp.TaskSupportRequired)
}

// pickTools chooses the tool of each role. A role named in o (--tool,
// --stream-tool, --slow-tool, --fail-tool) gets that tool with its
// argument template; otherwise the tools are picked by their hints:
//
//   - task: --tool, else the first task-capable tool whose required
//     arguments the suite can make from its input schema;
//   - stream: --stream-tool, else --tool, else a task-capable tool with
//     execution.streamPartial (slow_text first), else task;
//   - slow: --slow-tool, else --tool when its template sets the duration
//     ({{durationMs}} or {{chunks}}) or it is slow_text without --args,
//     else slow_text from tools/list, else a task tool with a numeric
//     durationMs, delayMs, sleepMs or waitMs property (durationTemplate);
//   - fail: --fail-tool, else slow_text (failAfter).
//
// Whatever is picked, a server that does not declare
// tasks.requests.tools.call gets no task-augmented call: noTasks says so.
func pickTools(p *probeInfo, o *SuiteOptions) toolset {
	var ts toolset
	if !p.init.Capabilities.Tasks.ToolCall() {
		ts.noTasks = noTasksWhy
	}
	pk := picker{tools: p.tools, seed: o.Seed, calls: new(atomic.Int64)}
	if o.Tool != "" {
		ts.task = pk.given(ToolSpec{o.Tool, o.Args}, "--tool")
		ts.stream = ts.task
	} else {
		ts.task, ts.stream = pk.byHints()
	}
	if o.Stream.Name != "" {
		ts.stream = pk.given(o.Stream, "--stream-tool")
	}
	slowText, listed := pk.find(slowTextName)
	listed = listed && taskCapable(slowText)
	switch {
	case o.Slow.Name != "":
		ts.slow = pk.given(o.Slow, "--slow-tool")
	case o.Tool != "" && ts.task.name != "" && (ts.task.knownArgs || toolargs.Shaped(ts.task.args)):
		ts.slow = ts.task
	case listed:
		ts.slow = pk.choose(slowText, "")
	default:
		ts.slow = pk.byDuration()
	}
	switch {
	case o.Fail.Name != "":
		ts.fail = pk.given(o.Fail, "--fail-tool")
	case listed:
		ts.fail = pk.choose(slowText, "")
	default:
		ts.fail.why = "no tool known to fail when asked: name one with --fail-tool NAME --fail-args JSON"
	}
	return ts
}

// picker makes the toolChoices of one suite run: they share its seed and
// its count of calls.
type picker struct {
	tools []mcp.Tool // tools/list
	seed  uint64
	calls *atomic.Int64
}

// choose makes t with argument template args ("": the suite's own) a
// choice, or says why it cannot be one.
func (pk picker) choose(t mcp.Tool, args string) toolChoice {
	c := toolChoice{name: t.Name, args: args, partial: t.Execution != nil && t.Execution.StreamPartial, seed: pk.seed, calls: pk.calls}
	switch {
	case t.Name == slowTextName && args == "":
		c.knownArgs = true
	case args == "":
		// Calling with {} a tool that requires arguments would charge
		// the server with the suite's own invalid call.
		made, err := requiredArgs(t.InputSchema)
		if err != nil {
			return toolChoice{why: fmt.Sprintf("tool %s requires arguments the suite cannot make up (%v): give them with --tool and --args", t.Name, err)}
		}
		c.args = string(made)
	}
	if !taskCapable(t) {
		c.why = "tool " + t.Name + " declares no execution.taskSupport (optional or required): it may not be called as a task"
	}
	return c
}

// find returns the tool of tools/list named name.
func (pk picker) find(name string) (mcp.Tool, bool) {
	for _, t := range pk.tools {
		if t.Name == name {
			return t, true
		}
	}
	return mcp.Tool{}, false
}

// given is the tool an option (flag) names, with its template.
func (pk picker) given(spec ToolSpec, flag string) toolChoice {
	t, ok := pk.find(spec.Name)
	if !ok {
		return toolChoice{why: "tools/list has no tool " + spec.Name + " (" + flag + ")"}
	}
	return pk.choose(t, spec.Args)
}

// byHints picks the task and stream tools when --tool names none: the
// first usable task-capable tool, and one with execution.streamPartial
// (slow_text first), else the task tool.
func (pk picker) byHints() (task, stream toolChoice) {
	unusable := ""
	for _, t := range pk.tools {
		if !taskCapable(t) {
			continue
		}
		c := pk.choose(t, "")
		if c.name == "" {
			unusable = c.why
			continue
		}
		if task.name == "" {
			task = c
		}
		if t.Execution.StreamPartial && (stream.name == "" || t.Name == slowTextName) {
			stream = c
		}
	}
	if task.name == "" {
		task.why = "no tool in tools/list declares execution.taskSupport (give one with --tool)"
		if unusable != "" {
			task.why = unusable
		}
	}
	if stream.name == "" {
		stream = task
	}
	return task, stream
}

// byDuration picks a slow tool by its input schema: the first
// task-capable tool with a duration property (durationTemplate).
func (pk picker) byDuration() toolChoice {
	for _, t := range pk.tools {
		if tmpl, ok := durationTemplate(t); ok && taskCapable(t) {
			return pk.choose(t, tmpl)
		}
	}
	return toolChoice{why: "no tool known to work as long as asked: name one with --slow-tool NAME --slow-args JSON, its duration as {{durationMs}}"}
}

// argsFor returns the arguments of c for a call shaped by the suite:
// chunks chunks every intervalMs, failing after failAfter (< 0: never).
// slow_text gets them as its own arguments; another tool gets its
// template filled (toolargs: {{chunks}}, {{durationMs}} = chunks ×
// intervalMs, {{chunkSize}} 16, {{task}} the call's number, {{draw}}
// drawn from the seed and that number). Only slow_text can be asked to
// fail: the fail tool fails on its own.
func (c toolChoice) argsFor(chunks, intervalMs, failAfter int) any {
	if !c.knownArgs {
		if c.args == "" {
			return map[string]any{}
		}
		k := int64(0)
		if c.calls != nil {
			k = c.calls.Add(1) - 1
		}
		return json.RawMessage(toolargs.Fill(c.args, toolargs.Values{
			Task: k, Draw: rand.New(rand.NewPCG(c.seed, uint64(k)|1<<63)).Float64(),
			DurationMs: int64(chunks) * int64(intervalMs), Chunks: chunks, ChunkSize: 16,
		}))
	}
	a := map[string]any{"chunks": chunks, "intervalMs": intervalMs, "chunkSize": 16}
	if failAfter >= 0 {
		a["failAfter"] = failAfter
	}
	return a
}

// durationProps are the names of an input property taken to be how long
// a tool works, in milliseconds.
var durationProps = []string{"durationMs", "delayMs", "sleepMs", "waitMs", "duration_ms", "delay_ms", "sleep_ms", "wait_ms"}

// durationTemplate makes an argument template for a tool whose input
// schema has a numeric durationProps property that admits a minute: its
// required arguments (requiredArgs) with that property set to
// {{durationMs}}, so the suite can ask it to work as long as a scenario
// needs.
func durationTemplate(t mcp.Tool) (string, bool) {
	var s struct {
		Properties map[string]struct {
			Type    json.RawMessage `json:"type"`
			Maximum *float64        `json:"maximum"`
		} `json:"properties"`
	}
	if json.Unmarshal(t.InputSchema, &s) != nil {
		return "", false
	}
	for _, name := range durationProps {
		p, ok := s.Properties[name]
		if !ok || (string(p.Type) != `"number"` && string(p.Type) != `"integer"`) || p.Maximum != nil && *p.Maximum < 60_000 {
			continue
		}
		made, err := requiredArgs(t.InputSchema)
		if err != nil {
			return "", false
		}
		args := map[string]any{}
		if made != nil {
			json.Unmarshal(made, &args)
		}
		const mark = "\x00tasksim-duration\x00"
		args[name] = mark
		b, err := json.Marshal(args)
		if err != nil {
			return "", false
		}
		q, _ := json.Marshal(mark)
		return strings.Replace(string(b), string(q), "{{durationMs}}", 1), true
	}
	return "", false
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

// propSchema is what simpleValue reads of a property's JSON schema.
type propSchema struct {
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

// simpleValue is the value requiredArgs gives one property.
func simpleValue(prop json.RawMessage) (any, bool) {
	var p propSchema
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
	t, ok := p.firstType()
	if !ok {
		return nil, false
	}
	if f := typedValue[t]; f != nil {
		return f(&p, t)
	}
	return nil, false
}

// firstType returns the schema's first type but null.
func (p *propSchema) firstType() (string, bool) {
	var types []string
	if json.Unmarshal(p.Type, &types) != nil {
		var one string
		if json.Unmarshal(p.Type, &one) != nil {
			return "", false
		}
		types = []string{one}
	}
	types = slices.DeleteFunc(types, func(t string) bool { return t == "null" })
	if len(types) == 0 {
		return "", false
	}
	return types[0], true
}

// typedValue gives a value of each JSON schema type simpleValue can fill
// without guessing, or false.
var typedValue = map[string]func(p *propSchema, typ string) (any, bool){
	"string":  stringValue,
	"integer": numberValue,
	"number":  numberValue,
	"boolean": func(*propSchema, string) (any, bool) { return false, true },
	"array": func(p *propSchema, _ string) (any, bool) {
		if p.MinItems > 0 {
			return nil, false
		}
		return []any{}, true
	},
}

func stringValue(p *propSchema, _ string) (any, bool) {
	const word = "tasksim check"
	if p.Pattern != "" || p.Format != "" || p.MinLength > len(word) || p.MaxLength != nil && *p.MaxLength < len(word) {
		return nil, false
	}
	return word, true
}

func numberValue(p *propSchema, typ string) (any, bool) {
	v := 1.0
	switch {
	case p.Minimum != nil:
		v = *p.Minimum
	case p.Maximum != nil && *p.Maximum < v:
		v = *p.Maximum
	}
	if typ == "integer" && v != float64(int64(v)) {
		return nil, false
	}
	return v, true
}
