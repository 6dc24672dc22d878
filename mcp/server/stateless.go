package server

import (
	"context"
	"encoding/json"
	"slices"
	"time"

	"github.com/tasksim/tasksim/mcp"
	rev "github.com/tasksim/tasksim/mcp/rev20260728"
	"github.com/tasksim/tasksim/mcp/rev20260728/tasks"
)

// The stateless era: requests of 2026-07-28, each standing alone with its
// protocol version and client capabilities in its _meta (2026-07-28
// Overview, "Statelessness", "Per-request protocol fields"). The server
// keeps no session and no rate bucket between them; what it keeps is the
// tasks of the tasks extension (board.go), reached by id. The result bytes
// of plain calls and of those tasks share one budget of MaxSessionBytes.
//
//	HandleStateless ─▶ _meta fields ──────────────▶ -32602
//	                 ─▶ protocol version served? ───▶ -32022 {supported, requested}
//	                 ─▶ server/discover | tools/list | tools/call | subscriptions/listen (listen.go)
//	                 ─▶ an extension's method (extensions.go): tasks/get, tasks/update, tasks/cancel
//	                 ─▶ anything else ──────────────▶ -32601

// cacheTTL is the ttlMs of the cacheable results (server/discover,
// tools/list): what they say does not change while the server runs, but
// a client that keeps them for a minute sees a restarted server's new
// tools soon enough (schema.ts CacheableResult).
const cacheTTL = time.Minute

// servedRevisions returns the known revisions of revs, newest first, or
// every known revision when revs names none.
func servedRevisions(revs []mcp.Revision) []mcp.Revision {
	var out []mcp.Revision
	for _, r := range mcp.Revisions() {
		if slices.Contains(revs, r) {
			out = append(out, r)
		}
	}
	if len(out) == 0 {
		return mcp.Revisions()
	}
	return out
}

// Revisions implements mcp.StatelessEndpoint: the revisions
// Options.Revisions names, newest first.
func (s *Server) Revisions() []mcp.Revision { return slices.Clone(s.opts.Revisions) }

// supportedVersions lists the protocolVersion strings of the revisions the
// server serves, newest first: the "supported" of a -32022 error and the
// supportedVersions of server/discover (2026-07-28 Versioning, "Protocol
// Version Negotiation", whose example lists both eras').
func (s *Server) supportedVersions() []string {
	var out []string
	for _, r := range s.opts.Revisions {
		out = append(out, r.ProtocolVersions()...)
	}
	return out
}

// servesStateless reports whether version is that of a stateless revision
// the server serves.
func (s *Server) servesStateless(version string) bool {
	r, ok := mcp.RevisionOf(version)
	return ok && r.IsStateless() && slices.Contains(s.opts.Revisions, r)
}

// HandleStateless implements mcp.StatelessEndpoint. Notifications and
// responses are dropped: the revision defines no client notification over
// Streamable HTTP, and the server sends no requests (2026-07-28 Streamable
// HTTP, "Sending Messages").
func (s *Server) HandleStateless(ctx context.Context, msg *mcp.Message, r mcp.Replier) {
	if msg.Kind() != mcp.KindRequest || r == nil {
		return
	}
	// The transport may have read the params already (rev.WithRequest).
	q := rev.RequestOf(ctx, msg)
	if msg.Method == mcp.MethodInitialize && !q.HasMeta() {
		// An initialize sent the 2025-11-25 way is here only when the
		// session era is not served: a modern-only server SHOULD name the
		// versions it supports in the error it answers initialize with
		// (2026-07-28 Versioning, "Backward Compatibility with
		// Initialization-Based Versions"). One that carries the
		// per-request _meta is a request of this revision, which has no
		// initialize: -32601 below.
		var p mcp.InitializeParams
		_ = mcp.DecodeParams(msg.Params, &p)
		replyError(ctx, r, msg.ID, rev.UnsupportedProtocolVersion(p.ProtocolVersion, s.supportedVersions()))
		return
	}
	meta := q.Meta
	if err := q.MetaErr; err != nil {
		replyError(ctx, r, msg.ID, metaError(err))
		return
	}
	if !s.servesStateless(meta.ProtocolVersion) {
		replyError(ctx, r, msg.ID, rev.UnsupportedProtocolVersion(meta.ProtocolVersion, s.supportedVersions()))
		return
	}
	switch msg.Method {
	case rev.MethodServerDiscover:
		reply(ctx, r, msg.ID, s.discover())
	case mcp.MethodToolsList:
		s.listToolsStateless(ctx, msg, r)
	case mcp.MethodToolsCall:
		s.callStateless(ctx, msg, meta, r)
	case rev.MethodSubscriptionsListen:
		s.listenStateless(ctx, msg, meta, r)
	default:
		if m := extensionMethod(msg.Method); m != nil {
			m(s, ctx, msg, meta, r)
			return
		}
		// Unknown, removed by this revision (ping, logging/setLevel, …) or
		// removed by the tasks extension (tasks/result, tasks/list): -32601
		// (2026-07-28 Streamable HTTP, "Protocol Version Header"; Tasks,
		// "Backward Compatibility").
		replyError(ctx, r, msg.ID, mcp.Errorf(mcp.CodeMethodNotFound, "Method not found: %s", msg.Method))
	}
}

