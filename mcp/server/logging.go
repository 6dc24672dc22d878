package server

import "github.com/tasksim/tasksim/mcp"

// setLevel answers logging/setLevel: the server declares the logging
// capability, so it must accept the method (MCP 2025-11-25, "Logging").
// The level is kept per session; an unknown level is -32602.
func (ss *session) setLevel(msg *mcp.Message, r mcp.Replier) {
	var p mcp.SetLevelParams
	if err := mcp.DecodeParams(msg.Params, &p); err != nil {
		replyError(ss.ctx, r, msg.ID, err)
		return
	}
	if !p.Level.IsValid() {
		replyError(ss.ctx, r, msg.ID, mcp.Errorf(mcp.CodeInvalidParams, "invalid params: level %q is not one of %v", p.Level, mcp.LoggingLevels()))
		return
	}
	ss.mu.Lock()
	ss.logLevel = p.Level
	ss.mu.Unlock()
	reply(ss.ctx, r, msg.ID, struct{}{})
}
