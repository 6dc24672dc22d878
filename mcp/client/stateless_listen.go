package client

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/tasksim/tasksim/clock"
	"github.com/tasksim/tasksim/mcp"
	rev "github.com/tasksim/tasksim/mcp/rev20260728"
	"github.com/tasksim/tasksim/mcp/rev20260728/tasks"
)

// The push path of the stateless era: a call with
// StatelessCallOptions.Listen follows its task through
// subscriptions/listen with the tasks extension's taskIds filter (Tasks,
// "Task Status Notifications") instead of polling tasks/get.
//
//	listen {taskIds:[id]} ─▶ ack without the id ───────────────▶ tasks/get at once, then polling
//	                       ─▶ notifications/tasks (DetailedTask) ─┬─ terminal ─▶ the call's end (result inlined)
//	                                                             └─ input_required ─▶ tasks/update, listen on
//	                       ─▶ the listen ends or breaks first ───▶ tasks/get at once, then polling
//	cancel, ctx ended or ttl reached ─▶ the listen is closed; the poll loop cancels or expires the task
//
// The server queues each agreed task's current state at once
// (Subscriptions, "Acknowledgment"), so a task that ended between its
// creation and the listen is still heard of.

// SourceListen says a task state came in a notifications/tasks of a
// subscriptions/listen stream.
const SourceListen = "subscriptions/listen"

// listenGrace bounds the wait, after the terminal state, for the server
// to end the listen gracefully (it does once every agreed task ended,
// Subscriptions, "Graceful Closure"): a stream closed by its server
// leaves its connection reusable, one closed by the client does not.
const listenGrace = time.Second

// listenBox is what the reader hands one listen: the acknowledgement and
// the latest task state. States coalesce: the call acts on the latest
// only, as a poll would, so the reader never waits for the call.
type listenBox struct {
	mu     sync.Mutex
	acked  bool
	agreed []string
	latest *tasks.DetailedTask
	count  int   // notifications/tasks received
	bad    error // the first notification the client could not read
	wake   chan struct{}
}

func (b *listenBox) signal() {
	select {
	case b.wake <- struct{}{}:
	default:
	}
}

func (s *Stateless) openBox(id mcp.ID) *listenBox {
	b := &listenBox{wake: make(chan struct{}, 1)}
	s.mu.Lock()
	s.boxes[id] = b
	s.mu.Unlock()
	return b
}

func (s *Stateless) closeBox(id mcp.ID) {
	s.mu.Lock()
	delete(s.boxes, id)
	s.mu.Unlock()
}

// route hands a listen's acknowledgement or notifications/tasks to the
// box of the listen its subscription id names; others are not routed.
func (s *Stateless) route(m *mcp.Message) {
	if m.Method != tasks.NotificationStatus && m.Method != rev.NotificationSubscriptionsAcknowledged {
		return
	}
	var head struct {
		Meta *rev.NotificationMeta `json:"_meta"`
	}
	if json.Unmarshal(m.Params, &head) != nil || head.Meta == nil || head.Meta.SubscriptionID.IsZero() {
		return
	}
	s.mu.Lock()
	b := s.boxes[head.Meta.SubscriptionID]
	s.mu.Unlock()
	if b == nil {
		return
	}
	b.mu.Lock()
	defer b.signal()
	defer b.mu.Unlock()
	if m.Method == rev.NotificationSubscriptionsAcknowledged {
		var ack rev.AcknowledgedParams
		err := json.Unmarshal(m.Params, &ack)
		if err == nil {
			b.agreed, err = tasks.TaskIDs(ack.Notifications)
		}
		if err != nil && b.bad == nil {
			b.bad = fmt.Errorf("%s: %v", rev.NotificationSubscriptionsAcknowledged, err)
		}
		b.acked = true
		return
	}
	var p tasks.StatusParams
	err := json.Unmarshal(m.Params, &p)
	if err == nil {
		err = p.DetailedTask.Validate()
	}
	if err != nil {
		if b.bad == nil {
			b.bad = fmt.Errorf("%s: %v", tasks.NotificationStatus, err)
		}
		return
	}
	b.count++
	if b.latest == nil || !b.latest.Status.IsTerminal() {
		d := p.DetailedTask
		b.latest = &d
	}
}

