package streamhttp_test

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"

	"github.com/tasksim/tasksim/mcp"
	rev "github.com/tasksim/tasksim/mcp/rev20260728"
	"github.com/tasksim/tasksim/mcp/server"
)

// holdTool runs until its context ends; started gets a value when it runs,
// stopped when it has seen its context end.
func holdTool(started, stopped chan<- struct{}) *server.Tool {
	return &server.Tool{
		Tool: mcp.Tool{Name: "hold", InputSchema: json.RawMessage(`{"type":"object"}`)},
		Prepare: func(json.RawMessage) (server.RunFunc, error) {
			return func(ctx context.Context, c *server.Call) (*mcp.CallToolResult, error) {
				started <- struct{}{}
				<-ctx.Done()
				stopped <- struct{}{}
				return nil, ctx.Err()
			}, nil
		},
	}
}

// A stateless request still unanswered when the handler closes gets 503
// with a -32603 error, as a request after Close does, not a 200 with no
// body.
func TestStatelessCloseAnswers503(t *testing.T) {
	started, stopped := make(chan struct{}, 1), make(chan struct{}, 1)
	s := newStatelessServerWith(t, &server.Options{Tools: []*server.Tool{holdTool(started, stopped)}})
	answers := make(chan *answer, 1)
	go func() {
		answers <- s.do(http.MethodPost, request(mcp.MethodToolsCall, `"name":"hold"`, metaJSON(rev.ProtocolVersion)),
			headers(mcp.MethodToolsCall, "hold"))
	}()
	<-started
	s.h.Close()
	wantError(t, <-answers, http.StatusServiceUnavailable, mcp.CodeInternalError, "shutting down")
	<-stopped
}
