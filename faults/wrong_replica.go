package faults

import (
	"encoding/json"
	"math/rand/v2"
	"net/http"
	"strings"

	"github.com/tasksim/tasksim/mcp"
)

// Without sessions a deployment of several replicas finds a task by
// routing every tasks/* request on Mcp-Name, its taskId, to the replica
// that holds it (Tasks, "Streamable HTTP": "load balancers [route]
// subsequent requests for the same task to the server instance holding
// its state"). A replica that holds no task answers -32602 (Tasks,
// "Task Polling": unknown ids). wrong-replica answers for such a
// replica: the request never reaches the server.
var wrongReplicaKind = Kind{
	Name:      "wrong-replica",
	Summary:   "a tasks/* request is routed to a replica that does not hold the task: answered -32602 task not found without reaching the server",
	Places:    []string{PlaceHTTP},
	Revisions: rev20260728,
	NotOn:     "it answers for a replica found by Mcp-Name, which 2026-07-28 routes by; 2025-11-25 routes by session",
	Draw:      weight(2), // tasks/* requests only
	New:       func(*Params) (Fault, error) { return wrongReplica{}, nil },
}

type wrongReplica struct{}

// notFoundMessage is what the reference server says of a task it does
// not hold.
const notFoundMessage = "Failed to retrieve task: Task not found"

func (wrongReplica) Act(m *Msg, _ *rand.Rand) (Action, bool) {
	if m.Place != PlaceHTTP || m.Stream != StreamRequest || !of20260728(m) ||
		m.RPC.Type != "request" || !strings.HasPrefix(m.RPC.Method, "tasks/") {
		return Action{}, false
	}
	body, err := json.Marshal(struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   mcp.Error       `json:"error"`
	}{"2.0", json.RawMessage(m.RPC.ID), mcp.Error{Code: mcp.CodeInvalidParams, Message: notFoundMessage}})
	if err != nil {
		return Action{}, false
	}
	// The status of a JSON-RPC error that is no transport error: the
	// reference server's, 200.
	return Action{Verb: Status, Status: http.StatusOK, Raw: body}, true
}
