package suite

import (
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tasksim/tasksim/mcp"
	"github.com/tasksim/tasksim/mcp/client"
	"github.com/tasksim/tasksim/mcp/server"
)

// SEP-1905 scenarios (its test scenarios that apply to a server: modes,
// fallback, segments, resume, gap fill, ttl, cancel and failure during
// streaming, old client / new server).

func scenarioModes(e *Env) error {
	tc, err := e.needStream()
	if err != nil {
		return err
	}
	if e.probe.init.Capabilities.Tasks.ResponseModes() == nil {
		return e.Skip("the server does not declare SEP-1905 tasks.responses.modes")
	}
	s, err := e.Connect(nil)
	if err != nil {
		return err
	}
	want := map[client.Mode]string{client.ModeImmediate: client.AnswerImmediate, client.ModeStreaming: client.AnswerStreaming, client.ModeTask: client.AnswerTask}
	for _, m := range []client.Mode{client.ModeImmediate, client.ModeStreaming, client.ModeTask} {
		if err := e.needModes(mcp.ResponseMode(m)); err != nil {
			continue
		}
		args := tc.argsFor(2, 10, -1)
		if m == client.ModeImmediate {
			args = tc.argsFor(1, 0, -1)
		}
		res, err := s.CallTool(e.Ctx, client.CallOptions{Name: tc.name, Args: args, Mode: m})
		if err != nil {
			return fmt.Errorf("%s call: %w", m, err)
		}
		// An immediate answer is a MAY: the checker judges the mode
		// picked; here any answer that completes will do.
		e.Expect("S1905-MODE-SELECT", m == client.ModeImmediate || res.Answer == want[m] || res.Fallback, "asked responseModes [%s], answered %s without the fallback warning", m, res.Answer)
		e.Expect("S1905-MODE-SELECT", res.Complete, "%s call did not complete", m)
	}
	return nil
}

// scenarioModePriority offers several responseModes at once, in more than
// one order: the server picks by priority, immediate > streaming > task,
// among the modes both sides support (SEP-1905, Capability Negotiation;
// the order of the client's list does not matter). Where both declare
// streaming and the offer lacks immediate, streaming is the only right
// answer. With immediate offered too, any of the three may be: immediate
// is a MAY, and without a ready result the server falls back to streaming
// or task by what it "can determine" of the tool (Task Result
// Transmission, step 2); the checker judges what is definite of it.
func scenarioModePriority(e *Env) error {
	tc, s, err := e.setup(needs{modes: []mcp.ResponseMode{mcp.ModeStreaming, mcp.ModeTask}}, nil)
	if err != nil {
		return err
	}
	offers := [][]mcp.ResponseMode{
		{mcp.ModeStreaming, mcp.ModeTask},
		{mcp.ModeTask, mcp.ModeStreaming},
	}
	if slices.Contains(e.probe.init.Capabilities.Tasks.ResponseModes(), mcp.ModeImmediate) {
		offers = append(offers, []mcp.ResponseMode{mcp.ModeTask, mcp.ModeStreaming, mcp.ModeImmediate})
	}
	for _, modes := range offers {
		res, err := s.CallTool(e.Ctx, client.CallOptions{Name: tc.name, Args: tc.argsFor(3, 10, -1), ResponseModes: modes})
		if err != nil {
			return fmt.Errorf("call offering responseModes %v: %w", modes, err)
		}
		if !slices.Contains(modes, mcp.ModeImmediate) {
			e.Expect("S1905-MODE-SELECT", res.Answer == client.AnswerStreaming, "offered responseModes %v, both sides declaring streaming, the call was answered %s", modes, res.Answer)
		}
		e.Expect("S1905-MODE-SELECT", res.Complete, "the call offering responseModes %v did not complete", modes)
	}
	return nil
}

