package client_test

import (
	"context"
	"fmt"
	"io"

	"github.com/tasksim/tasksim/mcp/client"
	"github.com/tasksim/tasksim/mcp/server"
	"github.com/tasksim/tasksim/mcp/stdio"
)

// A streaming call to the reference server, served in-process over stdio.
func Example() {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	fromServer, serverOut := io.Pipe()
	serverIn, toServer := io.Pipe()
	go stdio.Serve(ctx, server.New(nil), serverIn, serverOut, nil)

	sess, err := client.New(nil).Connect(ctx, &stdio.IOTransport{Reader: fromServer, Writer: toServer})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer sess.Close()
	res, err := sess.CallTool(ctx, client.CallOptions{
		Name: "slow_text",
		Args: map[string]any{"chunks": 3, "chunkSize": 12, "intervalMs": 1},
		Mode: client.ModeStreaming,
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(res.Answer, res.Complete, res.Task.Status, res.Segments)
	for _, b := range res.Content {
		fmt.Println(b.Text)
	}
	// Output:
	// streaming true completed 3
	// chunk 1;aaaa
	// chunk 2;bbbb
	// chunk 3;cccc
}
