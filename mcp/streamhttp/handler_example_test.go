package streamhttp_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/tasksim/tasksim/mcp"
	"github.com/tasksim/tasksim/mcp/streamhttp"
)

// pingEndpoint answers every request with an empty result.
type pingEndpoint struct{}

func (pingEndpoint) NewSession(mcp.Outbox) mcp.Session { return pingSession{} }

type pingSession struct{}

func (pingSession) Close() {}

func (pingSession) Handle(ctx context.Context, msg *mcp.Message, r mcp.Replier) {
	if r != nil {
		_ = r.Reply(ctx, &mcp.Message{ID: msg.ID, Result: []byte(`{}`)}, true)
	}
}

func ExampleNewHandler() {
	h := streamhttp.NewHandler(pingEndpoint{}, nil)
	defer h.Close()
	srv := httptest.NewServer(h)
	defer srv.Close()

	post := func(sid, body string) *http.Response {
		req, _ := http.NewRequest(http.MethodPost, srv.URL+"/mcp", strings.NewReader(body))
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Content-Type", "application/json")
		if sid != "" {
			req.Header.Set("MCP-Session-Id", sid)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			panic(err)
		}
		return resp
	}
	resp := post("", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}`)
	resp.Body.Close()
	sid := resp.Header.Get("MCP-Session-Id")

	resp = post(sid, `{"jsonrpc":"2.0","id":2,"method":"ping"}`)
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	fmt.Println(resp.Status, resp.Header.Get("Content-Type"))
	fmt.Println(string(body))
	// Output:
	// 200 OK application/json
	// {"jsonrpc":"2.0","id":2,"result":{}}
}

// Pipe connects a client to a handler in memory: no socket, the same
// protocol.
func ExamplePipe() {
	h := streamhttp.NewHandler(pingEndpoint{}, nil)
	defer h.Close()
	ct := streamhttp.Pipe(h)
	ct.NoStandaloneStream = true
	ctx := context.Background()
	conn, err := ct.Connect(ctx)
	if err != nil {
		panic(err)
	}
	defer conn.Close()
	init, _ := mcp.NewRequest(mcp.IntID(1), mcp.MethodInitialize, mcp.InitializeParams{ProtocolVersion: mcp.LatestProtocolVersion})
	if err := conn.Write(ctx, init); err != nil {
		panic(err)
	}
	m, err := conn.Read(ctx)
	if err != nil {
		panic(err)
	}
	fmt.Println(ct.URL, m.ID, string(m.Result))
	// Output:
	// http://memory/mcp 1 {}
}
