package server

import (
	"context"
	"encoding/json"
	"sync"
	"time"

	"github.com/tasksim/tasksim/internal/ratelimit"
	"github.com/tasksim/tasksim/mcp"
	rev "github.com/tasksim/tasksim/mcp/rev20260728"
)

// Server is the reference server. It implements mcp.Endpoint: hand it to a
// transport (mcp/stdio, mcp/streamhttp) to serve it.
type Server struct {
	opts   Options
	tools  map[string]*Tool
	order  []*Tool
	store  *store
	board  *board // the stateless era's tasks
	ids    ids
	budget *budget
	states *stateSealer // the requestState of multi round-trip requests
	subs   *listeners   // the stateless era's subscriptions/listen streams
	// params are the x-mcp-header arguments of the stateless era's tools,
	// by tool name (ParamHeaders).
	params map[string][]rev.ParamHeader

	mu       sync.Mutex
	sessions map[*session]struct{}
	closed   bool
}

// New returns a server. A nil opts gives every default.
func New(opts *Options) *Server {
	o := opts.withDefaults()
	stored := new(storedCount)
	s := &Server{opts: o, tools: map[string]*Tool{}, store: newStore(o.Clock, stored), ids: ids{r: o.Rand, make: o.TaskIDs}, budget: newBudget(o.MaxSessionBytes, o.MaxServerBytes), states: newStateSealer(o.StateRand), sessions: map[*session]struct{}{}}
	s.board = newBoard(o.Clock, s.budget, stored)
	s.subs = newListeners()
	tools := o.Tools
	if tools == nil {
		tools = BuiltinTools()
	}
	for _, t := range tools {
		if _, dup := s.tools[t.Name]; dup {
			continue
		}
		s.tools[t.Name] = t
		s.order = append(s.order, t)
	}
	s.params = paramHeadersOf(s.order)
	return s
}

// Capabilities returns what the server declares in InitializeResult.
func (s *Server) Capabilities() mcp.ServerCapabilities {
	tasks := &mcp.TasksCapability{
		List:     &mcp.Empty{},
		Cancel:   &mcp.Empty{},
		Requests: &mcp.TaskRequests{Tools: &mcp.ToolsTaskRequests{Call: &mcp.Empty{}}},
	}
	if len(s.opts.Modes) > 0 {
		tasks.Responses = &mcp.ResponsesCapability{Modes: s.opts.Modes}
	}
	if !s.opts.NoPartial {
		tasks.Streaming = &mcp.StreamingCapability{Partial: &mcp.Empty{}}
	}
	return mcp.ServerCapabilities{Tools: &mcp.ToolsCapability{}, Tasks: tasks, Logging: &mcp.Empty{}}
}

// Tools returns the tools/list entries of a 2025-11-25 session.
func (s *Server) Tools() []mcp.Tool { return s.toolsOf(mcp.Revision20251125) }

// toolsOf returns the tools/list entries of the tools served to revision
// era (Tool.Revisions).
func (s *Server) toolsOf(era mcp.Revision) []mcp.Tool {
	out := make([]mcp.Tool, 0, len(s.order))
	for _, t := range s.order {
		if !t.servedTo(era) {
			continue
		}
		e := t.Tool
		if len(e.InputSchema) == 0 {
			e.InputSchema = json.RawMessage(`{"type":"object"}`)
		}
		out = append(out, e)
	}
	return out
}

// NewSession implements mcp.Endpoint.
func (s *Server) NewSession(out mcp.Outbox) mcp.Session {
	ctx, cancel := context.WithCancel(context.Background())
	ss := &session{srv: s, out: out, ctx: ctx, cancel: cancel, inflight: map[mcp.ID]context.CancelFunc{},
		ops: ratelimit.Bucket{Max: s.opts.MaxTaskOpsPerSecond, Per: time.Second}}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		cancel()
	}
	s.sessions[ss] = struct{}{}
	return ss
}

// Close ends every session and stops every task, of either era.
func (s *Server) Close() {
	defer s.board.close()
	s.subs.close()
	s.mu.Lock()
	s.closed = true
	all := make([]*session, 0, len(s.sessions))
	for ss := range s.sessions {
		all = append(all, ss)
	}
	s.mu.Unlock()
	for _, ss := range all {
		ss.Close()
	}
}

func (s *Server) forget(ss *session) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.sessions, ss)
}

// Stats is what the server holds at one moment.
type Stats struct {
	Sessions int   // sessions open
	Tasks    int   // tasks stored, live or finished, of either era
	Live     int   // tasks not yet terminal, of either era
	Bytes    int64 // result bytes held by tasks (Options.MaxServerBytes)
	// Subscriptions are the subscriptions/listen streams open.
	Subscriptions int
}

// Stats returns what the server holds now.
func (s *Server) Stats() Stats {
	s.mu.Lock()
	n := len(s.sessions)
	s.mu.Unlock()
	tasks, live := s.store.counts()
	st, sl := s.board.counts()
	tasks, live = tasks+st, live+sl
	return Stats{Sessions: n, Tasks: tasks, Live: live, Bytes: s.budget.Held(nil), Subscriptions: s.subs.count()}
}