// take returns what arrived since the last take: the latest state (nil
// if none), and why the call must poll instead (empty if it need not).
func (b *listenBox) take(taskID string) (d *tasks.DetailedTask, count int, fallback string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	d, b.latest = b.latest, nil
	count, b.count = b.count, 0
	switch {
	case b.bad != nil:
		fallback = b.bad.Error()
	case b.acked && !slices.Contains(b.agreed, taskID):
		fallback = "the server did not agree to notify about the task"
	}
	return d, count, fallback
}

// listen follows the task by push until a terminal state (done true, err
// the call's), or until the call must poll (done false): pollNow when the
// listen ended, broke or was refused before the task's end, so that a
// tasks/get learns what the listen did not tell; not when the call is
// cancelled, ctx ended or the ttl was reached (the poll loop acts on
// those).
func (c *statelessCall) listen(ctx context.Context, cancelled <-chan struct{}, taskID string, deadline time.Time) (done, pollNow bool, err error) {
	s, clk := c.s, c.s.opts.Clock
	id := mcp.IntID(s.nextID.Add(1))
	box := s.openBox(id)
	defer s.closeBox(id)
	params := rev.ListenParams{Meta: s.meta(false), Notifications: tasks.WithTaskIDs(rev.SubscriptionFilter{}, []string{taskID})}
	lctx, stop := context.WithCancel(ctx)
	finished := make(chan struct{})
	var answer statelessAnswer
	var lerr error
	go func() {
		defer close(finished)
		answer, lerr = s.roundTrip(lctx, c.rec, id, rev.MethodSubscriptionsListen, params)
	}()
	defer func() {
		stop()
		<-finished
	}()
	c.res.Listens++
	var expiry <-chan time.Time
	if !deadline.IsZero() {
		t := clock.NewTimer(clk, max(deadline.Sub(clk.Now()), 0))
		defer t.Stop()
		expiry = t.C()
	}
	for {
		var over bool
		select {
		case <-box.wake:
		case <-finished:
			over = true // what the stream carried before its end is in the box
		case <-cancelled:
			return false, false, nil
		case <-ctx.Done():
			return false, false, nil
		case <-expiry:
			return false, false, nil
		}
		d, n, fallback := box.take(taskID)
		c.res.Notifications += n
		if d != nil {
			c.setTask(d.Task, SourceListen)
			if done, err := c.settle(ctx, &tasks.GetTaskResult{DetailedTask: *d}); done {
				if !over {
					c.awaitEnd(finished)
				}
				return true, false, err
			}
		}
		graceful := false
		if fallback == "" && over {
			fallback, graceful = listenEnded(answer, lerr)
		}
		if fallback != "" {
			c.res.ListenFallback = fallback
			if !graceful {
				c.rec.add(Event{Kind: EventError, TaskID: taskID, Method: rev.MethodSubscriptionsListen,
					Err: fmt.Errorf("polling tasks/get instead: %s", fallback)})
			}
			return false, true, nil
		}
	}
}

// awaitEnd waits, at most listenGrace on the client's clock, for the
// server to end the listen after the task's end.
func (c *statelessCall) awaitEnd(finished <-chan struct{}) {
	t := clock.NewTimer(c.s.opts.Clock, listenGrace)
	defer t.Stop()
	select {
	case <-finished:
	case <-t.C():
	}
}

// listenEnded says how a listen ended before the task's end, and whether
// the server ended it gracefully: with the listen's result, which a
// server sends when it ends a subscription, at its shutdown for one
// (Subscriptions, "Graceful Closure"). That is no failure: the call polls
// on, as for a listen cut or refused, but records no error. A result of
// an unknown resultType is invalid (2026-07-28 Overview, "ResultType").
func listenEnded(a statelessAnswer, err error) (why string, graceful bool) {
	switch {
	case err != nil:
		return err.Error(), false
	case a.lost != nil:
		return fmt.Sprintf("%s: %v", rev.MethodSubscriptionsListen, a.lost), false
	case a.msg == nil:
		return fmt.Sprintf("%s: the stream ended without an answer", rev.MethodSubscriptionsListen), false
	case a.msg.Error != nil:
		return fmt.Sprintf("%s: %v", rev.MethodSubscriptionsListen, a.msg.Error), false
	}
	if _, err := rev.ResultTypeOf(a.msg.Result); err != nil {
		return fmt.Sprintf("%s: invalid result: %v", rev.MethodSubscriptionsListen, err), false
	}
	return "the server ended the listen before the task's end", true
}
