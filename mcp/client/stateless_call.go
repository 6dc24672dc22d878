package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/tasksim/tasksim/clock"
	"github.com/tasksim/tasksim/mcp"
	rev "github.com/tasksim/tasksim/mcp/rev20260728"
	"github.com/tasksim/tasksim/mcp/rev20260728/tasks"
)

// DefaultMaxInputRounds bounds the multi round-trip retries of one call
// and the tasks/update requests of its task when
// StatelessCallOptions.MaxInputRounds is 0.
const DefaultMaxInputRounds = 16

// Answerer answers one input request of a multi round-trip request or of
// a task: the result the server asked for (for elicitation/create an
// ElicitResult such as {"action":"accept","content":{...}} or
// {"action":"decline"}). key is the server's key for the request. An
// error ends the call.
type Answerer func(key string, req rev.InputRequest) (json.RawMessage, error)

// StatelessCallOptions describe one tools/call of the stateless era.
type StatelessCallOptions struct {
	Name string
	Args any
	// Answer answers the input requests; nil makes a call that is asked
	// for input fail with ErrNoAnswer.
	Answer Answerer
	// PollInterval replaces the task's pollIntervalMs; 0 honours it
	// (Tasks, "Task Polling": clients SHOULD), and Options.PollPolicy, when
	// set, has the last word.
	PollInterval time.Duration
	// CancelAfter cancels the call after this long on the client's clock:
	// its task with tasks/cancel, or a call without a task by closing its
	// request. Ending ctx cancels likewise.
	CancelAfter time.Duration
	// Listen follows a task by push: subscriptions/listen with the task's
	// id, its end taken from notifications/tasks (the DetailedTask, result
	// inlined), tasks/get only when the listen fails or ends before the
	// task's end (stateless_listen.go). Without it the task is polled.
	Listen bool
	// NoTasks leaves the tasks extension undeclared: the server must
	// answer without a task.
	NoTasks bool
	// MaxInputRounds bounds the retries with inputResponses and the
	// tasks/update requests; 0 means DefaultMaxInputRounds.
	MaxInputRounds int
	// OnEvent sees every timeline event as it is added.
	OnEvent func(Event)
}

// ErrNoAnswer matches the error of a call asked for input it has no
// answer for.
var ErrNoAnswer = errors.New("no answer for an input request")

// Reissue is one request re-issued with a new id after its stream broke.
type Reissue struct {
	Method   string
	Old, New mcp.ID
}

// StatelessResult is what a tools/call of the stateless era ended with.
type StatelessResult struct {
	// The CallToolResult, from the answer or inlined in the completed task.
	Content           []mcp.ContentBlock
	StructuredContent json.RawMessage
	IsError           bool
	// Complete says the result arrived. A failed task's JSON-RPC error is
	// the call's error; a cancelled task has no result.
	Complete bool
	// Answer is how the server answered the last tools/call: "complete"
	// or "task" (the resultType).
	Answer rev.ResultType
	// TaskID and Task are the task and its last state seen, payload
	// dropped; nil without a task.
	TaskID string
	Task   *tasks.Task
	// InputRounds counts the retries with inputResponses, Updates the
	// tasks/update requests, Polls the tasks/get requests, Listens the
	// subscriptions/listen requests and Notifications the
	// notifications/tasks they brought; Requests counts every request the
	// call sent (over Streamable HTTP, one POST each).
	InputRounds, Updates, Polls, Listens, Notifications, Requests int
	// ListenFallback says why a call with Listen polled: the listen
	// failed, was refused or ended before the task's end. Empty otherwise.
	ListenFallback string
	// ResultAt is when the complete result was in hand (zero without
	// one). CompletedAt is when the server completed the task: the
	// result's mcp.MetaCompletedAt (the reference server's, in
	// nanoseconds), else the task's lastUpdatedAt; CompletedAtSource says
	// which (CompletedAtMeta, CompletedAtLastUpdated), "" when unknown.
	ResultAt, CompletedAt time.Time
	CompletedAtSource     string
	// Reissues lists the requests re-issued after a broken stream; a
	// tools/call among them may have run twice.
	Reissues []Reissue
	// Cancelled says the client cancelled the call (CancelAfter or ctx).
	Cancelled  bool
	Start, End time.Time
	Timeline   []Event
}

// statelessPhase is where a stateless call stands. It moves only forward:
// calling ⇄ (input rounds) ─▶ task ─▶ done, or calling ─▶ done.
type statelessPhase int