// paramHeadersOf returns the x-mcp-header arguments of each tool served
// to the stateless era that declares some. A tool whose annotations break
// the rules is left out: clients leave it out of their lists (2026-07-28
// Streamable HTTP, "Schema Extension"), so no call of it has headers to
// check.
func paramHeadersOf(tools []*Tool) map[string][]rev.ParamHeader {
	out := map[string][]rev.ParamHeader{}
	for _, t := range tools {
		if !t.servedTo(mcp.Revision20260728) {
			continue
		}
		if params, err := rev.ParamHeaders(t.InputSchema); err == nil && len(params) > 0 {
			out[t.Name] = params
		}
	}
	return out
}

// ParamHeaders implements rev.ToolHeaders: the arguments of tool the
// 2026-07-28 tools/list marks with x-mcp-header, whose Mcp-Param headers
// a Streamable HTTP transport checks against the body.
func (s *Server) ParamHeaders(tool string) []rev.ParamHeader { return s.params[tool] }

// metaError is the -32602 error of a malformed _meta.
func metaError(err error) *mcp.Error {
	if e, ok := err.(*rev.MetaError); ok {
		return e.RPCError()
	}
	return mcp.Errorf(mcp.CodeInvalidParams, "invalid params: %v", err)
}

// resultMeta is the _meta of every result: the server's identity, which
// servers SHOULD send (2026-07-28 Overview, "Per-response protocol
// fields").
func (s *Server) resultMeta() *rev.ResultMeta {
	return &rev.ResultMeta{ServerInfo: &mcp.Implementation{Name: s.opts.Name, Version: s.opts.Version}}
}

// StatelessCapabilities returns what the server advertises in
// server/discover: tools, and each extension it serves (extensions.go),
// the tasks extension among them (io.modelcontextprotocol/tasks; Tasks,
// "Capability Negotiation").
func (s *Server) StatelessCapabilities() rev.ServerCapabilities {
	caps := rev.ServerCapabilities{Tools: &mcp.ToolsCapability{}}
	for _, e := range extensions {
		caps = caps.WithExtension(e.id)
	}
	return caps
}

// discover answers server/discover (2026-07-28 server/discover).
func (s *Server) discover() *rev.DiscoverResult {
	return &rev.DiscoverResult{
		ResultType:        rev.ResultComplete,
		Meta:              s.resultMeta(),
		SupportedVersions: s.supportedVersions(),
		Capabilities:      s.StatelessCapabilities(),
		Instructions:      "tasksim reference server: MCP 2026-07-28 with the tasks extension, and 2025-11-25 sessions on the same endpoint.",
		TTLMs:             cacheTTL.Milliseconds(),
		CacheScope:        rev.CacheScopePublic,
	}
}

