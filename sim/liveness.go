package sim

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/tasksim/tasksim/mcp"
	"github.com/tasksim/tasksim/mcp/client"
)

// The simulator's own rules, beside the checker's catalog: they judge
// what the calls ended with, not the trace.
const (
	// RuleLiveness: every call ends with its correct outcome, or with an
	// error a fault explains; once the faults stop, a call that did not end
	// as expected gets its task's outcome with tasks/result, and a new
	// session's call completes.
	RuleLiveness = "SIM-LIVENESS"
	// RuleResult: a result the client calls complete is the tool's result,
	// faults or not.
	RuleResult = "SIM-RESULT"
)

// Finding is one violation of a simulator rule.
type Finding struct {
	Rule    string `json:"rule"`
	Message string `json:"message"`
}

// classify says how a call ended.
func classify(c Call, res *client.CallResult, err error, deadline bool) (string, string) {
	detail, unfinished := classifyUnfinished(err, deadline, res == nil)
	switch {
	case unfinished != "":
		return unfinished, detail
	case res.Task != nil && res.Task.Status == mcp.StatusCancelled,
		err != nil && strings.Contains(err.Error(), "cancelled by the client"):
		return OutcomeCancelled, detail
	case errors.Is(err, client.ErrTaskExpired), expiredTask(res.Task):
		return OutcomeExpired, detail
	case res.Complete && res.IsError:
		return OutcomeFailed, detail
	case err == nil && res.Complete:
		if got := texts(res.Content); !slices.Equal(got, c.wantText()) {
			return OutcomeWrong, fmt.Sprintf("content %q, want %q", got, c.wantText())
		}
		return OutcomeOK, ""
	}
	if detail == "" {
		detail = "incomplete result without an error"
	}
	return OutcomeError, detail
}

// classifyUnfinished says how a call ended that hit its deadline
// (OutcomeHung) or has no result (OutcomeError), "" otherwise; detail
// is what it ended with.
func classifyUnfinished(err error, deadline, noResult bool) (detail, outcome string) {
	if err != nil {
		detail = err.Error()
	}
	switch {
	case deadline:
		return fmt.Sprintf("did not end within %v of simulated time (%v)", callSlack, err), OutcomeHung
	case noResult:
		return detail, OutcomeError
	}
	return detail, ""
}

// classifyRecovery says what tasks/result answered once the faults
// stopped.
func classifyRecovery(c Call, resp *mcp.ToolCallResponse, err error, deadline bool) (string, string) {
	switch {
	case deadline:
		return OutcomeHung, "tasks/result did not answer"
	case errors.Is(err, client.ErrTaskExpired):
		return OutcomeExpired, err.Error()
	case err != nil:
		return OutcomeError, err.Error()
	case resp.IsError:
		return OutcomeFailed, ""
	}
	if got := texts(resp.Content); !slices.Equal(got, c.wantText()) {
		return OutcomeWrong, fmt.Sprintf("content %q, want %q", got, c.wantText())
	}
	return OutcomeOK, ""
}

func expiredTask(t *mcp.Task) bool {
	return t != nil && t.Status == mcp.StatusFailed && strings.Contains(strings.ToLower(t.StatusMessage), "expired")
}

func texts(blocks []mcp.ContentBlock) []string {
	out := []string{}
	for _, b := range blocks {
		out = append(out, b.Text)
	}
	return out
}

// judgeCall holds a call's outcome to the rules.
//
// ttlFault says a ttl-expiry fault acted in the run (a ttl rewritten
// small, the clock jumped): a task may then expire before it completes.
//
// recovery is the request that recovered a call once the faults stopped:
// tasks/result (2025-11-25), tasks/get (2026-07-28).
func judgeCall(c Call, oc CallOutcome, ttlFault bool, recovery string) []Finding {
	how := string(c.Mode)
	if c.Delivery != "" {
		how = c.Delivery
	}
	name := fmt.Sprintf("call %d (%s %s", oc.Call, c.Tool, how)
	if oc.TaskID != "" {
		name += ", task " + oc.TaskID
	}
	name += ")"
	var out []Finding
	if oc.Got == OutcomeWrong && !oc.TailLost {
		out = append(out, Finding{RuleResult, name + ": complete result is wrong: " + oc.Detail})
	}
	if oc.Recovered == OutcomeWrong {
		out = append(out, Finding{RuleResult, name + ": " + recovery + " after the faults stopped is wrong"})
	}
	if oc.Got == oc.Expected || oc.Got == OutcomeWrong {
		return out
	}
	if !oc.Faulted {
		return append(out, Finding{RuleLiveness, fmt.Sprintf("%s ended %s, want %s, and no fault acted on it: %s", name, oc.Got, oc.Expected, oc.Detail)})
	}
	switch oc.Recovered {
	case OutcomeHung:
		out = append(out, Finding{RuleLiveness, name + ": once the faults stopped, " + recovery + " did not answer"})
	case OutcomeError, OutcomeExpired:
		if oc.Expected == OutcomeOK && c.TTLMs == 0 && !ttlFault {
			out = append(out, Finding{RuleLiveness, fmt.Sprintf("%s: once the faults stopped, %s of a task that should complete answered %s", name, recovery, oc.Recovered)})
		}
	}
	return out
}