const (
	slCalling statelessPhase = iota // tools/call, retried with inputResponses
	slTask                          // following the task with tasks/get
	slDone
)

// statelessCall is one call's state; the goroutine running CallTool owns
// it.
type statelessCall struct {
	s      *Stateless
	o      StatelessCallOptions
	rec    *recorder
	res    *StatelessResult
	phase  statelessPhase
	rounds int
	// answered are the task's input keys already answered: a tasks/get
	// may show them again until the update is taken (eventually
	// consistent).
	answered map[string]bool
	// relisted says the tools were listed after a -32020 (relist).
	relisted bool
}

// CallTool calls a tool in the stateless era and follows the answer to
// its end (2026-07-28 Multi Round-Trip Requests; Tasks): a complete
// result ends the call; input_required is answered with Answer and the
// request retried with a new id, the answers and requestState; a task
// (resultType "task") is polled with tasks/get at its pollIntervalMs,
// read again from every answer, until a terminal status, its inputRequests
// answered with tasks/update; its inlined result or error is the call's.
// The task's ttl, counted on the client's clock from its creation, is the
// backstop: past it the call ends with a *TaskError (Expired). An
// unknown resultType ends the call with ErrInvalidResult. It returns a
// result whenever the call was sent, also with an error.
func (s *Stateless) CallTool(ctx context.Context, o StatelessCallOptions) (*StatelessResult, error) {
	if o.MaxInputRounds <= 0 {
		o.MaxInputRounds = DefaultMaxInputRounds
	}
	c := &statelessCall{s: s, o: o, res: &StatelessResult{Start: s.opts.Clock.Now()}, answered: map[string]bool{}}
	c.rec = &recorder{now: s.opts.Clock.Now, onEvent: o.OnEvent}
	callCtx, stopCall := context.WithCancel(ctx)
	defer stopCall()
	cancelled := make(chan struct{})
	if o.CancelAfter > 0 {
		t := s.opts.Clock.AfterFunc(o.CancelAfter, func() { close(cancelled) })
		defer t.Stop()
	}
	err := c.run(callCtx, ctx, cancelled)
	c.res.End = s.opts.Clock.Now()
	c.res.Timeline, _, _ = c.rec.timeline()
	for _, e := range c.res.Timeline {
		if e.Kind == EventRequestSent {
			c.res.Requests++
		}
	}
	return c.res, err
}

// request sends one request of the call, noting its re-issues.
func (c *statelessCall) request(ctx context.Context, method string, params any) (*mcp.Message, error) {
	return c.s.request(ctx, c.rec, method, params, func(r Reissue) { c.res.Reissues = append(c.res.Reissues, r) })
}

// run moves the call through its phases.
func (c *statelessCall) run(ctx, outer context.Context, cancelled <-chan struct{}) error {
	params := rev.CallToolParams{Meta: c.s.meta(c.o.NoTasks), Name: c.o.Name}
	if c.o.Args != nil {
		raw, err := json.Marshal(c.o.Args)
		if err != nil {
			return fmt.Errorf("tools/call: arguments: %w", err)
		}
		params.Arguments = raw
	}
	var created *tasks.CreateTaskResult
	for c.phase == slCalling {
		reqCtx, stop := context.WithCancel(ctx)
		go func() {
			select {
			case <-cancelled:
				stop() // no task yet: closing the request cancels it
			case <-reqCtx.Done():
			}
		}()
		m, err := c.request(reqCtx, mcp.MethodToolsCall, params)
		stop()
		if err != nil {
			if isClosed(cancelled) || outer.Err() != nil {
				c.res.Cancelled = true
				c.rec.add(Event{Kind: EventCancel, Method: mcp.MethodToolsCall, Detail: "closed the request before its answer"})
				return fmt.Errorf("%w: %v", ErrCancelled, err)
			}
			return err
		}
		if c.relist(ctx, m) {
			continue
		}
		if created, err = c.answered1(m, &params); err != nil {
			return err
		}
	}
	if c.phase == slTask {
		return c.follow(ctx, outer, cancelled, created)
	}
	return nil
}

// relist answers a first -32020 to the tools/call: the server checks
// Mcp-Param headers the transport sets only for tools it saw listed, so
// the client lists the tools and sends the call again, once (2026-07-28
// Streamable HTTP, "Client Behavior": on HeaderMismatch the client SHOULD
// call tools/list, then retry). The server refused the call before it
// ran, so the retry runs nothing twice. It reports whether to retry.
func (c *statelessCall) relist(ctx context.Context, m *mcp.Message) bool {
	if m.Error == nil || m.Error.Code != rev.CodeHeaderMismatch || c.relisted {
		return false
	}
	c.relisted = true
	if _, err := c.s.ListTools(ctx); err != nil {
		return false
	}
	return true
}

