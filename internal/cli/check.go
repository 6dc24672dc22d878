package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/tasksim/tasksim/internal/toolargs"
	"github.com/tasksim/tasksim/sim/suite"
)

// CheckOptions are the flags of tasksim check.
type CheckOptions struct {
	Server    string
	ServerCmd string
	ClientCmd string
	// ClientTransport is how --client-cmd reaches the scripted server:
	// "http" (a URL) or "stdio" (a command to start).
	ClientTransport string
	// StdioRelay is the hidden --stdio-relay SPEC: the process a stdio
	// client under test starts as its server.
	StdioRelay string
	Tool       string
	Args       string
	Scenarios  []string
	Skip       []string
	Seed       uint64
	JSON       string
	JUnit      string
	Traces     string
	Timeout    time.Duration
	List       bool
	HTML       string
	// StreamTool, SlowTool and FailTool (with their *Args) name the tool
	// of a role (suite.SuiteOptions.Stream, Slow, Fail).
	StreamTool, StreamArgs string
	SlowTool, SlowArgs     string
	FailTool, FailArgs     string
	// Strict fails a SHOULD broken (WARN) as a MUST is (docs/ci.md).
	Strict bool
}

// NewCmdCheck builds tasksim check.
func NewCmdCheck(st *State) *cobra.Command {
	o := &CheckOptions{}
	cmd := &cobra.Command{
		Use:   "check --server URL | --server-cmd \"CMD ARGS\" | --client-cmd \"CMD ARGS\"",
		Short: "Run the scenario suite against an MCP task server: a verdict per scenario and rule",
		Long: `Run tasksim's scenario suite against anyone's MCP task server, over
Streamable HTTP (--server URL) or stdio (--server-cmd "CMD ARGS"). Each
scenario drives the server with a scripted client (some through a seeded
fault layer); its traffic is recorded as a trace and judged by the rule
catalog (docs/rules.md), together with the scenario's own assertions.

Tools are picked from tools/list by their hints (execution.taskSupport,
execution.streamPartial); a tool's required arguments are made from its
input schema (default, enum, or the simplest value of the type), and a
tool whose required arguments cannot be made is passed over; --tool and
--args override the choice. --args is a JSON object in which {{durationMs}},
{{chunks}}, {{chunkSize}}, {{task}} and {{draw}} are filled per call from
what the scenario asks (as tasksim load does). Scenarios that need a tool
that works as long as asked (cancel a working task, outlive a ttl or a
stream), one that fails, or one that streams take it from --slow-tool,
--fail-tool and --stream-tool, each with its --*-args template (e.g.
--slow-tool sleep --slow-args '{"ms":{{durationMs}}}'); without them,
tasksim's slow_text when the server lists it, else the scenario is SKIP
(or, for a step, the scenario says it is partial) with the reason. A
server that declares no tasks.requests.tools.call capability gets no
task-augmented call: every scenario that needs one is SKIP. A scenario
that cannot apply (a capability the server does not declare, no suitable
tool, an HTTP-only scenario against stdio) is SKIP with the reason, never
PASS. --list prints the scenarios and the rules each exercises.

Point --server at the server itself, not at a tasksim proxy with faults:
check injects its own faults where a scenario needs them, and a proxy's
faults (a duplicated segment, a dropped event) fail rules such as
S1905-SEQNR, S2679-SEQ and HTTP-EVENT-ID-UNIQUE in the server's name. The
proxy goes between a client and a server, to see how that client copes
(judge its --record trace with tasksim trace check). docs/ci.md, "Which
tool goes where".

With --client-cmd "CMD ARGS" the suite judges a client instead: per client
scenario it starts a scripted server (the reference server misbehaving on
purpose: duplicated segments, a lost segment, a cut stream with an SSE
retry, a pollInterval to respect) and runs CMD ARGS URL, with URL also in
TASKSIM_SERVER_URL and the scenario's name in TASKSIM_SCENARIO. With
--client-transport stdio the client is given, in place of URL, a command
line that starts the scripted server as a stdio server (one argument, in
shell words, also in TASKSIM_SERVER_CMD): the client runs it as its stdio
server, the way an MCP host does; it is "tasksim check --stdio-relay ...",
which relays its stdin and stdout to the suite. Scenarios that need
Streamable HTTP (a cut SSE stream) are SKIP over stdio. The client
is judged from the wire (CLIENT-RESUME, CLIENT-POLL-INTERVAL) and from what
it prints on stdout (CLIENT-DEDUP, CLIENT-COMPLETE): the text of the
result's content blocks, concatenated, as tasksim call prints it, compared
with the result the scripted server sent before misbehaving. A scenario
whose fault had nothing to act on is SKIP with the reason. A client that
does not start or never connects fails the scenario with that reason.

For each failure the output names the trace file (kept in --traces DIR, or
in a temporary directory that is printed) and the command that reproduces
it. --json writes the results (schema tasksim.check/v1, docs/ci.md);
--junit a JUnit XML report with one testcase per scenario and rule.

Exit codes: 0 every scenario passed or was skipped, 1 a scenario failed,
2 bad input (an unknown scenario pattern, bad flags), 3 the server cannot
be reached or is not an MCP server. Interrupted (SIGINT, SIGTERM), check
reports the scenarios that finished, writes --json and --junit, ends
every process it started and exits 1 if one of them failed, else 130.
A server's redirect is its answer, never followed.`,
		Example: `  tasksim check --server http://127.0.0.1:7070/mcp --junit report.xml --traces traces/
  tasksim check --server-cmd "tasksim serve --stdio" --scenario 'sep1905-*'
  tasksim check --client-cmd "tasksim call --tool slow_text --args '{\"chunks\":5}' --mode streaming --server"
  tasksim check --client-transport stdio --client-cmd "tasksim call --tool slow_text --mode streaming --server-cmd"
  tasksim check --list`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if o.StdioRelay != "" {
				return runStdioRelay(cmd.Context(), st, o.StdioRelay)
			}
			return runCheck(cmd.Context(), st, o)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.Server, "server", "", "Streamable HTTP endpoint URL of the server under test")
	f.StringVar(&o.ServerCmd, "server-cmd", "", "command that runs the stdio server under test (quoted words allowed); started once per session")
	f.StringVar(&o.ClientCmd, "client-cmd", "", "judge a client: command run once per client scenario, the scripted server's URL appended as its last argument")
	f.StringVar(&o.ClientTransport, "client-transport", "http", "how --client-cmd reaches the scripted server: http (a URL) or stdio (a command that starts it)")
	f.StringVar(&o.StdioRelay, "stdio-relay", "", "relay stdin and stdout to a check suite's stdio endpoint HOST:PORT/TOKEN (what a stdio client under test starts)")
	_ = f.MarkHidden("stdio-relay")
	f.StringVar(&o.Tool, "tool", "", "tool to call instead of the one picked from tools/list")
	f.StringVar(&o.Args, "args", "", "arguments of --tool: a JSON object, {{durationMs}}, {{chunks}}, {{chunkSize}}, {{task}}, {{draw}} filled per call")
	f.StringVar(&o.StreamTool, "stream-tool", "", "tool for the scenarios that need one producing content over time (default: --tool, else one with execution.streamPartial)")
	f.StringVar(&o.StreamArgs, "stream-args", "", "arguments of --stream-tool, a template as --args")
	f.StringVar(&o.SlowTool, "slow-tool", "", "tool that works as long as asked, for cancel, ttl and outlive-the-stream scenarios (default: --tool if --args sets {{durationMs}} or {{chunks}}, else slow_text, else a task tool with a durationMs or delayMs property)")
	f.StringVar(&o.SlowArgs, "slow-args", "", "arguments of --slow-tool, a template as --args (its duration as {{durationMs}})")
	f.StringVar(&o.FailTool, "fail-tool", "", "tool that fails (a tool execution error), for the failure scenario (default: slow_text with failAfter)")
	f.StringVar(&o.FailArgs, "fail-args", "", "arguments of --fail-tool, a template as --args")
	f.StringArrayVar(&o.Scenarios, "scenario", nil, "run only scenarios matching this glob (repeatable)")
	f.StringArrayVar(&o.Skip, "skip", nil, "leave out scenarios matching this glob (repeatable)")
	f.Uint64Var(&o.Seed, "seed", suite.DefaultSeed, "seed of every fault decision")
	f.StringVar(&o.JSON, "json", "", "write the results as JSON to this file (- for stdout)")
	f.StringVar(&o.JUnit, "junit", "", "write a JUnit XML report to this file")
	f.StringVar(&o.Traces, "traces", "", "keep every scenario's trace in this directory (default: only failures', in a temporary directory)")
	f.DurationVar(&o.Timeout, "timeout", suite.DefaultScenarioTimeout, "bound on one scenario")
	f.BoolVar(&o.List, "list", false, "list the scenarios and the rules each exercises, and exit")
	f.StringVar(&o.HTML, "html", "", "write the timeline of each scenario with a trace to this HTML file, its violations highlighted")
	f.BoolVar(&o.Strict, "strict", false, "judge a SHOULD broken as FAIL (exit 1), not WARN")
	return cmd
}

