package server

import "github.com/tasksim/tasksim/mcp/clock"

// The server takes its time from a clock.Clock (Options.Clock): every
// timestamp, ttl deadline, tool delay and the immediate window. A
// clock.Sim drives it by hand in tests and simulations; it fires timers
// in the goroutine that advances it, so no timer callback of the server
// blocks or takes a lock that could be held while the clock moves.
var _ clock.Clock = clock.System{}
