package suite

import "github.com/tasksim/tasksim/sim/internal/harness"

// Target is the server under test: a Streamable HTTP endpoint (URL), a
// command that runs a stdio server (Command), or, for tests, a function
// returning a fresh in-process transport per connection (Dial).
type Target = harness.Target

// ClientTarget is a client under test: a command run once per scenario
// with the scripted server's URL as its last argument and in
// TASKSIM_SERVER_URL, the scenario's name in TASKSIM_SCENARIO; with
// Stdio, a command line that starts the scripted server as a stdio
// server instead, as the last argument and in TASKSIM_SERVER_CMD. Or, for
// tests, a function doing the same in-process.
type ClientTarget = harness.ClientTarget

// ErrUnreachable is the error of a suite whose target could not be
// reached or did not speak MCP: the first connection failed.
var ErrUnreachable = harness.ErrUnreachable

// MaxClientOutput caps what a client under test may print on stdout, in
// bytes; a client that prints more fails its scenario and is stopped.
const MaxClientOutput = harness.MaxClientOutput
