package faults

import (
	"math/rand/v2"

	rev "github.com/tasksim/tasksim/mcp/rev20260728"
	"github.com/tasksim/tasksim/mcp/rev20260728/tasks"
)

// On 2026-07-28 a request mirrors its name, uri or taskId in the
// Mcp-Name header, and a server MUST refuse one whose header and body
// differ: HTTP 400, -32020 (2026-07-28 Streamable HTTP, "Standard
// Headers"; Tasks, "Streamable HTTP"). wrong-mcp-name plays an
// intermediary that mangles it.
var wrongMcpNameKind = Kind{
	Name:    "wrong-mcp-name",
	Summary: "a request's Mcp-Name header is rewritten to a value its body does not name, as a mangling intermediary would",
	Params: []ParamDoc{{Key: "name", Default: defaultWrongName,
		Doc: "the value written into Mcp-Name (plain ASCII)"}},
	Places:    []string{PlaceHTTP},
	Revisions: rev20260728,
	NotOn:     "Mcp-Name is a header of 2026-07-28",
	Draw:      weight(2), // requests that carry a name only
	New: func(p *Params) (Fault, error) {
		return wrongMcpName{name: p.String("name", defaultWrongName)}, nil
	},
}

const defaultWrongName = "tasksim-wrong-name"

// nameRules are the methods whose requests carry Mcp-Name.
var nameRules = rev.CoreNameRules().With(tasks.NameRules())

type wrongMcpName struct{ name string }

func (f wrongMcpName) Act(m *Msg, _ *rand.Rand) (Action, bool) {
	if m.Place != PlaceHTTP || m.Stream != StreamRequest || !of20260728(m) || m.RPC.Type != "request" {
		return Action{}, false
	}
	if _, ok := nameRules[m.RPC.Method]; !ok {
		return Action{}, false
	}
	return Action{Verb: Rewrite, Header: rev.HeaderName, Value: f.name}, true
}
