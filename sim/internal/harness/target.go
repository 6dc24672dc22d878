package harness

import (
	"context"
	"errors"
	"io"
	"strings"

	"github.com/tasksim/tasksim/mcp"
)

// Target is the server under test: a Streamable HTTP endpoint (URL), a
// command that runs a stdio server (Command), or, for tests, a function
// returning a fresh in-process transport per connection (Dial).
type Target struct {
	URL     string
	Command []string
	// Stderr receives a stdio server's stderr; nil discards it.
	Stderr io.Writer
	// Dial, when set, replaces Command: each connection of a scenario
	// gets the transport it returns (a stdio.Pipe to an in-process
	// server), recorded as a stdio server is.
	Dial func() mcp.Transport
}

// HTTP reports whether the target is a Streamable HTTP endpoint.
func (t Target) HTTP() bool { return t.URL != "" }

func (t Target) String() string {
	switch {
	case t.URL != "":
		return t.URL
	case len(t.Command) > 0:
		return strings.Join(t.Command, " ")
	}
	return "in-process stdio server"
}

// ErrUnreachable is the error of a suite or a replay whose target could
// not be reached or did not speak MCP: the first connection failed.
var ErrUnreachable = errors.New("cannot reach the target")

// ClientTarget is a client under test: a command run once per scenario
// with the scripted server's URL as its last argument and in
// TASKSIM_SERVER_URL, the scenario's name in TASKSIM_SCENARIO; with
// Stdio, a command line that starts the scripted server as a stdio
// server instead, as the last argument and in TASKSIM_SERVER_CMD. Or, for
// tests, a function doing the same in-process.
type ClientTarget struct {
	Command []string
	// Stdio runs the client scenarios over stdio: the client starts the
	// scripted server as a stdio server, with RelayCommand(spec).
	Stdio bool
	// RelayCommand returns the command line (shell words) of a relay to
	// spec, `tasksim check --stdio-relay SPEC`: a process whose stdin and
	// stdout are the scripted server's (sim/suite/relay.go). Needed with Stdio
	// and Command.
	RelayCommand func(spec string) string
	// Run replaces Command: it runs the client against server (the URL;
	// with Stdio, the relay spec, to pass to DialRelay) and returns what
	// it printed on stdout.
	Run func(ctx context.Context, server, scenario string) (stdout string, err error)
	// Stderr receives the command's stderr; nil discards it.
	Stderr io.Writer
}

func (t ClientTarget) String() string {
	s := "in-process client"
	if len(t.Command) > 0 {
		s = strings.Join(t.Command, " ")
	}
	if t.Stdio {
		s += " (stdio)"
	}
	return s
}
