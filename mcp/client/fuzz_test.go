package client_test

import (
	"bufio"
	"context"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/tasksim/tasksim/mcp"
	"github.com/tasksim/tasksim/mcp/client"
	"github.com/tasksim/tasksim/mcp/stdio"
)

// FuzzCallAnswers feeds a call whatever a server may write: each line of
// the input is sent as a line of server output after the tools/call
// arrives, with $ID replaced by its id, and the server answers every
// tasks/* request with the same lines. The call must end (in time, with
// or without an error) and never panic.
func FuzzCallAnswers(f *testing.F) {
	for _, seed := range []string{
		`{"jsonrpc":"2.0","id":$ID,"result":{"content":[{"type":"text","text":"x"}]}}`,
		`{"jsonrpc":"2.0","id":$ID,"result":{"task":{"taskId":"t","status":"working","createdAt":"2025-11-25T10:30:00Z","lastUpdatedAt":"2025-11-25T10:30:00Z","ttl":null}}}`,
		`{"jsonrpc":"2.0","id":$ID,"result":{"partial-content":[{"seqNr":2,"type":"text","text":"b"}],"isComplete":false,"_meta":{"io.modelcontextprotocol/related-task":{"taskId":"t"}}}}` + "\n" +
			`{"jsonrpc":"2.0","id":$ID,"result":{"partial-content":[{"seqNr":1,"type":"text","text":"a"}],"isComplete":true}}`,
		`{"jsonrpc":"2.0","method":"notifications/tasks/partial","params":{"taskId":"t","seq":-5,"content":[]}}` + "\n" +
			`{"jsonrpc":"2.0","method":"notifications/tasks/status","params":{"taskId":"t","status":"completed"}}` + "\n" +
			`{"jsonrpc":"2.0","id":$ID,"result":{"task":{"taskId":"t","status":"completed"}}}`,
		`{"jsonrpc":"2.0","id":$ID,"result":{"partial-content":[{"type":"text"}],"isComplete":"yes"}}`,
		`{"jsonrpc":"2.0","id":$ID,"error":{"code":-32602,"message":"Failed to retrieve task: Task has expired"}}`,
		`{"jsonrpc":"2.0","id":$ID,"result":null}`,
		`not json at all`,
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, lines string) {
		ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
		defer cancel()
		fromServer, serverOut := io.Pipe()
		serverIn, toServer := io.Pipe()
		defer serverOut.Close()
		go func() {
			in := bufio.NewScanner(serverIn)
			in.Buffer(nil, 1<<20)
			for in.Scan() {
				m, err := mcp.DecodeMessage(in.Bytes())
				if err != nil || m.Kind() != mcp.KindRequest {
					continue
				}
				if m.Method == mcp.MethodInitialize {
					io.WriteString(serverOut, `{"jsonrpc":"2.0","id":`+m.ID.String()+`,"result":{"protocolVersion":"2025-11-25","capabilities":{},"serverInfo":{"name":"f","version":"1"}}}`+"\n")
					continue
				}
				io.WriteString(serverOut, strings.ReplaceAll(lines, "$ID", m.ID.String())+"\n")
			}
		}()
		sess, err := client.New(nil).Connect(ctx, &stdio.IOTransport{Reader: fromServer, Writer: toServer})
		if err != nil {
			return
		}
		defer sess.Close()
		for _, mode := range []client.Mode{client.ModeStreaming, client.ModePartial} {
			res, err := sess.CallTool(ctx, client.CallOptions{Name: "x", Mode: mode, PollInterval: time.Millisecond})
			if err == nil && (res == nil || !res.Complete) {
				t.Fatalf("no error, but result %+v", res)
			}
		}
	})
}
