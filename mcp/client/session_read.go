package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/tasksim/tasksim/mcp"
)

// readLoop hands every message to whoever waits for it, until the
// connection fails or closes.
func (s *Session) readLoop() {
	defer close(s.done)
	for {
		msg, err := s.conn.Read(context.Background())
		if err != nil {
			var se *mcp.StreamError
			if errors.As(err, &se) {
				s.mu.Lock()
				w := s.waiters[se.ID]
				s.mu.Unlock()
				if w != nil {
					w.fail(se)
				}
				continue
			}
			s.fail(fmt.Errorf("connection lost: %w", err))
			return
		}
		switch msg.Kind() {
		case mcp.KindResponse:
			s.mu.Lock()
			w := s.waiters[msg.ID]
			s.mu.Unlock()
			if w != nil {
				w.push(msg)
			}
		case mcp.KindNotification:
			s.routeNotification(msg)
		case mcp.KindRequest:
			go s.answerServerRequest(msg)
		}
	}
}

// fail ends the session with err: every waiter and task inbox fails.
func (s *Session) fail(err error) {
	s.mu.Lock()
	if s.err == nil {
		s.err = err
	}
	err = s.err
	waiters, tasks := s.waiters, s.tasks
	s.waiters, s.tasks = map[mcp.ID]*inbox[*mcp.Message]{}, map[string]*inbox[taskNote]{}
	s.mu.Unlock()
	for _, w := range waiters {
		w.fail(err)
	}
	for _, t := range tasks {
		t.fail(err)
	}
}

// routeNotification passes task notifications to the call following the
// task, or keeps them until one does; progress goes to the request whose
// token it carries. A partial's params are decoded here, once, and handed
// to its call as they are. It only hands over: the call's goroutine
// decides what a notification does.
func (s *Session) routeNotification(msg *mcp.Message) {
	if f := s.opts.OnNotification; f != nil {
		f(msg)
	}
	switch msg.Method {
	case mcp.NotificationTaskStatus, mcp.NotificationTaskPartial:
		var note taskNote
		var taskID string
		if msg.Method == mcp.NotificationTaskPartial {
			p := new(mcp.TaskPartialParams)
			// Not json.Unmarshal: it would check the JSON once more
			// before calling the method, which checks it itself.
			if p.UnmarshalJSON(msg.Params) == nil {
				note.partial, taskID = p, p.TaskID
			}
		}
		if note.partial == nil {
			var p struct {
				TaskID string `json:"taskId"`
			}
			if json.Unmarshal(msg.Params, &p) != nil {
				return
			}
			taskID = p.TaskID
		}
		if taskID == "" {
			return
		}
		note.msg = msg
		s.mu.Lock()
		t := s.tasks[taskID]
		if t == nil {
			if !s.ended[taskID] {
				s.keepPending(taskID, note)
			}
			s.mu.Unlock()
			return
		}
		s.mu.Unlock()
		t.push(note)
	case mcp.NotificationProgress:
		var p struct {
			ProgressToken json.RawMessage `json:"progressToken"`
		}
		if json.Unmarshal(msg.Params, &p) != nil {
			return
		}
		var id mcp.ID
		if id.UnmarshalJSON(p.ProgressToken) != nil {
			return
		}
		s.mu.Lock()
		w := s.waiters[id]
		s.mu.Unlock()
		if w != nil {
			w.push(msg)
		}
	}
}

// keepPending buffers a notification for a task nobody follows yet, so
// that one arriving before the response creating the task is not lost.
// s.mu must be held.
func (s *Session) keepPending(taskID string, msg taskNote) {
	q, known := s.pending[taskID]
	if !known {
		if len(s.pendingOrder) >= s.opts.MaxPending {
			delete(s.pending, s.pendingOrder[0])
			s.pendingOrder = s.pendingOrder[1:]
		}
		s.pendingOrder = append(s.pendingOrder, taskID)
	}
	if len(q) < s.opts.MaxPending {
		s.pending[taskID] = append(q, msg)
	}
}

// followTask returns the inbox of a task's notifications, with those that
// arrived before anyone followed it.
func (s *Session) followTask(taskID string) *inbox[taskNote] {
	s.mu.Lock()
	defer s.mu.Unlock()
	if t := s.tasks[taskID]; t != nil {
		return t
	}
	delete(s.ended, taskID)
	t := newInbox[taskNote]()
	if s.err != nil {
		t.fail(s.err)
		return t
	}
	for _, m := range s.pending[taskID] {
		t.push(m)
	}
	delete(s.pending, taskID)
	for i, id := range s.pendingOrder {
		if id == taskID {
			s.pendingOrder = append(s.pendingOrder[:i], s.pendingOrder[i+1:]...)
			break
		}
	}
	s.tasks[taskID] = t
	return t
}

func (s *Session) unfollowTask(taskID string, t *inbox[taskNote]) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.tasks[taskID] != t {
		return
	}
	delete(s.tasks, taskID)
	if len(s.endedOrder) >= s.opts.MaxPending {
		delete(s.ended, s.endedOrder[0])
		s.endedOrder = s.endedOrder[1:]
	}
	s.ended[taskID] = true
	s.endedOrder = append(s.endedOrder, taskID)
}

// answerServerRequest answers a request from the server: ping with an
// empty result, anything else with -32601 (the client offers no sampling,
// elicitation or roots).
func (s *Session) answerServerRequest(msg *mcp.Message) {
	ctx, cancel := withTimeout(context.Background(), s.opts.Clock, serverRequestTimeout)
	defer cancel()
	var reply *mcp.Message
	if msg.Method == mcp.MethodPing {
		reply, _ = mcp.NewResult(msg.ID, struct{}{})
	} else {
		reply = mcp.NewError(msg.ID, mcp.Errorf(mcp.CodeMethodNotFound, "Method not found: %s", msg.Method))
	}
	_ = s.conn.Write(ctx, reply)
}

// observeHTTP puts the transport's HTTP requests on the timeline of the
// call whose request they carry.
func (s *Session) observeHTTP(info mcp.RequestInfo) {
	if info.RPCID.IsZero() {
		return
	}
	s.mu.Lock()
	rec := s.calls[info.RPCID]
	s.mu.Unlock()
	e := Event{Kind: EventHTTPRequest, Method: info.Method, RequestID: info.RPCID, HTTPStatus: info.Status,
		Bytes: info.BytesSent, LastEventID: info.LastEventID, Err: info.Err}
	if info.Resume {
		e.Detail = "resume " + info.RPCMethod
	} else {
		e.Detail = info.RPCMethod
	}
	rec.add(e)
}
