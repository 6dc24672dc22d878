package sim

import (
	"context"
	"fmt"
	"time"

	"github.com/tasksim/tasksim/mcp"
	"github.com/tasksim/tasksim/mcp/client"
)

// unknownTaskID is the task id the probes ask about that no server gave
// out.
const unknownTaskID = "tasksim-probe-no-such-task"

// lastSeqNrZeroID is the request id of the probe's tasks/result with
// lastSeqNr 0.
const lastSeqNrZeroID = "tasksim-probe-lastseqnr-0"

// probeStream is the SEP-1905 streamed call the probes resume: three
// segments, so that tasks/result with lastSeqNr 1 has two to return.
var probeStream = Call{Tool: "slow_text", Mode: client.ModeStreaming, Chunks: 3, IntervalMs: 100, FailAfter: -1}

// probes asks, once the faults stopped, what the drawn workload never
// asks, so that the trace's rules judge the answers (docs/sim.md,
// "Probes"). Session a (the probe session, whose task-mode call gave
// taskID) asks about a task id no server gave out (TASK-NOT-FOUND), then
// streams a SEP-1905 call and resumes it with tasks/result and lastSeqNr
// 1 (S1905-RESUME). Then session b connects over bt without declaring
// tasks.streaming.partial, asks about a's task (TASK-ISOLATION) and makes
// a task-mode call (S2679-NEGOTIATION: no partial may reach it). A probe
// call that hangs, and a task-mode call that does not end as expected,
// are findings here; the rest the trace's checker judges. The probes run
// after every drawn call and fault, one step at a time, and draw nothing,
// so a seed's workload and schedule stay what they were.
func (r *run) probes(a, b *simSession, bt mcp.Transport, taskID string) []Finding {
	var live []Finding
	if a.err == nil {
		r.step(func(ctx context.Context) { _, _ = a.s.GetTask(ctx, unknownTaskID) })
		var streamTask string
		r.step(func(ctx context.Context) {
			res, err := a.s.CallTool(ctx, probeStream.options())
			// Only a hang is a finding: what the call delivered, the
			// trace's SEP-1905 rules judge (a planted bug that numbers
			// segments wrong fails S1905-SEQNR, not this probe).
			if got, detail := classify(probeStream, res, err, ctx.Err() != nil && r.ctx.Err() == nil); got == OutcomeHung {
				live = append(live, Finding{Rule: RuleLiveness, Message: fmt.Sprintf("after the faults stopped, a probe's SEP-1905 streamed call ended %s: %s", got, detail)})
			}
			if res != nil {
				streamTask = res.TaskID
			}
		})
		if streamTask != "" {
			r.step(func(ctx context.Context) { _, _ = a.s.TaskResult(ctx, streamTask, 1) })
			// lastSeqNr 0, which no correct client sends: the server must
			// answer -32602 (SEP-1905, Case 3 › Resuming Streaming:
			// lastSeqNr is a positive integer; S1905-LASTSEQNR-INVALID).
			// Written on the session's Conn, past the client's own
			// requests: its answer, of an id the client never gave out,
			// the client drops; the trace holds it.
			r.step(func(ctx context.Context) {
				msg, err := mcp.NewRequest(mcp.StringID(lastSeqNrZeroID), mcp.MethodTasksResult, map[string]any{"taskId": streamTask, "lastSeqNr": 0})
				if err == nil && a.s.Conn().Write(ctx, msg) == nil {
					r.sleepUntil(r.sim.Now().Add(time.Second))
				}
			})
		}
	}
	r.connectNow(b, bt)
	if b.err != nil {
		return append(live, Finding{Rule: RuleLiveness, Message: "after the faults stopped, a probe session without partials did not connect: " + b.err.Error()})
	}
	if taskID != "" {
		r.step(func(ctx context.Context) { _, _ = b.s.GetTask(ctx, taskID) })
	}
	unasked := Call{Tool: "slow_text", Mode: client.ModeTask, Chunks: 2, IntervalMs: 100, FailAfter: -1}
	r.step(func(ctx context.Context) {
		res, err := b.s.CallTool(ctx, unasked.options())
		if got, detail := classify(unasked, res, err, ctx.Err() != nil && r.ctx.Err() == nil); got != OutcomeOK {
			live = append(live, Finding{Rule: RuleLiveness, Message: fmt.Sprintf("after the faults stopped, a task-mode call of a session without partials ended %s: %s", got, detail)})
		}
	})
	return live
}

// step runs f with a context that ends after recoverBudget of simulated
// time.
func (r *run) step(f func(ctx context.Context)) {
	ctx, cancel := r.within(recoverBudget)
	defer cancel()
	f(ctx)
}
