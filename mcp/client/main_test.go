package client_test

import (
	"context"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/tasksim/tasksim/mcp"
	"github.com/tasksim/tasksim/mcp/client"
	"github.com/tasksim/tasksim/mcp/server"
	"github.com/tasksim/tasksim/mcp/stdio"
)

// testTimeout bounds every test's context: a hang fails the test with a
// clear error instead of stalling the run.
const testTimeout = 20 * time.Second

func testContext(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	t.Cleanup(cancel)
	return ctx
}

// dialer connects a client to a reference server with the given options
// over one transport.
type dialer func(t *testing.T, sopts *server.Options, copts *client.Options) *client.Session

// dialers are the transports the real-server tests run over; the HTTP one
// is added where the Streamable HTTP server side is available.
var dialers = map[string]dialer{"stdio": dialStdio}

// dialStdio runs the reference server with stdio.Serve on in-process pipes.
func dialStdio(t *testing.T, sopts *server.Options, copts *client.Options) *client.Session {
	t.Helper()
	srv := server.New(sopts)
	fromServer, serverOut := io.Pipe()
	serverIn, toServer := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() {
		served <- stdio.Serve(ctx, srv, serverIn, serverOut, nil)
		serverOut.Close()
	}()
	sess, err := client.New(copts).Connect(testContext(t), &stdio.IOTransport{Reader: fromServer, Writer: toServer})
	if err != nil {
		cancel()
		t.Fatalf("connect: %v", err)
	}
	t.Cleanup(func() {
		sess.Close()
		cancel()
		<-served
		srv.Close()
	})
	return sess
}

// forEachTransport runs f once per transport.
func forEachTransport(t *testing.T, f func(t *testing.T, dial dialer)) {
	for name, d := range dialers {
		t.Run(name, func(t *testing.T) { f(t, d) })
	}
}

// chunks is the content slow_text produces: n chunks of size bytes.
func chunks(n, size int) []mcp.ContentBlock {
	out := make([]mcp.ContentBlock, n)
	for i := range out {
		out[i] = mcp.TextBlock(server.ChunkText(i+1, size))
	}
	return out
}

func texts(blocks []mcp.ContentBlock) string {
	parts := make([]string, len(blocks))
	for i, b := range blocks {
		parts[i] = b.Text
	}
	return strings.Join(parts, "|")
}

func wantContent(t *testing.T, got, want []mcp.ContentBlock) {
	t.Helper()
	if texts(got) != texts(want) || len(got) != len(want) {
		t.Fatalf("content:\n got %q\nwant %q", texts(got), texts(want))
	}
	for i := range got {
		if !got[i].Equal(want[i]) {
			t.Fatalf("content block %d: got %+v, want %+v", i, got[i], want[i])
		}
	}
}

// count returns how many events of a kind (and, if set, method) the
// timeline holds.
func count(tl []client.Event, kind client.EventKind, method string) int {
	n := 0
	for _, e := range tl {
		if e.Kind == kind && (method == "" || e.Method == method) {
			n++
		}
	}
	return n
}
