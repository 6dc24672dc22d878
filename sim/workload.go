package sim

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/tasksim/tasksim/mcp/client"
	"github.com/tasksim/tasksim/mcp/server"
)

// Transports a workload runs over.
const (
	TransportHTTP  = "http"
	TransportStdio = "stdio"
)

// Workload is what the clients of one run do: sessions over one transport,
// and tool calls on them, each starting at its own simulated instant.
type Workload struct {
	// Revision is the MCP revision the run speaks: "" (2025-11-25) or
	// 2026-07-28 (revision.go).
	Revision  string `json:"revision,omitempty"`
	Transport string `json:"transport"`
	// Server, in a run of 2026-07-28, is the revisions the server serves:
	// ServerBoth or ServerStateless.
	Server string `json:"server,omitempty"`
	// PollIntervalMs, in a run of 2026-07-28, is the pollIntervalMs the
	// server suggests in every task (0: its default).
	PollIntervalMs int64  `json:"pollIntervalMs,omitempty"`
	Sessions       int    `json:"sessions"`
	Calls          []Call `json:"calls"`
}

// Call is one tool call of a workload. Times are simulated milliseconds
// from the start of the run.
type Call struct {
	Session int         `json:"session"`
	StartMs int64       `json:"startMs"`
	Tool    string      `json:"tool"`
	Mode    client.Mode `json:"mode"`
	// Chunks and IntervalMs are slow_text's arguments.
	Chunks     int   `json:"chunks,omitempty"`
	IntervalMs int64 `json:"intervalMs,omitempty"`
	// FailAfter, when >= 0, makes slow_text fail after that many chunks;
	// -1 never.
	FailAfter int `json:"failAfter"`
	// TTLMs is the task ttl asked for (0: the server's default);
	// CancelAfterMs cancels the call that long after it started (0: never).
	TTLMs         int64 `json:"ttlMs,omitempty"`
	CancelAfterMs int64 `json:"cancelAfterMs,omitempty"`
	// Delivery, in a run of 2026-07-28, is how the client follows a task:
	// DeliveryPoll or DeliveryListen (Mode is then empty).
	Delivery string `json:"delivery,omitempty"`
	// NoTasks, in a run of 2026-07-28, leaves the tasks extension
	// undeclared: the server must answer without a task.
	NoTasks bool `json:"noTasks,omitempty"`
}

// chunkSize is the size of every slow_text chunk in a simulation.
const chunkSize = 16

// WorkloadOptions bound what Draw draws. Zero values are defaults.
type WorkloadOptions struct {
	// Modes are the call modes to draw from; nil means every mode.
	Modes []client.Mode
	// Tasks is the most calls in one run; 0 means 5.
	Tasks int
	// Transport forces a transport; "" draws one (http 3 in 4).
	Transport string
	// Revision is the revision of the runs; "" is 2025-11-25.
	Revision string
	// Deliveries, in a run of 2026-07-28, are the ways to follow a task
	// to draw from (DeliveryPoll, DeliveryListen); nil means both.
	Deliveries []string
}

// DrawWorkload draws a workload from r.
func DrawWorkload(r *rand.Rand, o *WorkloadOptions) Workload {
	var opts WorkloadOptions
	if o != nil {
		opts = *o
	}
	if opts.Tasks <= 0 {
		opts.Tasks = 5
	}
	if opts.Revision == Revision20260728 {
		return drawWorkload26(r, &opts)
	}
	if len(opts.Modes) == 0 {
		opts.Modes = client.Modes()
	}
	w := Workload{Transport: opts.Transport, Sessions: 1 + r.IntN(2)}
	if w.Transport == "" {
		w.Transport = TransportHTTP
		if r.IntN(4) == 0 {
			w.Transport = TransportStdio
		}
	}
	n := 1 + r.IntN(opts.Tasks)
	var at int64
	for i := range n {
		// Each call starts at an instant of its own, so that the server
		// creates tasks (and draws their ids) in call order.
		if i > 0 {
			at += 1 + r.Int64N(400)
		}
		c := Call{Session: r.IntN(w.Sessions), StartMs: at, Tool: server.ToolSlowText, Mode: opts.Modes[r.IntN(len(opts.Modes))], FailAfter: -1}
		if r.IntN(8) == 0 {
			c.Tool = server.ToolInstant
			w.Calls = append(w.Calls, c)
			continue
		}
		c.Chunks = r.IntN(7)
		c.IntervalMs = 10 * (1 + r.Int64N(40))
		d := c.durationMs()
		switch k := r.IntN(20); {
		case k < 2:
			c.FailAfter = r.IntN(c.Chunks + 1)
		case k < 4 && d >= 200 && c.Mode != client.ModePlain:
			c.TTLMs = d / 2 // expires mid-call
		case k < 6:
			c.TTLMs = d + 60_000 // outlives the call
		case k < 8 && d >= 200:
			c.CancelAfterMs = d / 2
		}
		w.Calls = append(w.Calls, c)
	}
	return w
}

