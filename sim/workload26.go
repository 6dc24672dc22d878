package sim

import (
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/tasksim/tasksim/mcp/client"
	rev "github.com/tasksim/tasksim/mcp/rev20260728"
	"github.com/tasksim/tasksim/mcp/server"
)

// The workload of a run of 2026-07-28: one stateless connection (there
// are no sessions; the connection multiplexes the calls, over HTTP one
// POST each), tool calls that the server may answer with a task, each
// task followed by polling tasks/get at the pollIntervalMs the server
// suggests or by subscriptions/listen, and input asked for on the way.

// Ways a call of 2026-07-28 follows its task (Call.Delivery).
const (
	DeliveryPoll   = "poll"
	DeliveryListen = "listen"
)

// Tools of a 2026-07-28 workload besides slow_text and instant: one that
// asks its input through the task (inputRequests, tasks/update), one that
// asks it by a multi round-trip request before the task is made.
const (
	toolConfirm  = server.ToolConfirmDelete
	toolMRTRTask = server.ToolWithTask
)

// simFile and simName are the answers the client gives.
const (
	simFile = "sim.txt"
	simName = "sim"
)

// Deliveries lists the ways a call of 2026-07-28 follows its task.
func Deliveries() []string { return []string{DeliveryPoll, DeliveryListen} }

// drawWorkload26 draws a workload of 2026-07-28 from r: the transport,
// the server (dual-era or 2026-07-28 alone), its pollIntervalMs, and 1 to
// o.Tasks calls on one connection, each at an instant of its own.
func drawWorkload26(r *rand.Rand, o *WorkloadOptions) Workload {
	deliveries := o.Deliveries
	if len(deliveries) == 0 {
		deliveries = Deliveries()
	}
	w := Workload{Revision: Revision20260728, Transport: o.Transport, Server: ServerBoth, Sessions: 1}
	if w.Transport == "" {
		w.Transport = TransportHTTP
		if r.IntN(4) == 0 {
			w.Transport = TransportStdio
		}
	}
	if r.IntN(2) == 0 {
		w.Server = ServerStateless
	}
	w.PollIntervalMs = []int64{0, 100, 250, 1000}[r.IntN(4)]
	n := 1 + r.IntN(o.Tasks)
	var at int64
	for i := range n {
		if i > 0 {
			at += 1 + r.Int64N(400)
		}
		c := Call{StartMs: at, Tool: server.ToolSlowText, Delivery: deliveries[r.IntN(len(deliveries))], FailAfter: -1}
		switch k := r.IntN(16); {
		case k == 0:
			c.Tool = server.ToolInstant
		case k == 1:
			c.Tool = toolConfirm
		case k == 2:
			c.Tool = toolMRTRTask
		default:
			c.Chunks = r.IntN(7)
			c.IntervalMs = 10 * (1 + r.Int64N(40))
			d := c.durationMs()
			switch k := r.IntN(20); {
			case k < 2:
				c.FailAfter = r.IntN(c.Chunks + 1)
			case k < 4 && d >= 200:
				c.CancelAfterMs = d / 2
			case k < 6:
				c.NoTasks = true
			}
		}
		w.Calls = append(w.Calls, c)
	}
	return w
}

// validate26 reports the first thing that makes a workload of 2026-07-28
// unrunnable.
func (w Workload) validate26() error {
	switch {
	case w.Server != ServerBoth && w.Server != ServerStateless:
		return fmt.Errorf("workload: server %q (want %s or %s)", w.Server, ServerBoth, ServerStateless)
	case w.Sessions != 1:
		return fmt.Errorf("workload: %d sessions (a %s run has one connection)", w.Sessions, Revision20260728)
	case w.PollIntervalMs < 0 || w.PollIntervalMs > 3_600_000:
		return fmt.Errorf("workload: pollIntervalMs %d out of range", w.PollIntervalMs)
	case len(w.Calls) > 1000:
		return fmt.Errorf("workload: %d calls (at most 1000)", len(w.Calls))
	}
	for i, c := range w.Calls {
		if err := c.validate26(); err != nil {
			return fmt.Errorf("workload: call %d: %w", i, err)
		}
	}
	return nil
}