func isClosed(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

// answered1 reads the answer to a tools/call: it ends the call, starts
// another input round (params updated) or hands over to the task.
func (c *statelessCall) answered1(m *mcp.Message, params *rev.CallToolParams) (*tasks.CreateTaskResult, error) {
	if m.Error != nil {
		c.phase = slDone
		return nil, fmt.Errorf("%s: %w", mcp.MethodToolsCall, m.Error)
	}
	var ext []rev.ResultType
	if !c.o.NoTasks {
		ext = append(ext, tasks.ResultTypeTask)
	}
	rt, err := rev.ResultTypeOf(m.Result, ext...)
	if err != nil {
		c.phase = slDone
		return nil, fmt.Errorf("%s: %w: %v", mcp.MethodToolsCall, ErrInvalidResult, err)
	}
	c.res.Answer = rt
	switch rt {
	case rev.ResultComplete:
		c.phase = slDone
		return nil, c.complete(m.Result)
	case rev.ResultInputRequired:
		var ir rev.InputRequiredResult
		if err := json.Unmarshal(m.Result, &ir); err != nil {
			return nil, fmt.Errorf("%s: %w: %v", mcp.MethodToolsCall, ErrInvalidResult, err)
		}
		if err := ir.Validate(); err != nil {
			return nil, fmt.Errorf("%s: %w: %v", mcp.MethodToolsCall, ErrInvalidResult, err)
		}
		if c.rounds >= c.o.MaxInputRounds {
			return nil, fmt.Errorf("%s: still input_required after %d rounds", mcp.MethodToolsCall, c.rounds)
		}
		answers, err := c.answer(ir.InputRequests, SourceInputRequired)
		if err != nil {
			return nil, err
		}
		c.rounds++
		c.res.InputRounds++
		// The retry is a new request (new id), the state echoed unchanged
		// (2026-07-28 Multi Round-Trip Requests, "Client Requirements").
		params.InputResponseParams = ir.Retry(answers)
		return nil, nil
	}
	var ct tasks.CreateTaskResult
	if err := json.Unmarshal(m.Result, &ct); err != nil {
		return nil, fmt.Errorf("%s: %w: %v", mcp.MethodToolsCall, ErrInvalidResult, err)
	}
	if err := ct.Validate(); err != nil {
		return nil, fmt.Errorf("%s: %w: %v", mcp.MethodToolsCall, ErrInvalidResult, err)
	}
	c.phase = slTask
	c.setTask(ct.Task, SourceResponse)
	c.rec.add(Event{Kind: EventTaskCreated, TaskID: ct.TaskID, Status: ct.Status})
	return &ct, nil
}

// SourceInputRequired and SourceTasksUpdate say how input was answered.
const (
	SourceInputRequired = "input_required"
	SourceTasksUpdate   = "tasks/update"
)

// answer answers every request of reqs, in key order.
func (c *statelessCall) answer(reqs rev.InputRequests, source string) (rev.InputResponses, error) {
	out := rev.InputResponses{}
	var said []string
	for _, key := range slices.Sorted(maps.Keys(reqs)) {
		if c.o.Answer == nil {
			return nil, fmt.Errorf("%w: %s (%s)", ErrNoAnswer, key, reqs[key].Method)
		}
		a, err := c.o.Answer(key, reqs[key])
		if err != nil {
			return nil, fmt.Errorf("input %s: %w", key, err)
		}
		out[key] = a
		var act struct {
			Action string `json:"action"`
		}
		_ = json.Unmarshal(a, &act)
		said = append(said, key+"="+act.Action)
	}
	c.rec.add(Event{Kind: EventInput, Source: source, Detail: strings.Join(said, " ")})
	return out, nil
}

// complete takes a CallToolResult as the call's result.
func (c *statelessCall) complete(raw json.RawMessage) error {
	var r mcp.CallToolResult
	if err := json.Unmarshal(raw, &r); err != nil {
		return fmt.Errorf("%w: the tool result: %v", ErrInvalidResult, err)
	}
	c.res.Content, c.res.StructuredContent, c.res.IsError, c.res.Complete = r.Content, r.StructuredContent, r.IsError, true
	c.res.ResultAt = c.s.opts.Clock.Now()
	c.noteCompletedAt(r.Meta)
	c.rec.add(Event{Kind: EventResult, TaskID: c.res.TaskID, Bytes: contentBytes(r.Content...)})
	return nil
}

func (c *statelessCall) setTask(t tasks.Task, source string) {
	c.res.TaskID = t.TaskID
	tc := t
	c.res.Task = &tc
	c.rec.add(Event{Kind: EventStatus, TaskID: t.TaskID, Status: t.Status, Source: source})
}

// noteCompletedAt takes the server's completion time from the result's
// _meta, else from the terminal task's lastUpdatedAt.
func (c *statelessCall) noteCompletedAt(m mcp.Meta) {
	if v, ok := m[mcp.MetaCompletedAt].(string); ok {
		if t, err := time.Parse(time.RFC3339Nano, v); err == nil {
			c.res.CompletedAt, c.res.CompletedAtSource = t, CompletedAtMeta
			return
		}
	}
	if c.res.Task != nil && c.res.Task.Status.IsTerminal() {
		if t, err := mcp.ParseTime(c.res.Task.LastUpdatedAt); err == nil {
			c.res.CompletedAt, c.res.CompletedAtSource = t, CompletedAtLastUpdated
		}
	}
}

// follow follows the task until a terminal status: by push when Listen
// asks, and by polling (Tasks, "Task Polling") otherwise or when the push
// falls through.
func (c *statelessCall) follow(ctx, outer context.Context, cancelled <-chan struct{}, ct *tasks.CreateTaskResult) error {
	clk := c.s.opts.Clock
	var deadline time.Time
	if ct.TTLMs != nil {
		// Counted from the creation as the client saw it: the server's
		// createdAt is on the server's clock.
		deadline = c.res.Start.Add(time.Duration(*ct.TTLMs) * time.Millisecond)
		if created := clk.Now(); created.After(c.res.Start) {
			deadline = created.Add(time.Duration(*ct.TTLMs) * time.Millisecond)
		}
	}
	pollNow := false
	if c.o.Listen {
		done, now, err := c.listen(ctx, cancelled, ct.TaskID, deadline)
		if done {
			return err
		}
		pollNow = now
	}
	return c.poll(ctx, outer, cancelled, ct, deadline, pollNow)
}

// poll polls the task until a terminal status, the first tasks/get at
// once when pollNow.
func (c *statelessCall) poll(ctx, outer context.Context, cancelled <-chan struct{}, ct *tasks.CreateTaskResult, deadline time.Time, pollNow bool) error {
	clk := c.s.opts.Clock
	task := *c.res.Task
	cancelSent := false
	for polls := 0; ; polls++ {
		wait := c.interval(&task)
		if polls == 0 && pollNow {
			wait = 0
		}
		if !deadline.IsZero() && clk.Now().Add(wait).After(deadline) {
			wait = max(deadline.Sub(clk.Now()), 0)
		}
		var cancelNow bool
		if !cancelSent {
			cancelNow = c.sleep(ctx, wait, cancelled)
		} else if err := clock.Sleep(ctx, clk, wait); err != nil {
			cancelNow = true
		}
		if cancelNow && !cancelSent {
			cancelSent = true
			c.cancelTask(task.TaskID)
			if outer.Err() != nil {
				// The caller gave up (SIGINT): one last look, bounded, for
				// the status the cancel settled on.
				return c.lastLook(task.TaskID)
			}
			continue
		}
		if cancelNow {
			return c.lastLook(task.TaskID)
		}
		if !deadline.IsZero() && !clk.Now().Before(deadline) {
			c.phase = slDone
			return &TaskError{TaskID: task.TaskID, Method: tasks.MethodGet, Expired: true,
				Err: mcp.Errorf(mcp.CodeInvalidParams, "the task's ttl of %dms elapsed on the client's clock before a terminal status", *ct.TTLMs)}
		}
		d, err := c.get(ctx, task.TaskID)
		if err != nil {
			return err
		}
		task = d.Task
		if done, err := c.settle(ctx, d); done || err != nil {
			return err
		}
	}
}

// interval is the wait before the next tasks/get: the option, else the
// task's pollIntervalMs as last seen, else the client's default; then the
// policy.
func (c *statelessCall) interval(t *tasks.Task) time.Duration {
	d := c.o.PollInterval
	if d <= 0 {
		d = t.PollInterval(c.s.opts.DefaultPollInterval)
	}
	if c.s.opts.PollPolicy != nil {
		d = c.s.opts.PollPolicy(d)
	}
	return d
}

// sleep waits d on the client's clock; it reports true when the call is
// to be cancelled first (CancelAfter, or ctx ended).
func (c *statelessCall) sleep(ctx context.Context, d time.Duration, cancelled <-chan struct{}) bool {
	t := clock.NewTimer(c.s.opts.Clock, d)
	defer t.Stop()
	select {
	case <-t.C():
		return false
	case <-cancelled:
		return true
	case <-ctx.Done():
		return true
	}
}

// get polls the task once.
func (c *statelessCall) get(ctx context.Context, id string) (*tasks.GetTaskResult, error) {
	c.res.Polls++
	m, err := c.request(ctx, tasks.MethodGet, tasks.GetTaskParams{Meta: c.s.meta(false), TaskID: id})
	if err != nil {
		return nil, err
	}
	if m.Error != nil {
		if te := taskError(tasks.MethodGet, id, m.Error, false); te != nil {
			return nil, te
		}
		return nil, fmt.Errorf("%s: %w", tasks.MethodGet, m.Error)
	}
	rt, err := rev.ResultTypeOf(m.Result)
	if err != nil {
		return nil, fmt.Errorf("%s: %w: %v", tasks.MethodGet, ErrInvalidResult, err)
	}
	var d tasks.GetTaskResult
	if err := json.Unmarshal(m.Result, &d); err != nil {
		return nil, fmt.Errorf("%s: %w: %v", tasks.MethodGet, ErrInvalidResult, err)
	}
	if err := d.Validate(); err != nil || rt != rev.ResultComplete {
		return nil, fmt.Errorf("%s: %w: %v", tasks.MethodGet, ErrInvalidResult, errors.Join(err, errors.New("resultType "+string(rt))))
	}
	c.setTask(d.Task, SourceTasksGet)
	return &d, nil
}

// settle acts on a task's state: a terminal status ends the call,
// input_required is answered with tasks/update.
func (c *statelessCall) settle(ctx context.Context, d *tasks.GetTaskResult) (done bool, err error) {
	switch d.Status {
	case tasks.Completed:
		c.phase = slDone
		return true, c.complete(d.Result)
	case tasks.Failed:
		c.phase = slDone
		return true, fmt.Errorf("task %s failed: %w", d.TaskID, d.Error)
	case tasks.Cancelled:
		c.phase = slDone
		return true, nil
	case tasks.InputRequired:
		open := rev.InputRequests{}
		for k, r := range d.InputRequests {
			if !c.answered[k] {
				open[k] = r
			}
		}
		if len(open) == 0 {
			return false, nil
		}
		if c.res.Updates >= c.o.MaxInputRounds {
			return true, fmt.Errorf("task %s: still input_required after %d tasks/update", d.TaskID, c.res.Updates)
		}
		answers, err := c.answer(open, SourceTasksUpdate)
		if err != nil {
			return true, err
		}
		for k := range answers {
			c.answered[k] = true
		}
		c.res.Updates++
		m, err := c.request(ctx, tasks.MethodUpdate, tasks.UpdateTaskParams{Meta: c.s.meta(false), TaskID: d.TaskID, InputResponses: answers})
		if err != nil {
			return true, err
		}
		if m.Error != nil {
			return true, fmt.Errorf("%s: %w", tasks.MethodUpdate, m.Error)
		}
	}
	return false, nil
}

// cancelTask sends tasks/cancel, bounded on the client's clock whatever
// the call's ctx (Tasks, "Task Cancellation": the ack says nothing of the
// status; polling shows it).
func (c *statelessCall) cancelTask(id string) {
	c.res.Cancelled = true
	c.rec.add(Event{Kind: EventCancel, TaskID: id, Method: tasks.MethodCancel})
	ctx, stop := withTimeout(context.Background(), c.s.opts.Clock, cancelNoticeTimeout)
	defer stop()
	m, err := c.request(ctx, tasks.MethodCancel, tasks.CancelTaskParams{Meta: c.s.meta(false), TaskID: id})
	if err == nil && m.Error != nil {
		err = m.Error
	}
	if err != nil {
		c.rec.add(Event{Kind: EventError, TaskID: id, Method: tasks.MethodCancel, Err: err})
	}
}

// lastLook polls the task once more after the caller gave up, bounded on
// the client's clock, for the status the cancel settled on.
func (c *statelessCall) lastLook(id string) error {
	ctx, stop := withTimeout(context.Background(), c.s.opts.Clock, cancelNoticeTimeout)
	defer stop()
	c.phase = slDone
	d, err := c.get(ctx, id)
	if err != nil {
		return err
	}
	if d.Status == tasks.Completed {
		return c.complete(d.Result)
	}
	return nil
}