// durationMs is how long the tool runs, fault-free.
func (c Call) durationMs() int64 {
	if c.Tool != server.ToolSlowText {
		return 0
	}
	return int64(c.Chunks) * c.IntervalMs
}

// args are the tool's arguments.
func (c Call) args() map[string]any {
	if c.Tool != server.ToolSlowText {
		return nil
	}
	a := map[string]any{"chunks": c.Chunks, "chunkSize": chunkSize, "intervalMs": c.IntervalMs}
	if c.FailAfter >= 0 {
		a["failAfter"] = c.FailAfter
	}
	return a
}

// options are the reference client's CallOptions for the call.
func (c Call) options() client.CallOptions {
	return client.CallOptions{
		Name: c.Tool, Args: c.args(), Mode: c.Mode,
		TTL:         time.Duration(c.TTLMs) * time.Millisecond,
		CancelAfter: time.Duration(c.CancelAfterMs) * time.Millisecond,
	}
}

// Outcomes of a call.
const (
	OutcomeOK        = "ok"        // the complete, correct result
	OutcomeFailed    = "failed"    // the tool failed: isError
	OutcomeExpired   = "expired"   // the task's ttl elapsed first
	OutcomeCancelled = "cancelled" // the client cancelled it
	OutcomeWrong     = "wrong"     // a complete result that is not the tool's
	OutcomeError     = "error"     // an error or an incomplete result
	OutcomeHung      = "hung"      // it did not end by its deadline
)

// expected is the outcome the call has without faults.
func (c Call) expected() string {
	switch {
	case c.FailAfter >= 0:
		return OutcomeFailed
	case c.TTLMs > 0 && c.TTLMs < c.durationMs():
		return OutcomeExpired
	case c.CancelAfterMs > 0 && c.CancelAfterMs < c.durationMs():
		return OutcomeCancelled
	}
	return OutcomeOK
}

// wantText is the text of the tool's complete result, block by block.
func (c Call) wantText() []string {
	if c.Tool == server.ToolInstant {
		return []string{"instant result"}
	}
	out := make([]string, c.Chunks)
	for i := range out {
		out[i] = server.ChunkText(i+1, chunkSize)
	}
	return out
}

// Validate reports the first thing that makes w unrunnable.
func (w Workload) Validate() error {
	if err := CheckRevision(w.Revision); err != nil {
		return fmt.Errorf("workload: %w", err)
	}
	if w.Transport != TransportHTTP && w.Transport != TransportStdio {
		return fmt.Errorf("workload: transport %q (want http or stdio)", w.Transport)
	}
	if w.stateless() {
		return w.validate26()
	}
	if w.Server != "" || w.PollIntervalMs != 0 {
		return fmt.Errorf("workload: server and pollIntervalMs are for a %s run", Revision20260728)
	}
	if w.Sessions < 1 || w.Sessions > 64 {
		return fmt.Errorf("workload: %d sessions (want 1 to 64)", w.Sessions)
	}
	if len(w.Calls) > 1000 {
		return fmt.Errorf("workload: %d calls (at most 1000)", len(w.Calls))
	}
	for i, c := range w.Calls {
		if err := c.validate(w.Sessions); err != nil {
			return fmt.Errorf("workload: call %d: %w", i, err)
		}
	}
	return nil
}

// validate reports the first thing that makes c unrunnable in a workload
// of sessions sessions.
func (c Call) validate(sessions int) error {
	switch {
	case c.Session < 0 || c.Session >= sessions:
		return fmt.Errorf("session %d of %d", c.Session, sessions)
	case c.Tool != server.ToolSlowText && c.Tool != server.ToolInstant:
		return fmt.Errorf("tool %q (want slow_text or instant)", c.Tool)
	case !slices.Contains(client.Modes(), c.Mode):
		return fmt.Errorf("mode %q", c.Mode)
	case c.Delivery != "" || c.NoTasks:
		return fmt.Errorf("delivery and noTasks are for a %s run", Revision20260728)
	case c.Chunks < 0 || c.Chunks > 1000 || c.IntervalMs < 0 || c.IntervalMs > 3_600_000:
		return fmt.Errorf("chunks %d, intervalMs %d out of range", c.Chunks, c.IntervalMs)
	case c.StartMs < 0 || c.StartMs > 3_600_000 || c.TTLMs < 0 || c.CancelAfterMs < 0 || c.FailAfter < -1:
		return errors.New("a negative or too large time")
	}
	return nil
}
