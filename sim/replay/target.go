package replay

import "github.com/tasksim/tasksim/sim/internal/harness"

// Target is the server a trace's client half is replayed against: a
// Streamable HTTP endpoint (URL) or a command that runs a stdio server
// (Command). It is the scenario suite's suite.Target.
type Target = harness.Target

// ErrUnreachable is the error of a replay whose target could not be
// reached or did not speak MCP. It is the scenario suite's
// suite.ErrUnreachable.
var ErrUnreachable = harness.ErrUnreachable
