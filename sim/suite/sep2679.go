package suite

import (
	"fmt"
	"sync/atomic"

	"github.com/tasksim/tasksim/mcp"
	"github.com/tasksim/tasksim/mcp/client"
)

// SEP-2679 scenarios: partial notifications and their negotiation.

func scenarioPartials(e *Env) error {
	tc, s, err := e.setup(needs{partial: true}, nil)
	if err != nil {
		return err
	}
	res, err := s.CallTool(e.Ctx, client.CallOptions{Name: tc.name, Args: tc.argsFor(4, 20, -1), Mode: client.ModePartial})
	if err != nil {
		return fmt.Errorf("partial call: %w", err)
	}
	e.Expect("S2679-SEQ", res.Complete, "the call did not complete")
	if tc.knownArgs {
		e.Expect("S2679-SEQ", res.Partials >= 4 && res.DataLoss == 0, "4 chunks came as %d partials, %d lost", res.Partials, res.DataLoss)
	}
	return nil
}

func scenarioPartialNegotiation(e *Env) error {
	tc, err := e.need(needs{partial: true})
	if err != nil {
		return err
	}
	var partials atomic.Int64
	s, err := e.Connect(&client.Options{NoPartial: true, OnNotification: func(m *mcp.Message) {
		if m.Method == mcp.NotificationTaskPartial {
			partials.Add(1)
		}
	}})
	if err != nil {
		return err
	}
	res, err := s.CallTool(e.Ctx, client.CallOptions{Name: tc.name, Args: tc.argsFor(3, 20, -1), Mode: client.ModeTask})
	if err != nil {
		return fmt.Errorf("task call without tasks.streaming.partial: %w", err)
	}
	e.Expect("S2679-NEGOTIATION", res.Complete, "the call did not complete")
	e.Expect("S2679-NEGOTIATION", partials.Load() == 0, "%d partial notifications to a client that did not declare tasks.streaming.partial", partials.Load())
	return nil
}