func runCheck(ctx context.Context, st *State, o *CheckOptions) error {
	if ctx == nil {
		ctx = context.Background()
	}
	if o.ClientCmd != "" || o.List && o.Server == "" && o.ServerCmd == "" {
		// Client scenarios are listed with the server ones by --list.
		if o.ClientCmd != "" && (o.Server != "" || o.ServerCmd != "") {
			return usagef("give --client-cmd alone, without --server or --server-cmd")
		}
	}
	if o.ClientTransport != "http" && o.ClientCmd == "" {
		return usagef("--client-transport is for --client-cmd")
	}
	if o.List {
		return listScenarios(st, o)
	}
	if o.ClientCmd != "" {
		return runCheckClient(ctx, st, o)
	}
	if _, err := suite.Select(suite.ServerScenarios(), o.Scenarios, o.Skip); err != nil {
		return &UsageError{Err: err}
	}
	if o.Timeout <= 0 {
		return usagef("--timeout must be positive")
	}
	if err := checkToolFlags(o); err != nil {
		return err
	}
	target, err := checkTarget(o)
	if err != nil {
		return err
	}
	tl := &checkTimelines{path: o.HTML}
	res, err := suite.RunSuite(ctx, target, &suite.SuiteOptions{
		Scenarios: o.Scenarios, Skip: o.Skip, Tool: o.Tool, Args: o.Args, Seed: o.Seed,
		Stream:  suite.ToolSpec{Name: o.StreamTool, Args: o.StreamArgs},
		Slow:    suite.ToolSpec{Name: o.SlowTool, Args: o.SlowArgs},
		Fail:    suite.ToolSpec{Name: o.FailTool, Args: o.FailArgs},
		Timeout: o.Timeout, TraceDir: o.Traces, Command: append([]string{"tasksim"}, st.Args...), Traced: tl.traced(), Strict: o.Strict,
	})
	if err != nil {
		return checkError(err) // unreachable, not MCP: exit 3
	}
	return reportCheck(st, o, res, tl)
}