func scenarioFallback(e *Env) error {
	tc, s, err := e.setup(needs{modes: []mcp.ResponseMode{mcp.ModeImmediate}, slow: "a call too slow to answer at once"}, &client.Options{Modes: []mcp.ResponseMode{mcp.ModeImmediate}})
	if err != nil {
		return err
	}
	// Too slow for an immediate answer: the server falls back.
	res, err := s.CallTool(e.Ctx, client.CallOptions{Name: tc.name, Args: tc.argsFor(3, 100, -1), Mode: client.ModeImmediate})
	if err != nil {
		return fmt.Errorf("immediate call of a slow tool: %w", err)
	}
	e.Expect("S1905-MODE-SELECT", res.Complete, "a call that fell back did not complete")
	e.Expect("S1905-MODE-SELECT", res.Answer == client.AnswerImmediate || res.Answer == client.AnswerTask || res.Answer == client.AnswerStreaming,
		"a call with responseModes [immediate] answered %s", res.Answer)
	return fallbackWarning(e, tc)
}

// fallbackWarning offers only response modes the server does not declare:
// it MUST fall back to task mode and SHOULD say so (SEP-1905, Capability
// Negotiation), which the checker judges (S1905-FALLBACK-WARNING). A
// server that declares immediate and streaming leaves no such mode: the
// rule is then SKIP, its need unmet.
func fallbackWarning(e *Env, tc toolChoice) error {
	have := e.probe.init.Capabilities.Tasks.ResponseModes()
	var lacks []mcp.ResponseMode
	for _, m := range []mcp.ResponseMode{mcp.ModeImmediate, mcp.ModeStreaming} {
		if !slices.Contains(have, m) {
			lacks = append(lacks, m)
		}
	}
	if len(lacks) == 0 {
		return nil // S1905-FALLBACK-WARNING stays SKIP: nothing to offer
	}
	s, err := e.Connect(&client.Options{Modes: lacks[:1]})
	if err != nil {
		return err
	}
	mode := client.ModeImmediate
	if lacks[0] == mcp.ModeStreaming {
		mode = client.ModeStreaming
	}
	res, err := s.CallTool(e.Ctx, client.CallOptions{Name: tc.name, Args: tc.argsFor(1, 10, -1), Mode: mode})
	if err != nil {
		return fmt.Errorf("call offering only %s, which the server lacks: %w", lacks[0], err)
	}
	e.Expect("S1905-MODE-SELECT", res.Answer == client.AnswerTask, "a call offering only %s, which the server does not declare, answered %s, want task (the fallback)", lacks[0], res.Answer)
	return nil
}

func scenarioOldClient(e *Env) error {
	tc, s, err := e.setup(needs{task: true}, &client.Options{NoModes: true, NoPartial: true})
	if err != nil {
		return err
	}
	res, err := s.CallTool(e.Ctx, client.CallOptions{Name: tc.name, Args: tc.argsFor(2, 10, -1), Mode: client.ModeTask})
	if err != nil {
		return fmt.Errorf("task call of an old client: %w", err)
	}
	e.Expect("S1905-MODE-SELECT", res.Answer == client.AnswerTask, "a client without SEP-1905 got a %s answer, want a CreateTaskResult", res.Answer)
	e.Expect("S1905-MODE-SELECT", res.Complete, "the old client's call did not complete")
	return nil
}

// quickCall is a call whose result is ready before the server answers:
// on tasksim's server (tc is its slow_text) its instant tool, which
// returns its content without emitting it first; elsewhere tc with its
// own arguments. slow_text, even of one chunk, emits that chunk before it
// returns: a server asking "is the result complete at request time?" may
// see the chunk first and rightly fall back, and the verdict would
// depend on which goroutine ran first.
func (e *Env) quickCall(tc toolChoice) (string, any) {
	if tc.knownArgs {
		for _, t := range e.probe.tools {
			if t.Name == server.ToolInstant {
				return t.Name, map[string]any{}
			}
		}
		return tc.name, tc.argsFor(0, 0, -1) // no chunk: nothing emitted
	}
	return tc.name, tc.argsFor(1, 0, -1)
}