func (c Call) validate26() error {
	switch {
	case c.Session != 0:
		return fmt.Errorf("session %d (a %s run has one connection)", c.Session, Revision20260728)
	case !slices.Contains([]string{server.ToolSlowText, server.ToolInstant, toolConfirm, toolMRTRTask}, c.Tool):
		return fmt.Errorf("tool %q (want %s, %s, %s or %s)", c.Tool, server.ToolSlowText, server.ToolInstant, toolConfirm, toolMRTRTask)
	case c.Mode != "":
		return fmt.Errorf("mode %q: a %s call has a delivery, not a mode", c.Mode, Revision20260728)
	case !slices.Contains(Deliveries(), c.Delivery):
		return fmt.Errorf("delivery %q (want poll or listen)", c.Delivery)
	case c.TTLMs != 0:
		return fmt.Errorf("ttlMs: a %s client asks for no ttl (the server sets it)", Revision20260728)
	case c.Chunks < 0 || c.Chunks > 1000 || c.IntervalMs < 0 || c.IntervalMs > 3_600_000:
		return fmt.Errorf("chunks %d, intervalMs %d out of range", c.Chunks, c.IntervalMs)
	case c.StartMs < 0 || c.StartMs > 3_600_000 || c.CancelAfterMs < 0 || c.FailAfter < -1:
		return errors.New("a negative or too large time")
	}
	return nil
}

// chunkSkewMs is added to slow_text's interval in a run of 2026-07-28,
// so that no chunk of a task (nor its end) falls on the instant of a
// poll or a cancel: polls come every pollIntervalMs after the task's
// creation, a cancel CancelAfterMs after the call's start, both whole
// milliseconds, and two timers of one instant fire in the order their
// goroutines set them, which is the scheduler's (docs/sim.md,
// "Determinism"). 123 ns: six chunks of it are no millisecond.
const chunkSkewMs = 0.000123

// args26 are the tool's arguments in a run of 2026-07-28.
func (c Call) args26() map[string]any {
	switch c.Tool {
	case toolConfirm:
		return map[string]any{"filename": simFile}
	case server.ToolSlowText:
		a := c.args()
		a["intervalMs"] = float64(c.IntervalMs) + chunkSkewMs
		return a
	}
	return c.args()
}

// options26 are the stateless client's options for the call.
func (c Call) options26() client.StatelessCallOptions {
	return client.StatelessCallOptions{
		Name: c.Tool, Args: c.args26(), Answer: answer26,
		CancelAfter: time.Duration(c.CancelAfterMs) * time.Millisecond,
		Listen:      c.Delivery == DeliveryListen,
		NoTasks:     c.NoTasks,
	}
}

// answer26 accepts every elicitation, filling each property the form
// asks for that it knows: confirm (true) and name.
func answer26(_ string, req rev.InputRequest) (json.RawMessage, error) {
	var p struct {
		RequestedSchema struct {
			Properties map[string]json.RawMessage `json:"properties"`
		} `json:"requestedSchema"`
	}
	if err := json.Unmarshal(req.Params, &p); err != nil {
		return nil, fmt.Errorf("input request %s: %w", req.Method, err)
	}
	content := map[string]any{}
	for k := range p.RequestedSchema.Properties {
		switch k {
		case "confirm":
			content[k] = true
		case "name":
			content[k] = simName
		}
	}
	return json.Marshal(map[string]any{"action": "accept", "content": content})
}

// wantText26 is the text of the tool's complete result in a run of
// 2026-07-28, block by block.
func (c Call) wantText26() []string {
	switch c.Tool {
	case toolConfirm:
		return []string{"Deleted " + simFile + " (pretend)."}
	case toolMRTRTask:
		return []string{"Hello, " + simName + "! (user_name gathered before the task)"}
	}
	return c.wantText()
}