// listToolsStateless answers tools/list in this revision's shape: one
// page, tools without "execution".
func (s *Server) listToolsStateless(ctx context.Context, msg *mcp.Message, r mcp.Replier) {
	var p mcp.ListToolsParams
	if err := mcp.DecodeParams(msg.Params, &p); err != nil {
		replyError(ctx, r, msg.ID, err)
		return
	}
	if p.Cursor != "" {
		replyError(ctx, r, msg.ID, mcp.Errorf(mcp.CodeInvalidParams, "invalid cursor: tools/list has a single page"))
		return
	}
	list := s.toolsOf(mcp.Revision20260728)
	for i := range list {
		list[i].Execution = nil
	}
	reply(ctx, r, msg.ID, &rev.ListToolsResult{
		ResultType: rev.ResultComplete,
		Meta:       s.resultMeta(),
		Tools:      list,
		TTLMs:      cacheTTL.Milliseconds(),
		CacheScope: rev.CacheScopePublic,
	})
}

// callStateless answers a tools/call: with a CreateTaskResult when the
// server makes it a task (runsAsTask; Tasks, "Capability Negotiation"),
// else with a CallToolResult of resultType "complete". A legacy
// params.task is ignored: it is no opt-in in this revision. A plain call
// ends with ctx: a cancelled request gets no response; a task outlives its
// creating request.
func (s *Server) callStateless(ctx context.Context, msg *mcp.Message, meta rev.RequestMeta, r mcp.Replier) {
	p, tool, err := s.callTarget(msg.Params, mcp.Revision20260728)
	if err != nil {
		replyError(ctx, r, msg.ID, err)
		return
	}
	asTask, rpcErr := s.runsAsTask(tool, tasks.Declared(meta.ClientCapabilities))
	if rpcErr != nil {
		replyError(ctx, r, msg.ID, rpcErr)
		return
	}
	run, size, err := s.prepareRun(tool, p)
	if err != nil {
		replyError(ctx, r, msg.ID, err)
		return
	}
	// Input the tool needs before it runs is gathered first, by multi
	// round-trip requests; a task is made on the final round only (Tasks,
	// "Task Creation"; input.go).
	in, ok := s.mrtrRound(ctx, msg, meta, tool, p.Arguments, r)
	if !ok {
		return
	}
	if asTask {
		s.createTask(ctx, msg.ID, run, size, meta.ClientCapabilities, in, r)
		return
	}
	var token json.RawMessage
	if p.Meta != nil {
		token = p.Meta.ProgressToken
	}
	pc := &plainRun{
		srv: s, id: msg.ID, run: run, token: token, r: r, replyCtx: ctx, done: func() {},
		cancelled: func() bool { return ctx.Err() != nil },
		result:    s.completeResult,
		in:        in,
	}
	pc.start(ctx)
}

// completeResult is res in this revision's shape, answering a plain call;
// the tool's own _meta members are kept beside the server's identity.
func (s *Server) completeResult(res *mcp.CallToolResult) any {
	return callResult(res, s.resultMeta())
}

// callResult is res in this revision's shape, resultType "complete"
// (schema.ts Result.resultType: servers of this revision MUST include it),
// with the tool's own _meta members added to meta (which may be nil).
func callResult(res *mcp.CallToolResult, meta *rev.ResultMeta) *rev.CallToolResult {
	for k, v := range res.Meta {
		b, err := json.Marshal(v)
		if err != nil || k == rev.MetaServerInfo {
			continue
		}
		if meta == nil {
			meta = &rev.ResultMeta{}
		}
		if meta.Extra == nil {
			meta.Extra = map[string]json.RawMessage{}
		}
		meta.Extra[k] = b
	}
	return &rev.CallToolResult{
		ResultType:        rev.ResultComplete,
		Meta:              meta,
		Content:           res.Content,
		StructuredContent: res.StructuredContent,
		IsError:           res.IsError,
	}
}

var (
	_ mcp.StatelessEndpoint = (*Server)(nil)
	_ rev.ToolHeaders       = (*Server)(nil)
)