func scenarioImmediate(e *Env) error {
	tc, s, err := e.setup(needs{modes: []mcp.ResponseMode{mcp.ModeImmediate}}, &client.Options{Modes: []mcp.ResponseMode{mcp.ModeImmediate}})
	if err != nil {
		return err
	}
	name, args := e.quickCall(tc)
	res, err := s.CallTool(e.Ctx, client.CallOptions{Name: name, Args: args, Mode: client.ModeImmediate})
	if err != nil {
		return fmt.Errorf("immediate call: %w", err)
	}
	if res.Answer != client.AnswerImmediate {
		return e.Skip("the server answered %s, not immediately, for a quick call", res.Answer)
	}
	if res.TaskID != "" {
		r, err := s.TaskResult(e.Ctx, res.TaskID, 0)
		if err != nil {
			return fmt.Errorf("tasks/result of an immediate answer's task: %w", err)
		}
		e.Expect("S1905-IMMEDIATE", text(r.Content) == text(res.Content), "tasks/result %s differs from the immediate answer %s", text(r.Content), text(res.Content))
	}
	return nil
}

// streamCall makes a streaming call with chunks chunks and checks it
// completed with every segment.
func (e *Env) streamCall(s *client.Session, tc toolChoice, chunks int, o client.CallOptions) (*client.CallResult, error) {
	o.Name, o.Mode = tc.name, client.ModeStreaming
	if o.Args == nil {
		o.Args = tc.argsFor(chunks, 30, -1)
	}
	res, err := s.CallTool(e.Ctx, o)
	if err != nil {
		return res, fmt.Errorf("streaming call: %w", err)
	}
	if res.Answer != client.AnswerStreaming {
		return res, e.Skip("the server answered a streaming call %s", res.Answer)
	}
	return res, nil
}

func scenarioStreaming(e *Env) error {
	tc, s, err := e.setup(needs{modes: []mcp.ResponseMode{mcp.ModeStreaming}}, nil)
	if err != nil {
		return err
	}
	res, err := e.streamCall(s, tc, 5, client.CallOptions{})
	if err != nil {
		return err
	}
	e.Expect("S1905-COMPLETE", res.Complete && !res.IsError, "the stream did not complete (isError %v)", res.IsError)
	if tc.knownArgs {
		e.Expect("S1905-SEQNR", res.Segments == 5 && res.Gaps == 0, "5 chunks came as %d segments with %d gaps", res.Segments, res.Gaps)
	}
	// A segment the client discarded (an invalid seqNr) is S1905-SEQNR's
	// finding; the merge is compared only when every segment was valid.
	if res.TaskID != "" && res.Discarded == 0 {
		r, err := s.TaskResult(e.Ctx, res.TaskID, 0)
		if err != nil {
			return fmt.Errorf("tasks/result: %w", err)
		}
		e.Expect("S1905-MERGE", text(r.Content) == text(res.Content), "tasks/result %s differs from the merged segments %s", text(r.Content), text(res.Content))
	}
	return nil
}

func scenarioResume(e *Env) error {
	tc, s, err := e.setup(needs{modes: []mcp.ResponseMode{mcp.ModeStreaming}}, nil)
	if err != nil {
		return err
	}
	res, err := e.streamCall(s, tc, 4, client.CallOptions{})
	if err != nil {
		return err
	}
	if res.TaskID == "" || res.Segments < 2 {
		return e.Skip("the stream made %d segments and task %q: too few to resume in the middle", res.Segments, res.TaskID)
	}
	// The stream said isComplete: true, but the status may still be
	// moving: it "MUST transition to completed" after isComplete: true is
	// sent (SEP-1905, Case 3), not with it, and until then tasks/result
	// with lastSeqNr may rightly say isComplete: false. Asked at once,
	// the verdict would depend on which came first; wait for the terminal
	// status the spec guarantees.
	if _, err := e.awaitTerminal(s, res.TaskID, res.Task); err != nil {
		return err
	}
	last := int64(res.Segments)
	for _, after := range []int64{1, last, last + 3} {
		r, err := s.TaskResult(e.Ctx, res.TaskID, after)
		if err != nil {
			return fmt.Errorf("tasks/result lastSeqNr %d: %w", after, err)
		}
		wantN := max(0, last-after)
		e.Expect("S1905-RESUME", int64(len(r.PartialContent)) == wantN && r.IsComplete != nil && *r.IsComplete,
			"tasks/result lastSeqNr %d of a complete stream of %d: %d segments, isComplete %v; want %d and true", after, last, len(r.PartialContent), r.IsComplete != nil && *r.IsComplete, wantN)
		if len(r.PartialContent) > 0 {
			e.Expect("S1905-RESUME", r.PartialContent[0].SeqNr == after+1, "tasks/result lastSeqNr %d starts at seqNr %d", after, r.PartialContent[0].SeqNr)
		}
	}
	return nil
}