// checkToolFlags checks each --*-args: valid once its placeholders are
// filled, and given with its tool.
func checkToolFlags(o *CheckOptions) error {
	for _, f := range []struct{ tool, args, flag string }{
		{o.Tool, o.Args, "tool"}, {o.StreamTool, o.StreamArgs, "stream-tool"}, {o.SlowTool, o.SlowArgs, "slow-tool"}, {o.FailTool, o.FailArgs, "fail-tool"},
	} {
		argsFlag := strings.TrimSuffix(f.flag, "tool") + "args"
		if f.args == "" {
			continue
		}
		if err := toolargs.Check(f.args); err != nil {
			return usagef("--%s: with its placeholders filled, %v: %.60s", argsFlag, err, f.args)
		}
		if f.tool == "" {
			return usagef("--%s needs --%s", argsFlag, f.flag)
		}
	}
	return nil
}

// checkTarget is the server the suite checks: --server or --server-cmd.
func checkTarget(o *CheckOptions) (suite.Target, error) {
	var target suite.Target
	switch {
	case o.Server != "" && o.ServerCmd != "":
		return target, usagef("give --server or --server-cmd, not both")
	case o.Server != "":
		if !strings.HasPrefix(o.Server, "http://") && !strings.HasPrefix(o.Server, "https://") {
			return target, usagef("--server %q: want an http:// or https:// URL", o.Server)
		}
		target.URL = o.Server
	case o.ServerCmd != "":
		words, err := splitCommand(o.ServerCmd)
		if err != nil {
			return target, usagef("--server-cmd: %v", err)
		}
		if len(words) == 0 {
			return target, usagef("--server-cmd is empty")
		}
		target.Command, target.Stderr = words, io.Discard
	default:
		return target, usagef("give --server URL, --server-cmd \"CMD ARGS\" or --client-cmd \"CMD ARGS\" (or --list)")
	}
	return target, nil
}

