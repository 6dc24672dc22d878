package sim

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/tasksim/tasksim/clock"
	"github.com/tasksim/tasksim/mcp"
	"github.com/tasksim/tasksim/mcp/client"
	"github.com/tasksim/tasksim/mcp/rev20260728/tasks"
	"github.com/tasksim/tasksim/mcp/server"
)

// The phases of a run of 2026-07-28 (Run picks them by the workload's
// revision). The connection is the stateless client's
// (client.ConnectStateless) through the same recorders and Conn place as
// a run of 2025-11-25, over the in-memory Streamable HTTP transport
// behind the HTTP place, or over stdio:
//
//	workload        the calls, on one connection, each from its own instant
//	recoverCalls26  the faults stop; a call that did not end as expected
//	                and has a task is asked with tasks/get until a terminal
//	                status (the task is durable: 2026-07-28 Tasks, "Task
//	                Creation"), one at a time
//	probeCall       a fresh connection's task call must complete
//
// There is no session to lose and nothing to resume: a request whose
// stream broke is re-issued by the client with a new id (2026-07-28
// changelog item 9).

// OutcomeInputRequired is how a recovery of 2026-07-28 ends that found
// its task waiting for input (CallOutcome.Recovered).
const OutcomeInputRequired = "input_required"

// connectStateless opens ss's stateless connection and makes it ready.
// It sends nothing: there is no handshake.
func (r *run) connectStateless(ss *simSession, t mcp.Transport) {
	defer close(ss.ready)
	cctx, cancel := r.within(callSlack)
	defer cancel()
	ss.sl, ss.err = client.New(&client.Options{Clock: r.sim}).ConnectStateless(cctx, t)
}

// classify26 says how a call of 2026-07-28 ended. A task that failed
// with its ttl's JSON-RPC error (the reference server's "Task has
// expired"), or whose ttl passed on the client's clock, expired.
func classify26(c Call, res *client.StatelessResult, err error, deadline bool) (string, string) {
	detail, unfinished := classifyUnfinished(err, deadline, res == nil)
	switch {
	case unfinished != "":
		return unfinished, detail
	case res.Cancelled && (errors.Is(err, client.ErrCancelled) || res.Task != nil && res.Task.Status == tasks.Cancelled):
		return OutcomeCancelled, detail
	case errors.Is(err, client.ErrTaskExpired), err != nil && strings.Contains(strings.ToLower(detail), "expired"):
		return OutcomeExpired, detail
	case err == nil && res.Complete && res.IsError:
		return OutcomeFailed, detail
	case err == nil && res.Complete:
		if got, want := texts(res.Content), c.wantText26(); !slices.Equal(got, want) {
			return OutcomeWrong, fmt.Sprintf("content %q, want %q", got, want)
		}
		return OutcomeOK, ""
	}
	if detail == "" {
		detail = "incomplete result without an error"
	}
	return OutcomeError, detail
}

// recoverCalls26 stops the faults; each call that did not end as
// expected and has a task is asked with tasks/get, one at a time, until
// its task is terminal. The questions go on a fresh connection: a task
// of 2026-07-28 belongs to no session nor connection, and the one the
// call used may be cut or stalled.
func (m *simulation) recoverCalls26() error {
	m.stopFaults()
	var recoveries []func(*client.Stateless)
	for i := range m.out {
		oc := &m.out[i]
		c := m.s.Workload.Calls[i]
		oc.Faulted = faulted26(m.ds, oc.end)
		if oc.Got == oc.Expected || oc.Got == OutcomeWrong || oc.TaskID == "" {
			continue
		}
		recoveries = append(recoveries, func(sl *client.Stateless) {
			rctx, cancel := m.within(recoverBudget)
			defer cancel()
			oc.Recovered, _ = m.recoverTask(rctx, sl, c, oc.TaskID)
		})
	}
	if len(recoveries) == 0 {
		return nil
	}
	t := m.transport(len(m.sessions))
	ss := m.session(false)
	m.spawn(func() {
		m.connectStateless(ss, t)
		for _, f := range recoveries {
			if ss.err != nil {
				return
			}
			f(ss.sl)
		}
	})
	return m.wait()
}

// faulted26 reports whether a fault acted before a call that ended at
// end: a run of 2026-07-28 has one connection, which every fault acts on.
func faulted26(ds []decision, end time.Time) bool {
	return slices.ContainsFunc(ds, func(d decision) bool { return !d.at.After(end) })
}

// recoverTask polls a task with tasks/get at the pollIntervalMs it
// suggests until a terminal status, and says how it ended, as
// classify26 does for a call.
func (m *simulation) recoverTask(ctx context.Context, sl *client.Stateless, c Call, id string) (string, string) {
	for range 1000 {
		d, err := sl.GetTask(ctx, id)
		switch {
		case ctx.Err() != nil && m.ctx.Err() == nil:
			return OutcomeHung, "tasks/get did not answer"
		case errors.Is(err, client.ErrTaskExpired):
			return OutcomeExpired, err.Error()
		case err != nil:
			return OutcomeError, err.Error()
		}
		switch d.Status {
		case tasks.Completed:
			var res mcp.CallToolResult
			if err := json.Unmarshal(d.Result, &res); err != nil {
				return OutcomeError, "the inlined result: " + err.Error()
			}
			if res.IsError {
				return OutcomeFailed, ""
			}
			if got, want := texts(res.Content), c.wantText26(); !slices.Equal(got, want) {
				return OutcomeWrong, fmt.Sprintf("content %q, want %q", got, want)
			}
			return OutcomeOK, ""
		case tasks.Failed:
			why := d.StatusMessage
			if d.Error != nil {
				why += " " + d.Error.Error()
			}
			if strings.Contains(strings.ToLower(why), "expired") {
				return OutcomeExpired, why
			}
			return OutcomeError, why
		case tasks.Cancelled:
			return OutcomeCancelled, ""
		case tasks.InputRequired:
			// The server answers, and the task waits for the input its
			// call was to give (the call's answers or cancel were lost):
			// alive, and nothing more to learn without answering.
			return OutcomeInputRequired, d.StatusMessage
		}
		if clock.Sleep(ctx, m.sim, d.PollInterval(server.DefaultPollInterval)) != nil {
			return OutcomeHung, "the task did not end"
		}
	}
	return OutcomeHung, "the task did not end within 1000 polls"
}

// probeOnce26 is the probe call of a run of 2026-07-28: a slow_text of
// two chunks, its task polled.
func (m *simulation) probeOnce26(ctx context.Context, probe *simSession) (got, detail, taskID string) {
	c := Call{Tool: server.ToolSlowText, Delivery: DeliveryPoll, Chunks: 2, IntervalMs: 100, FailAfter: -1}
	res, err := probe.sl.CallTool(ctx, c.options26())
	got, detail = classify26(c, res, err, ctx.Err() != nil && m.ctx.Err() == nil)
	if res != nil {
		taskID = res.TaskID
	}
	return got, detail, taskID
}