func scenarioGapFill(e *Env) error {
	// The fault layer loses the message carrying segment 2 and, drawn
	// from the seed, duplicates others: the client must fill the gap
	// with tasks/result and lastSeqNr, and the server answer it right.
	tc, s, err := e.setup(needs{modes: []mcp.ResponseMode{mcp.ModeStreaming}}, nil, "drop-sse-event:seqnr=2,count=1", "duplicate-seqnr:p=0.5")
	if err != nil {
		return err
	}
	res, err := e.streamCall(s, tc, 5, client.CallOptions{})
	if err != nil {
		return err
	}
	e.Expect("S1905-RESUME", res.Complete, "the stream with segment 2 lost did not complete")
	// A segment the client discarded (an invalid seqNr) is S1905-SEQNR's
	// finding; the merge is compared only when every segment was valid.
	if res.TaskID != "" && res.Discarded == 0 {
		r, err := s.TaskResult(e.Ctx, res.TaskID, 0)
		if err != nil {
			return fmt.Errorf("tasks/result: %w", err)
		}
		e.Expect("S1905-MERGE", text(r.Content) == text(res.Content), "the gap-filled result %s differs from tasks/result %s", text(res.Content), text(r.Content))
	}
	return nil
}

func scenarioTTLStreaming(e *Env) error {
	tc, s, err := e.setup(needs{modes: []mcp.ResponseMode{mcp.ModeStreaming}, slow: "a stream that outlives its ttl"}, nil)
	if err != nil {
		return err
	}
	res, err := s.CallTool(e.Ctx, client.CallOptions{Name: tc.name, Args: tc.argsFor(20, 100, -1), Mode: client.ModeStreaming, TTL: 300 * time.Millisecond})
	if res == nil {
		return fmt.Errorf("streaming call with ttl 300ms: %w", err)
	}
	if res.Task != nil && res.Task.TTL != nil && *res.Task.TTL > 1000 {
		return e.Skip("the server gave the task ttl %dms (asked 300ms)", *res.Task.TTL)
	}
	if res.TaskID == "" {
		return fmt.Errorf("the streaming call made no task")
	}
	if res.Task != nil && res.Task.Status == mcp.StatusCompleted {
		return e.Skip("the task completed before its ttl")
	}
	// The stream ends either with a final response (isComplete and a
	// terminal status, SEP-1905 "TTL Expiration During Streaming") or
	// with the task gone.
	e.Expect("S1905-COMPLETE", (res.Task != nil && res.Task.Status.IsTerminal()) || isNotFound(err),
		"a stream outliving its ttl ended without a terminal status or the task expired (%v)", err)
	// The server may end the stream a moment before it deletes the task.
	var m *mcp.Message
	for i := 0; i < 40; i++ {
		var rerr error
		if m, rerr = s.Request(e.Ctx, mcp.MethodTasksGet, mcp.GetTaskParams{TaskID: res.TaskID}); rerr != nil {
			return rerr
		}
		if m.Error != nil {
			break
		}
		if err := e.wait(50 * time.Millisecond); err != nil {
			return err
		}
	}
	e.expectInvalidParams("TASK-NOT-FOUND", m, "tasks/get of a task expired while streaming, 2s after")
	return nil
}

// cancelChunks is the length, in chunks 50 ms apart, of a task the suite
// cancels: 50 s, longer than a scenario lasts by default, so the task is
// working when the cancel comes however slow the machine is (a task of
// one second could end first on a loaded machine, and the scenario would
// blame the server for a cancel that came late). A server that ignores
// the cancel leaves the scenario to its timeout: FAIL all the same.
const cancelChunks = 1000