// checkError maps an error that ended a suite before any scenario ran.
func checkError(err error) error {
	switch {
	case errors.Is(err, suite.ErrNoScenario):
		return &UsageError{Err: err}
	case errors.Is(err, context.Canceled):
		return &InterruptedError{What: "check", Detail: "no scenario ran: " + err.Error()}
	}
	return err
}

func listScenarios(st *State, o *CheckOptions) error {
	if o.ClientCmd == "" {
		selected, err := suite.Select(suite.ServerScenarios(), o.Scenarios, o.Skip)
		if err != nil && o.Server+o.ServerCmd != "" {
			return &UsageError{Err: err}
		}
		for _, sc := range selected {
			http := ""
			if sc.HTTPOnly {
				http = " (HTTP only)"
			}
			fmt.Fprintf(st.Stdout, "%-26s %s%s\n  rules: %s\n", sc.Name, sc.Summary, http, strings.Join(sc.Rules, ", "))
		}
	}
	if o.Server == "" && o.ServerCmd == "" {
		selected, err := suite.SelectClient(o.Scenarios, o.Skip)
		if err != nil && o.ClientCmd != "" {
			return &UsageError{Err: err}
		}
		for _, sc := range selected {
			http := ""
			if sc.HTTPOnly {
				http = ", HTTP only"
			}
			fmt.Fprintf(st.Stdout, "%-26s %s (--client-cmd%s)\n  rules: %s\n", sc.Name, sc.Summary, http, strings.Join(sc.Rules, ", "))
		}
	}
	return nil
}

func runCheckClient(ctx context.Context, st *State, o *CheckOptions) error {
	if o.Timeout <= 0 {
		return usagef("--timeout must be positive")
	}
	if o.Tool != "" || o.Args != "" {
		return usagef("--tool and --args choose the server's tool; a client under test chooses its own")
	}
	words, err := splitCommand(o.ClientCmd)
	if err != nil {
		return usagef("--client-cmd: %v", err)
	}
	if len(words) == 0 {
		return usagef("--client-cmd is empty")
	}
	tl := &checkTimelines{path: o.HTML}
	target := suite.ClientTarget{Command: words, Stderr: io.Discard}
	switch o.ClientTransport {
	case "http":
	case "stdio":
		exe, err := os.Executable()
		if err != nil {
			return fmt.Errorf("the stdio relay needs tasksim's own path: %w", err)
		}
		target.Stdio = true
		target.RelayCommand = func(spec string) string {
			return shellQuote(exe) + " check --stdio-relay " + shellQuote(spec)
		}
	default:
		return usagef("--client-transport %q: want http or stdio", o.ClientTransport)
	}
	res, err := suite.RunClientSuite(ctx, target, &suite.SuiteOptions{
		Scenarios: o.Scenarios, Skip: o.Skip, Seed: o.Seed, Timeout: o.Timeout, TraceDir: o.Traces,
		Command: append([]string{"tasksim"}, st.Args...), Traced: tl.traced(), Strict: o.Strict,
	})
	if err != nil {
		return checkError(err)
	}
	return reportCheck(st, o, res, tl)
}

// runStdioRelay is the hidden --stdio-relay SPEC: the stdio server a
// client under test starts in a --client-transport stdio run. It copies
// its stdin and stdout to the suite's scripted server.
func runStdioRelay(ctx context.Context, st *State, spec string) error {
	if ctx == nil {
		ctx = context.Background()
	}
	if err := suite.Relay(ctx, spec, st.Stdin, st.Stdout); err != nil {
		if errors.Is(err, suite.ErrBadRelaySpec) {
			return &UsageError{Err: err}
		}
		return err
	}
	return nil
}
