package faults

import (
	"math/rand/v2"

	"github.com/tasksim/tasksim/mcp"
)

// Fault acts on the messages it applies to. A Fault is built from a Spec
// by a Registry; it holds its parameters and no state, so that its
// decisions depend on the message and the draw alone. Which messages reach
// it is the business of its Selector (the parameters every fault shares),
// so Act sees only messages the user addressed.
type Fault interface {
	// Act returns what to do with m, or false to let it pass: a fault that
	// drops partial notifications passes every other message. r draws
	// random values (jitter) from the run's seed and m's identity.
	Act(m *Msg, r *rand.Rand) (Action, bool)
}

// Kind describes one registered fault.
type Kind struct {
	// Name is the fault's name in specs: "drop-sse-event".
	Name string
	// Summary is one sentence for --help and docs.
	Summary string
	// Params are the fault's own parameters, beyond the shared selector.
	Params []ParamDoc
	// Places says where the fault can act: "http", "stdio", "conn".
	Places []string
	// Revisions are the protocol revisions whose messages the fault has
	// a meaning on; nil: every revision. The fault lets a message of
	// another revision pass (Set.Decide), and a spec confined to another
	// (revision=) is refused, with NotOn saying why (revision.go).
	Revisions []mcp.Revision
	// NotOn says why the fault has no meaning on the revisions it does
	// not take: "it drops a SEP-2679 partial, which 2026-07-28 does not
	// send".
	NotOn string
	// New builds the fault from its own parameters (already checked to be
	// among Params).
	New func(p *Params) (Fault, error)
	// Draw draws the fault for a generated schedule (tasksim sim): its
	// own parameters from r, given the places the run has, and its
	// weight (see Drawn and DrawSpec). Nil draws no parameters, at
	// weight 1.
	Draw func(r *rand.Rand, places []string) Drawn
}

// ParamDoc documents one parameter.
type ParamDoc struct {
	Key, Default, Doc string
	// Excludes are the parameters (the fault's own or the selector's)
	// that cannot be given with this one: Doc says why.
	Excludes []string
	// Revisions are the revisions the parameter has a meaning on; nil:
	// every revision. NotOn says why it has none on the others.
	Revisions []mcp.Revision
	NotOn     string
}
