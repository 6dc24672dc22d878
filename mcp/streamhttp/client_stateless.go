package streamhttp

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"

	"github.com/tasksim/tasksim/mcp"
	rev "github.com/tasksim/tasksim/mcp/rev20260728"
	"github.com/tasksim/tasksim/mcp/rev20260728/tasks"
)

// The client side of the stateless era (2026-07-28). A ClientTransport
// whose Revision is stateless sends every message as a POST of its own,
// with no session and no standalone stream:
//
//	Write ─POST (MCP-Protocol-Version, Mcp-Method, Mcp-Name, Mcp-Param-*)─▶ application/json | text/event-stream
//	  4xx with a JSON-RPC error body ─▶ that error is the answer (-32020, -32021, -32022, -32602)
//	  the stream ends before its response ─▶ *mcp.StreamError (no resumption: re-issue with a new id)
//	  ctx of Write ends while the stream is open ─▶ the stream is closed: that cancels the request
//
// (2026-07-28 Streamable HTTP, "Request Metadata", "Cancellation";
// changelog item 9: no Last-Event-ID, no event ids, a broken stream loses
// the request.)

// statelessNameRules are the Mcp-Name rules the client follows: the
// core's and the tasks extension's (Tasks, "Streamable HTTP: Routing
// Headers").
var statelessNameRules = rev.CoreNameRules().With(tasks.NameRules())

// writeStateless posts msg, encoded in body, in the stateless era. It
// returns once the answer's headers arrived; an error after the request
// was sent (the body of a JSON answer cut short) loses the answer and is
// delivered to Read as a *StreamError, as a broken stream is.
func (c *clientConn) writeStateless(ctx context.Context, msg *mcp.Message, body []byte) error {
	c.mu.Lock()
	closed := c.closed
	c.mu.Unlock()
	if closed {
		return ErrClosed
	}
	reqCtx, cancelReq := context.WithCancel(c.ctx)
	// The request lives as long as the writer's ctx: closing the stream is
	// how a client cancels a request in this era.
	stop := context.AfterFunc(ctx, cancelReq)
	end := func() {
		stop()
		cancelReq()
	}
	req, err := http.NewRequestWithContext(reqCtx, http.MethodPost, c.t.URL, bytes.NewReader(body))
	if err != nil {
		end()
		return fmt.Errorf("streamhttp: %w", err)
	}
	for k, vs := range c.t.Header {
		for _, v := range vs {
			req.Header.Add(k, v)
		}
	}
	if msg.Method != "" {
		if err := rev.SetHeaders(req.Header, msg.Method, msg.Params, string(c.t.Revision), statelessNameRules); err != nil {
			end()
			return fmt.Errorf("streamhttp: %s: %w", msg.Method, err)
		}
		c.params.setHeaders(req.Header, msg)
		c.params.noteRequest(msg)
	}
	req.Header["Accept"] = postAccept
	req.Header["Content-Type"] = jsonContentType
	info := RequestInfo{Method: http.MethodPost, RPCID: msg.ID, RPCMethod: msg.Method}
	resp, err := c.do(req, int64(len(body)), info)
	if err != nil {
		end()
		return c.requestError(http.MethodPost, ctx, err)
	}
	request := msg.Kind() == mcp.KindRequest
	ct := mediaType(resp.Header.Get("Content-Type"))
	switch {
	case resp.StatusCode >= 400 && ct == "application/json" && request:
		// The errors of this era come with 400 and the JSON-RPC error as
		// the body (2026-07-28 Overview, "Error Codes"): that is the answer.
		return c.statelessJSON(ctx, msg, resp, end)
	case resp.StatusCode < 200 || resp.StatusCode > 299:
		defer end()
		defer resp.Body.Close()
		return c.statusError(http.MethodPost, resp)
	case ct == "text/event-stream" && request:
		s := &clientStream{rpcID: msg.ID, method: msg.Method}
		if !c.goStream(func() { c.followStatelessStream(s, resp, end) }) {
			resp.Body.Close()
			end()
		}
		return nil
	case ct == "application/json" && request:
		return c.statelessJSON(ctx, msg, resp, end)
	case request && resp.StatusCode != http.StatusAccepted:
		resp.Body.Close()
		end()
		return fmt.Errorf("POST %s: %s: unexpected Content-Type %q for request %s", c.t.URL, resp.Status, resp.Header.Get("Content-Type"), msg.ID)
	}
	resp.Body.Close()
	end()
	return nil
}

// statelessJSON reads a JSON answer to the request msg. A body that
// breaks off is a lost answer, reported to Read.
func (c *clientConn) statelessJSON(ctx context.Context, msg *mcp.Message, resp *http.Response, end func()) error {
	defer end()
	defer resp.Body.Close()
	data, err := readBody(resp, c.t.MaxMessage)
	if err == nil && len(data) > c.t.MaxMessage {
		err = fmt.Errorf("body longer than %d bytes", c.t.MaxMessage)
	}
	if err != nil {
		if ctx.Err() != nil || c.ctx.Err() != nil {
			return c.requestError(http.MethodPost, ctx, err)
		}
		c.deliverError(&StreamError{ID: msg.ID, Method: msg.Method, Err: fmt.Errorf("the answer broke off: %w", err)})
		return nil
	}
	answer, err := mcp.DecodeMessage(data)
	if err != nil {
		return fmt.Errorf("POST %s: %s: body is not a JSON-RPC message: %v", c.t.URL, resp.Status, err)
	}
	if !c.deliver(answer) {
		return ErrClosed
	}
	return nil
}

// errStatelessStreamLost says why a stateless answer was lost.
var errStatelessStreamLost = errors.New("the stream ended before the response; this revision does not resume streams: re-issue the request with a new id")

// followStatelessStream reads the SSE answer to a stateless request. It
// is never resumed: a stream that ends before its response is reported
// to Read as a *StreamError.
func (c *clientConn) followStatelessStream(s *clientStream, resp *http.Response, end func()) {
	err := c.readStream(s, resp.Body, end)
	end()
	if s.done || c.ctx.Err() != nil {
		return
	}
	if err == nil {
		err = errStatelessStreamLost
	} else {
		err = fmt.Errorf("%w (%v)", errStatelessStreamLost, err)
	}
	c.streamFailed(s, err)
}
