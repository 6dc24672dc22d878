// Command mcpgo is a real-peer interop fixture: a small MCP task server
// written with the third-party Go SDK github.com/mark3labs/mcp-go (v1.2.1,
// 2025-11-25 tasks), for judging it with `tasksim check`. It lives in its
// own module so that tasksim's module does not depend on mcp-go.
//
// Usage:
//
//	mcpgo --http    Streamable HTTP on a free 127.0.0.1 port, endpoint /mcp,
//	                stateful sessions, the SDK's in-memory event store;
//	                prints the URL as one line on stdout when listening
//	mcpgo --stdio   stdio (newline-delimited JSON-RPC)
//
// Tools, registered with s.AddTool and mcp.WithTaskSupport (the server
// declares tasks list, cancel and tools/call tasks):
//
//	mcpgo_slow      taskSupport "required"; args {delayMs=300, text="mcp-go slow done"}:
//	                works delayMs, then answers [{type:"text", text}]
//	mcpgo_optional  the same with taskSupport "optional"
//
// The handlers stop when their context ends, as a Go handler should: the
// SDK runs a task on a context derived from the request that created it
// (mark3labs/mcp-go#897), and the task's fate shows whether that request's
// end cancels it.
//
// Logs go to stderr only.
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

func main() {
	httpMode := flag.Bool("http", false, "serve Streamable HTTP on a free 127.0.0.1 port and print its URL")
	stdioMode := flag.Bool("stdio", false, "serve stdio")
	flag.Parse()
	log.SetPrefix("mcpgo: ")
	s := newServer()
	switch {
	case *httpMode == *stdioMode:
		fmt.Fprintln(os.Stderr, "usage: mcpgo --http | --stdio")
		os.Exit(2)
	case *stdioMode:
		if err := server.ServeStdio(s); err != nil {
			log.Fatal(err)
		}
	default:
		serveHTTP(s)
	}
}

func newServer() *server.MCPServer {
	s := server.NewMCPServer("tasksim-interop-mcpgo", "1.0.0",
		server.WithToolCapabilities(false),
		server.WithTaskCapabilities(true, true, true),
	)
	for _, t := range []struct {
		name    string
		support mcp.TaskSupport
	}{{"mcpgo_slow", mcp.TaskSupportRequired}, {"mcpgo_optional", mcp.TaskSupportOptional}} {
		s.AddTool(mcp.NewTool(t.name,
			mcp.WithDescription("Answers text after delayMs (task "+string(t.support)+")"),
			mcp.WithTaskSupport(t.support),
			mcp.WithNumber("delayMs", mcp.Description("how long the task works, in ms"), mcp.DefaultNumber(300)),
			mcp.WithString("text", mcp.Description("the text of the result"), mcp.DefaultString("mcp-go slow done")),
		), slow)
	}
	return s
}

// slow works delayMs, or stops when ctx ends.
func slow(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	d := time.Duration(req.GetFloat("delayMs", 300)) * time.Millisecond
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return mcp.NewToolResultText(req.GetString("text", "mcp-go slow done")), nil
	case <-ctx.Done():
		log.Printf("%s stopped after less than %s: %v", req.Params.Name, d, ctx.Err())
		return nil, ctx.Err()
	}
}

func serveHTTP(s *server.MCPServer) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		log.Fatal(err)
	}
	h := server.NewStreamableHTTPServer(s, server.WithEventStore(server.NewInMemoryEventStore()))
	hs := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	go func() {
		<-ctx.Done()
		hs.Close()
	}()
	fmt.Printf("http://%s/mcp\n", ln.Addr())
	log.Printf("listening on http://%s/mcp", ln.Addr())
	if err := hs.Serve(ln); err != nil && err != http.ErrServerClosed {
		log.Fatal(err)
	}
}
