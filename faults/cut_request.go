package faults

import (
	"math/rand/v2"

	"github.com/tasksim/tasksim/mcp"
	"github.com/tasksim/tasksim/mcp/rev20260728/tasks"
)

// On 2026-07-28 a request lives as long as its stream: closing the
// stream of a POST is its cancellation, the server MUST treat a client
// disconnect as one and MUST NOT send further messages for it, and the
// client MUST re-issue a broken request with a new id (2026-07-28
// Streamable HTTP, "Cancellation"; changelog: resumability removed).
// cut-request cuts the stream of a tools/call, the only request that can
// create a task (Tasks, "Creating Tasks"), on one side of the
// CreateTaskResult.
var cutRequestKind = Kind{
	Name:    "cut-request",
	Summary: "the stream of a tools/call is cut, which cancels it: before the server answers, or before its CreateTaskResult reaches the client",
	Params: []ParamDoc{{Key: "when", Default: whenAfterCreate,
		Doc: "before-create: the server gets the request on a stream already closed; after-create: the CreateTaskResult is not delivered and the stream breaks (an orphan task)"}},
	Places:    []string{PlaceHTTP, PlaceConn},
	Revisions: rev20260728,
	NotOn:     "its point is the cancellation a closed stream is on 2026-07-28",
	Draw: func(r *rand.Rand, _ []string) Drawn {
		// Calls only, and after-create only those that became tasks.
		return Drawn{Params: []string{"when=" + []string{whenBeforeCreate, whenAfterCreate}[r.IntN(2)]}, Weight: 4}
	},
	New: func(p *Params) (Fault, error) {
		return cutRequest{afterCreate: p.Choice("when", whenAfterCreate, whenBeforeCreate, whenAfterCreate) == whenAfterCreate}, nil
	},
}

const (
	whenBeforeCreate = "before-create"
	whenAfterCreate  = "after-create"
)

type cutRequest struct{ afterCreate bool }

func (f cutRequest) Act(m *Msg, _ *rand.Rand) (Action, bool) {
	if !of20260728(m) || m.Place == PlaceStdio { // stdio cancels by notification, not by a closed stream
		return Action{}, false
	}
	if f.afterCreate {
		if m.RPC.Type == "response" && m.RPC.ResultType == string(tasks.ResultTypeTask) {
			return Action{Verb: CutBefore}, true
		}
		return Action{}, false
	}
	if m.RPC.Type == "request" && m.RPC.Method == mcp.MethodToolsCall {
		// The request is delivered and its stream closed at once.
		return Action{Verb: CutAfter}, true
	}
	return Action{}, false
}
