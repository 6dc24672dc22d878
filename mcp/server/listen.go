package server

import (
	"context"
	"slices"
	"sync"

	"github.com/tasksim/tasksim/mcp"
	rev "github.com/tasksim/tasksim/mcp/rev20260728"
	"github.com/tasksim/tasksim/mcp/rev20260728/tasks"
)

// subscriptions/listen in the stateless era (2026-07-28 Subscriptions),
// with the taskIds filter of the tasks extension (Tasks, "Task Status
// Notifications"). The listen request is answered with a stream that stays
// open: the acknowledgement first, then notifications/tasks carrying the
// full DetailedTask of an agreed task each time it changes, then, when the
// server ends the subscription, the listen's own result.
//
//	subscriptions/listen {taskIds} ─▶ taskIds without the extension ─▶ -32021
//	                                ─▶ too many ids / too many listens ─▶ -32602 / -32603
//	                                ─▶ ack {taskIds: the known ones}
//	                                   current state of each agreed task, then one per change
//	every agreed task ended (terminal, or deleted) ─▶ result {resultType: complete}  (graceful)
//	Server.EndListens or Close ───────────────────▶ result {resultType: complete}  (graceful)
//	client closes the stream / notifications/cancelled ─▶ nothing more is sent
//
// The server supports none of the core's notification kinds (its tools
// never change; it has no prompts or resources), so the acknowledgement
// leaves them out: "Notification types the server does not support are
// omitted" (Subscriptions, "Acknowledgment").

// listeners are the open subscriptions of the server, bounded by
// Options.MaxSubscriptions.
type listeners struct {
	mu      sync.Mutex
	all     map[*subscription]struct{}
	closed  bool
	drained chan struct{} // closed once closed is set and all is empty
}

func newListeners() *listeners {
	return &listeners{all: map[*subscription]struct{}{}, drained: make(chan struct{})}
}

// add registers sub, unless max are open or the server is closing: then
// the listen is refused, not queued.
func (l *listeners) add(sub *subscription, max int) *mcp.Error {
	l.mu.Lock()
	defer l.mu.Unlock()
	switch {
	case l.closed:
		return mcp.Errorf(mcp.CodeInternalError, "server shutting down")
	case len(l.all) >= max:
		return mcp.Errorf(mcp.CodeInternalError, "server busy: %d subscriptions are open, its limit; close one or retry later", max)
	}
	l.all[sub] = struct{}{}
	return nil
}

func (l *listeners) remove(sub *subscription) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if _, ok := l.all[sub]; !ok {
		return
	}
	delete(l.all, sub)
	if l.closed && len(l.all) == 0 {
		close(l.drained)
	}
}

func (l *listeners) count() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.all)
}

// close ends every subscription gracefully: the server SHOULD answer each
// listen with its result before closing the stream (Subscriptions,
// "Graceful Closure").
func (l *listeners) close() {
	l.mu.Lock()
	if !l.closed && len(l.all) == 0 {
		close(l.drained)
	}
	l.closed = true
	all := make([]*subscription, 0, len(l.all))
	for sub := range l.all {
		all = append(all, sub)
	}
	l.mu.Unlock()
	for _, sub := range all {
		sub.shutdown()
	}
}

