package streamhttp

import (
	"context"
	"encoding/json"
	"sync"

	"github.com/tasksim/tasksim/mcp"
)

// stubEndpoint is the fake mcp.Endpoint of the server tests. Its sessions
// answer these methods:
//
//	initialize  {"fail":bool,"stream":bool}  result, or a JSON-RPC error;
//	                                         "stream" sends a notification first
//	echo        any params                   one final response carrying the params
//	stream      {"n":N,"cancel":bool}        N notifications {"i":0..N-1}, then a final
//	                                         response {"n":N} (or a nil final if
//	                                         cancel); each step waits for one gate
//	                                         value; each Reply is reported on replied
//	closeconn   {"after":K}                  K notifications (no gate), CloseConnection,
//	                                         then after one gate value the final response
//	send        {"n":N,...}                  N Outbox notifications carrying the params,
//	                                         then a final response
//	cancel                                   a nil final reply at once (202)
//	anything else                            -32601
//
// Notifications and responses from the client go to received, the method
// names of requests to handled.
type stubEndpoint struct {
	sessions chan *stubSession // every session made, in order
}

func newStubEndpoint() *stubEndpoint {
	return &stubEndpoint{sessions: make(chan *stubSession, 1024)}
}

func (e *stubEndpoint) NewSession(out mcp.Outbox) mcp.Session {
	s := &stubSession{
		out:      out,
		gate:     make(chan struct{}, 1024),
		replied:  make(chan stubReply, 1024),
		received: make(chan *mcp.Message, 1024),
		handled:  make(chan string, 1024),
		closed:   make(chan struct{}),
	}
	select {
	case e.sessions <- s:
	default:
	}
	return s
}

type stubSession struct {
	out      mcp.Outbox
	gate     chan struct{}
	replied  chan stubReply
	received chan *mcp.Message
	handled  chan string // the method of every request, when Handle gets it
	once     sync.Once
	closed   chan struct{}
}

// stubReply is one Reply a gated request made, and what it returned.
type stubReply struct {
	i     int // index of the notification; -1 for the final reply
	final bool
	err   error
}

// release lets n gated steps go.
func (s *stubSession) release(n int) {
	for range n {
		s.gate <- struct{}{}
	}
}

func (s *stubSession) wait(ctx context.Context) bool {
	select {
	case <-s.gate:
		return true
	case <-ctx.Done():
		return false
	}
}

func (s *stubSession) Close() { s.once.Do(func() { close(s.closed) }) }

type stubParams struct {
	N      int  `json:"n"`
	Cancel bool `json:"cancel"`
	After  int  `json:"after"`
	Fail   bool `json:"fail"`
	Stream bool `json:"stream"`
}

func (s *stubSession) Handle(ctx context.Context, msg *mcp.Message, r mcp.Replier) {
	if r == nil {
		s.received <- msg
		return
	}
	s.handled <- msg.Method
	var p stubParams
	if len(msg.Params) > 0 && msg.Params[0] == '{' {
		_ = json.Unmarshal(msg.Params, &p)
	}
	switch msg.Method {
	case mcp.MethodInitialize:
		if p.Stream {
			note, _ := mcp.NewNotification(mcp.NotificationMessage, map[string]string{"level": "info"})
			_ = r.Reply(ctx, note, false)
		}
		if p.Fail {
			_ = r.Reply(ctx, mcp.NewError(msg.ID, mcp.Errorf(mcp.CodeInvalidParams, "refused")), true)
			return
		}
		res, _ := mcp.NewResult(msg.ID, map[string]string{"protocolVersion": mcp.LatestProtocolVersion})
		_ = r.Reply(ctx, res, true)
	case "echo":
		res := &mcp.Message{ID: msg.ID, Result: msg.Params}
		_ = r.Reply(ctx, res, true)
	case "stream":
		go func() {
			for i := range p.N {
				if !s.wait(ctx) {
					return
				}
				note, _ := mcp.NewNotification(mcp.NotificationProgress, map[string]int{"i": i})
				s.replied <- stubReply{i: i, err: r.Reply(ctx, note, false)}
			}
			if !s.wait(ctx) {
				return
			}
			var final *mcp.Message
			if !p.Cancel {
				final, _ = mcp.NewResult(msg.ID, map[string]int{"n": p.N})
			}
			s.replied <- stubReply{i: -1, final: true, err: r.Reply(ctx, final, true)}
		}()
	case "closeconn":
		for i := range p.After {
			note, _ := mcp.NewNotification(mcp.NotificationProgress, map[string]int{"i": i})
			_ = r.Reply(ctx, note, false)
		}
		r.(mcp.ConnectionCloser).CloseConnection()
		go func() {
			if !s.wait(ctx) {
				return
			}
			res, _ := mcp.NewResult(msg.ID, map[string]int{"n": p.After})
			s.replied <- stubReply{i: -1, final: true, err: r.Reply(ctx, res, true)}
		}()
	case "send":
		for range p.N {
			_ = s.out.Send(ctx, &mcp.Message{Method: mcp.NotificationMessage, Params: msg.Params})
		}
		res, _ := mcp.NewResult(msg.ID, map[string]int{"n": p.N})
		_ = r.Reply(ctx, res, true)
	case "cancel":
		_ = r.Reply(ctx, nil, true)
	default:
		_ = r.Reply(ctx, mcp.NewError(msg.ID, mcp.Errorf(mcp.CodeMethodNotFound, "no method %q", msg.Method)), true)
	}
}