func scenarioCancelStreaming(e *Env) error {
	tc, s, err := e.setup(needs{modes: []mcp.ResponseMode{mcp.ModeStreaming}, slow: "a stream long enough to cancel"}, nil)
	if err != nil {
		return err
	}
	// Cancel once the task is known, not on a timer: a first answer that
	// comes late on a loaded machine must not decide the verdict. The
	// first event naming the task sends tasks/cancel (2025-11-25 Tasks,
	// "Cancelling Tasks") while the stream goes on; the server must then
	// end the stream with the task cancelled.
	var once sync.Once
	var started atomic.Bool
	cancelled := make(chan error, 1)
	onEvent := func(ev client.Event) {
		if ev.TaskID == "" {
			return
		}
		once.Do(func() {
			started.Store(true)
			go func() {
				_, err := s.Request(e.Ctx, mcp.MethodTasksCancel, mcp.CancelTaskParams{TaskID: ev.TaskID})
				cancelled <- err
			}()
		})
	}
	res, err := s.CallTool(e.Ctx, client.CallOptions{Name: tc.name, Args: tc.argsFor(cancelChunks, 50, -1), Mode: client.ModeStreaming, OnEvent: onEvent})
	if started.Load() {
		// The stream may end before the cancel's own answer arrives.
		if cerr := <-cancelled; cerr != nil {
			return fmt.Errorf("tasks/cancel of the streaming task: %w", cerr)
		}
	}
	if res == nil {
		return fmt.Errorf("streaming call: %w", err)
	}
	if res.Task == nil {
		return fmt.Errorf("the cancelled streaming call has no task (%v)", err)
	}
	e.Expect("TASK-STATUS-TRANSITION", res.Task.Status == mcp.StatusCancelled, "a stream cancelled while working ended %s", res.Task.Status)
	m, rerr := s.Request(e.Ctx, mcp.MethodTasksCancel, mcp.CancelTaskParams{TaskID: res.TaskID})
	if rerr != nil {
		return rerr
	}
	e.expectInvalidParams("TASK-CANCEL-TERMINAL", m, "a second tasks/cancel")
	return nil
}

func scenarioFailureStreaming(e *Env) error {
	tc, s, err := e.setup(needs{modes: []mcp.ResponseMode{mcp.ModeStreaming}, fail: "a tool that fails mid-stream"}, nil)
	if err != nil {
		return err
	}
	res, err := s.CallTool(e.Ctx, client.CallOptions{Name: tc.name, Args: tc.argsFor(5, 20, 2), Mode: client.ModeStreaming})
	if res == nil {
		return fmt.Errorf("streaming call: %w", err)
	}
	var me *mcp.Error
	if err != nil && !errors.As(err, &me) && !res.IsError {
		return fmt.Errorf("streaming call failing after 2 chunks: %w", err)
	}
	e.Expect("S1905-COMPLETE", res.IsError, "a tool failing mid-stream gave a result without isError")
	if res.TaskID != "" {
		// The status moves to failed after isComplete: true, not with it
		// (SEP-1905, Case 3): wait for it rather than read it at once.
		task, err := e.awaitTerminal(s, res.TaskID, res.Task)
		if err != nil {
			return err
		}
		e.Expect("S1905-COMPLETE", task.Status == mcp.StatusFailed, "a tool failing mid-stream left its task %s", task.Status)
	}
	return nil
}

// awaitTerminal returns task id's terminal state: known's when it is
// terminal already, else by polling tasks/get at the task's pollInterval
// (kept within 10 ms..1 s), bounded by the scenario's ctx and
// maxTerminalPolls.
func (e *Env) awaitTerminal(s *client.Session, id string, known *mcp.Task) (*mcp.Task, error) {
	if known != nil && known.Status.IsTerminal() {
		return known, nil
	}
	for range maxTerminalPolls {
		task, err := s.GetTask(e.Ctx, id)
		if err != nil {
			return nil, fmt.Errorf("tasks/get of task %s, waiting for its terminal status: %w", id, err)
		}
		if task.Status.IsTerminal() {
			return task, nil
		}
		wait := 100 * time.Millisecond
		if task.PollInterval != nil {
			wait = time.Duration(*task.PollInterval) * time.Millisecond
		}
		if err := e.wait(min(max(wait, 10*time.Millisecond), time.Second)); err != nil {
			return nil, fmt.Errorf("task %s not terminal: %w", id, err)
		}
	}
	return nil, fmt.Errorf("task %s not terminal after %d polls of tasks/get", id, maxTerminalPolls)
}

// maxTerminalPolls bounds awaitTerminal's polls; the scenario's timeout
// bounds their time.
const maxTerminalPolls = 600