// EndListens ends every open subscriptions/listen gracefully: each is
// answered with the listen's result, which the server SHOULD send before
// it closes the stream (Subscriptions, "Graceful Closure"), and a listen
// that arrives afterwards gets -32603 "server shutting down". It returns
// once every open listen has handed its result to its transport's
// Replier, or when ctx ends (ctx's error). A transport that closes after
// EndListens can thus deliver those results rather than cut the streams;
// Close ends the rest of the server.
func (s *Server) EndListens(ctx context.Context) error {
	s.subs.close()
	select {
	case <-s.subs.drained:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// subscription is one open listen. Its goroutine (run) is the only writer
// to r. Every change waits in a queue of at most room entries (the agreed
// tasks plus queueSlack); when it is full, a new state replaces the oldest
// queued state of the same task. A reader that keeps up sees every change;
// a slower one skips states, and the memory a subscription holds never
// grows with the reader's delay (no rule asks for every transition; there
// is no replay in this revision).
type subscription struct {
	srv  *Server
	id   mcp.ID
	r    mcp.Replier
	wake chan struct{} // capacity 1

	mu      sync.Mutex
	tasks   map[string]*statelessTask // agreed tasks not yet ended
	queue   []push                    // oldest first; nil once ended
	room    int                       // queue's bound
	ended   bool
	closing bool // the server is closing
}

// queueSlack is how many changes beyond one per agreed task a subscription
// queues before it coalesces.
const queueSlack = 64

// push is what waits to be sent about one task: a state, or that the task
// was deleted (detail nil).
type push struct {
	id     string
	detail *tasks.DetailedTask
}

// enqueueLocked queues p; when the queue is full it drops the oldest
// queued entry of the same task first (there is one: the queue holds more
// entries than there are tasks). sub.mu must be held.
func (sub *subscription) enqueueLocked(p push) {
	if len(sub.queue) >= sub.room {
		for i, q := range sub.queue {
			if q.id == p.id {
				sub.queue = append(sub.queue[:i], sub.queue[i+1:]...)
				break
			}
		}
	}
	sub.queue = append(sub.queue, p)
}

func (sub *subscription) signal() {
	select {
	case sub.wake <- struct{}{}:
	default:
	}
}

// offer queues d, the task's state at a change, replacing what was queued
// for the task and not sent yet. The task's mu is held: offer never waits.
func (sub *subscription) offer(d tasks.DetailedTask) {
	sub.mu.Lock()
	if sub.ended {
		sub.mu.Unlock()
		return
	}
	sub.enqueueLocked(push{id: d.TaskID, detail: &d})
	sub.mu.Unlock()
	sub.signal()
}

// deleted records that the task id was deleted: nothing more will come of
// it.
func (sub *subscription) deleted(id string) {
	sub.mu.Lock()
	if sub.ended {
		sub.mu.Unlock()
		return
	}
	sub.enqueueLocked(push{id: id})
	sub.mu.Unlock()
	sub.signal()
}

func (sub *subscription) shutdown() {
	sub.mu.Lock()
	sub.closing = true
	sub.mu.Unlock()
	sub.signal()
}

// take returns what waits to be sent, in the order the tasks changed.
func (sub *subscription) take() (pushes []push, closing bool) {
	sub.mu.Lock()
	defer sub.mu.Unlock()
	pushes = sub.queue
	sub.queue = nil
	return pushes, sub.closing
}

// listenStateless answers subscriptions/listen.
func (s *Server) listenStateless(ctx context.Context, msg *mcp.Message, meta rev.RequestMeta, r mcp.Replier) {
	var p rev.ListenParams
	if err := mcp.DecodeParams(msg.Params, &p); err != nil {
		replyError(ctx, r, msg.ID, err)
		return
	}
	ids, err := tasks.TaskIDs(p.Notifications)
	if err != nil {
		replyError(ctx, r, msg.ID, mcp.Errorf(mcp.CodeInvalidParams, "invalid params: %v", err))
		return
	}
	// A listen that names taskIds asks for task status notifications: the
	// request itself must declare the extension (Tasks, "Task Status
	// Notifications": the server MUST answer -32021). An empty list names
	// the member too.
	if _, asks := p.Notifications.Extra["taskIds"]; asks && !tasks.Declared(meta.ClientCapabilities) {
		replyError(ctx, r, msg.ID, tasks.MissingCapability())
		return
	}
	slices.Sort(ids)
	ids = slices.Compact(ids)
	if max := s.opts.MaxListenTaskIDs; len(ids) > max {
		replyError(ctx, r, msg.ID, mcp.Errorf(mcp.CodeInvalidParams,
			"invalid params: notifications.taskIds names %d tasks, more than the %d one subscription may watch; open several", len(ids), max))
		return
	}
	sub := &subscription{srv: s, id: msg.ID, r: r, wake: make(chan struct{}, 1),
		tasks: map[string]*statelessTask{}, room: len(ids) + queueSlack}
	if err := s.subs.add(sub, s.opts.MaxSubscriptions); err != nil {
		replyError(ctx, r, msg.ID, err)
		return
	}
	// The server agrees to the tasks it holds; an unknown or expired id is
	// left out of the acknowledgement, which "reflects the subset the
	// server agreed to honor" (Subscriptions, "Acknowledgment"; Tasks,
	// "Task Status Notifications"). Each agreed task's current state is
	// queued at once, so the client needs no tasks/get to learn of a
	// change it could not have heard before the stream was open.
	agreed := []string{}
	for _, id := range ids {
		t, err := s.board.lookup(id)
		if err != nil || !t.subscribe(sub) {
			continue
		}
		agreed = append(agreed, id)
	}
	go sub.run(ctx, agreed)
}

// run sends the acknowledgement, then what the tasks offer, until the
// subscription ends. It is the only goroutine that replies on sub.r.
func (sub *subscription) run(ctx context.Context, agreed []string) {
	defer sub.end()
	ack := &rev.AcknowledgedParams{
		Meta:          &rev.NotificationMeta{SubscriptionID: sub.id},
		Notifications: rev.SubscriptionFilter{},
	}
	if len(agreed) > 0 {
		ack.Notifications = tasks.WithTaskIDs(ack.Notifications, agreed)
	}
	// The acknowledgement MUST be the first message of the subscription
	// (Subscriptions, "Acknowledgment"); nothing else replies on sub.r
	// before it.
	if !sub.send(ctx, rev.NotificationSubscriptionsAcknowledged, ack) {
		return
	}
	for {
		if ctx.Err() != nil {
			// The client closed the stream or cancelled the listen: the
			// server MUST NOT send further messages for it (2026-07-28
			// Streamable HTTP, "Cancellation"; Cancellation).
			_ = sub.r.Reply(ctx, nil, true)
			return
		}
		pushes, closing := sub.take()
		for _, p := range pushes {
			if p.detail != nil {
				params := &tasks.StatusParams{Meta: &rev.NotificationMeta{SubscriptionID: sub.id}, DetailedTask: *p.detail}
				if !sub.send(ctx, tasks.NotificationStatus, params) {
					return
				}
			}
			if p.detail == nil || p.detail.Status.IsTerminal() {
				sub.forget(p.id)
			}
		}
		if closing || sub.watching() == 0 {
			// Nothing left to deliver, or the server is closing: end the
			// subscription gracefully (Subscriptions, "Graceful Closure").
			reply(ctx, sub.r, sub.id, &rev.ListenResult{ResultType: rev.ResultComplete,
				Meta: rev.ResultMeta{ServerInfo: sub.srv.resultMeta().ServerInfo, SubscriptionID: sub.id}})
			return
		}
		select {
		case <-sub.wake:
		case <-ctx.Done():
		}
	}
}

// send writes one notification of the subscription; false means the
// stream is gone and the subscription ends without a response.
func (sub *subscription) send(ctx context.Context, method string, params any) bool {
	if ctx.Err() != nil {
		_ = sub.r.Reply(ctx, nil, true)
		return false
	}
	m, err := mcp.NewNotification(method, params)
	if err == nil {
		err = sub.r.Reply(ctx, m, false)
	}
	if err != nil {
		_ = sub.r.Reply(ctx, nil, true)
		return false
	}
	return true
}

// forget stops watching task id.
func (sub *subscription) forget(id string) {
	sub.mu.Lock()
	t := sub.tasks[id]
	delete(sub.tasks, id)
	sub.mu.Unlock()
	if t != nil {
		t.unsubscribe(sub)
	}
}

// watching counts the agreed tasks not yet ended.
func (sub *subscription) watching() int {
	sub.mu.Lock()
	defer sub.mu.Unlock()
	return len(sub.tasks)
}

// end leaves every task and the server's list: a subscription holds
// nothing once its listen is answered or cut.
func (sub *subscription) end() {
	sub.mu.Lock()
	ts := make([]*statelessTask, 0, len(sub.tasks))
	for _, t := range sub.tasks {
		ts = append(ts, t)
	}
	sub.tasks, sub.queue, sub.ended = nil, nil, true
	sub.mu.Unlock()
	for _, t := range ts {
		t.unsubscribe(sub)
	}
	sub.srv.subs.remove(sub)
}

// subscribe adds sub to the task's subscribers and queues the task's
// current state for it; it reports false when the task was deleted
// already.
func (t *statelessTask) subscribe(sub *subscription) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.gone {
		return false
	}
	if t.subs == nil {
		t.subs = map[*subscription]struct{}{}
	}
	t.subs[sub] = struct{}{}
	sub.mu.Lock()
	sub.tasks[t.id] = t
	sub.mu.Unlock()
	sub.offer(t.detailLocked())
	return true
}

func (t *statelessTask) unsubscribe(sub *subscription) {
	t.mu.Lock()
	delete(t.subs, sub)
	t.mu.Unlock()
}

// publishLocked offers the task's state to its subscribers: each
// notifications/tasks carries the DetailedTask tasks/get would have
// returned at that moment (Tasks, "Task Status Notifications"). t.mu must
// be held.
func (t *statelessTask) publishLocked() {
	if len(t.subs) == 0 {
		return
	}
	d := t.detailLocked()
	for sub := range t.subs {
		sub.offer(d)
	}
}

// unpublishLocked tells the subscribers that the task was deleted and
// forgets them. t.mu must be held.
func (t *statelessTask) unpublishLocked() {
	for sub := range t.subs {
		sub.deleted(t.id)
	}
	t.subs = nil
}
