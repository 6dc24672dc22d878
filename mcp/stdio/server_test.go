package stdio_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/tasksim/tasksim/mcp"
	"github.com/tasksim/tasksim/mcp/server"
	"github.com/tasksim/tasksim/mcp/stdio"
)

// pipeServer runs Serve over pipes and returns the client's ends.
func pipeServer(t *testing.T, opts *stdio.ServerOptions) (io.WriteCloser, *bufio.Scanner, <-chan error) {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	srv := server.New(nil)
	errc := make(chan error, 1)
	go func() {
		err := stdio.Serve(context.Background(), srv, inR, outW, opts)
		outW.Close()
		errc <- err
	}()
	t.Cleanup(func() { inW.Close(); srv.Close() })
	sc := bufio.NewScanner(outR)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	return inW, sc, errc
}

func readMsg(t *testing.T, sc *bufio.Scanner) *mcp.Message {
	t.Helper()
	if !sc.Scan() {
		t.Fatalf("no more output: %v", sc.Err())
	}
	line := sc.Bytes()
	if strings.ContainsAny(string(line), "\n\r") {
		t.Fatalf("output line contains a newline: %q", line)
	}
	m, err := mcp.DecodeMessage(line)
	if err != nil {
		t.Fatalf("output %q is not a message: %v", line, err)
	}
	return m
}

// The tests that run tools run in a synctest bubble (the server is on
// io.Pipe): the tools' delays and the server's immediate window are on
// virtual time, so what the server answers does not depend on how fast
// the machine is.

func TestServeStreamingCallOverStdio(t *testing.T) { synctest.Test(t, testServeStreamingCall) }

func testServeStreamingCall(t *testing.T) {
	in, out, errc := pipeServer(t, nil)
	io.WriteString(in, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"tasks":{"streaming":{"partial":{}}}},"clientInfo":{"name":"t","version":"1"}}}`+"\n")
	if m := readMsg(t, out); m.ID != mcp.IntID(1) || m.Error != nil {
		t.Fatalf("initialize answer %+v", m)
	}
	io.WriteString(in, `{"jsonrpc":"2.0","method":"notifications/initialized"}`+"\r\n")
	io.WriteString(in, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"slow_text","arguments":{"chunks":3,"chunkSize":8,"intervalMs":1},"task":{"responseModes":["streaming"]}}}`+"\n")
	var seq []int64
	partials := 0
	for {
		m := readMsg(t, out)
		if m.Method == mcp.NotificationTaskPartial {
			partials++
			continue
		}
		if m.Method != "" {
			continue
		}
		var r mcp.ToolCallResponse
		if err := json.Unmarshal(m.Result, &r); err != nil {
			t.Fatal(err)
		}
		for _, s := range r.PartialContent {
			seq = append(seq, s.SeqNr)
		}
		if r.IsComplete != nil && *r.IsComplete {
			break
		}
	}
	if len(seq) != 3 || seq[0] != 1 || seq[2] != 3 {
		t.Errorf("seqNr %v, want [1 2 3]", seq)
	}
	go func() {
		for out.Scan() { // the status notification and anything after
		}
	}()
	in.Close()
	select {
	case err := <-errc:
		if err != nil {
			t.Errorf("Serve after EOF: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Serve did not return after stdin closed")
	}
	if partials != 3 {
		t.Errorf("%d partial notifications, want 3 (the client declared them)", partials)
	}
}

func TestServeBadLines(t *testing.T) {
	in, out, _ := pipeServer(t, &stdio.ServerOptions{MaxLine: 256})
	cases := []struct {
		name string
		line string
		code int
		id   mcp.ID
	}{
		{"not JSON", "hello", mcp.CodeParseError, mcp.NullID},
		{"truncated", `{"jsonrpc":"2.0","id":3,"method":"pi`, mcp.CodeParseError, mcp.NullID},
		{"wrong version keeps id", `{"jsonrpc":"1.0","id":4,"method":"ping"}`, mcp.CodeInvalidRequest, mcp.IntID(4)},
		{"batch", `[{"jsonrpc":"2.0","id":5,"method":"ping"}]`, mcp.CodeInvalidRequest, mcp.NullID},
		{"too long", `{"jsonrpc":"2.0","id":6,"method":"ping","params":{"x":"` + strings.Repeat("a", 400) + `"}}`, mcp.CodeInvalidRequest, mcp.NullID},
		{"unknown method", `{"jsonrpc":"2.0","id":7,"method":"nope"}`, mcp.CodeMethodNotFound, mcp.IntID(7)},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			io.WriteString(in, tc.line+"\n")
			m := readMsg(t, out)
			if m.Error == nil || m.Error.Code != tc.code || m.ID != tc.id {
				t.Errorf("answer id %s error %+v, want id %s code %d", m.ID, m.Error, tc.id, tc.code)
			}
		})
	}
	// The server is still alive.
	io.WriteString(in, `{"jsonrpc":"2.0","id":8,"method":"ping"}`+"\n")
	if m := readMsg(t, out); m.ID != mcp.IntID(8) || string(m.Result) != "{}" {
		t.Errorf("ping after bad input: %+v", m)
	}
}

// On EOF the server still answers what was asked: in the bubble the
// 50 ms tool cannot finish before stdin closes.
func TestServeAnswersPendingAfterEOF(t *testing.T) { synctest.Test(t, testServeAnswersPendingAfterEOF) }

func testServeAnswersPendingAfterEOF(t *testing.T) {
	in, out, errc := pipeServer(t, nil)
	io.WriteString(in, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"sleep","arguments":{"durationMs":50,"text":"late"}}}`+"\n")
	in.Close()
	m := readMsg(t, out)
	if m.ID != mcp.IntID(1) || !strings.Contains(string(m.Result), "late") {
		t.Errorf("answer after EOF: %s", m.Result)
	}
	if err := <-errc; err != nil {
		t.Errorf("Serve: %v", err)
	}
}

// lockedBuffer is a bytes.Buffer safe for the server's concurrent writes.
type lockedBuffer struct {
	mu sync.Mutex
	b  *bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) bytes() []byte {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]byte(nil), l.b.Bytes()...)
}
