package cli

import (
	"bufio"
	"context"
	"io"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/tasksim/tasksim/mcp/client"
	"github.com/tasksim/tasksim/mcp/streamhttp"
)

// serveInProcess runs tasksim serve with args in-process until the test
// ends; it returns the exit code channel and the stderr buffer.
func serveInProcess(t *testing.T, args ...string) (stop func() int, stderr *syncBuffer) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	stderr = &syncBuffer{}
	st := &State{Stdin: strings.NewReader(""), Stdout: io.Discard, Stderr: stderr, Getenv: func(string) string { return "" }, Context: ctx,
		Args: append([]string{"serve"}, args...)}
	done := make(chan int, 1)
	go func() { done <- Main(st) }()
	var code int
	stopped := false
	stop = func() int {
		if !stopped {
			stopped = true
			cancel()
			code = <-done
		}
		return code
	}
	t.Cleanup(func() { stop() })
	return stop, stderr
}

// TestServeReadyFD: --ready-fd writes the endpoint URL and a newline once
// the server listens, then closes the descriptor.
func TestServeReadyFD(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	// The command closes the descriptor it is given: give it a copy of
	// the write end, as a child process gets its own.
	fd, err := syscall.Dup(int(w.Fd()))
	if err != nil {
		t.Fatal(err)
	}
	w.Close()
	stop, stderr := serveInProcess(t, "--addr", "127.0.0.1:0", "--ready-fd", strconv.Itoa(fd), "--log-level", "error")
	rest, err := io.ReadAll(bufio.NewReader(r)) // ends once the descriptor is closed
	if err != nil {
		t.Fatal(err)
	}
	url, found := strings.CutSuffix(string(rest), "\n")
	if !found || strings.Contains(url, "\n") || !strings.HasPrefix(url, "http://127.0.0.1:") || !strings.HasSuffix(url, "/mcp") {
		t.Fatalf("ready pipe carried %q: want one line with the URL", rest)
	}
	ctx := t.Context()
	sess, err := client.New(nil).Connect(ctx, &streamhttp.ClientTransport{URL: url})
	if err != nil {
		t.Fatalf("connect to the URL on the ready pipe: %v", err)
	}
	sess.Close()
	if code := stop(); code != ExitOK {
		t.Fatalf("exit %d, stderr %q", code, stderr.String())
	}
}
