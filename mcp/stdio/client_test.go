package stdio_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/tasksim/tasksim/clock"
	"github.com/tasksim/tasksim/mcp"
	"github.com/tasksim/tasksim/mcp/server"
	"github.com/tasksim/tasksim/mcp/stdio"
)

// The child processes of these tests are this test binary, run again with
// TASKSIM_STDIO_HELPER naming what to do (the os/exec helper-process
// pattern).

const helperEnv = "TASKSIM_STDIO_HELPER"

// TestClientHelperProcess is not a test: it is the child's main.
func TestClientHelperProcess(t *testing.T) {
	mode := os.Getenv(helperEnv)
	if mode == "" {
		return
	}
	switch mode {
	case "serve":
		fmt.Fprintln(os.Stderr, "helper: serving")
		stdio.Serve(context.Background(), server.New(nil), os.Stdin, os.Stdout, nil)
	case "badline":
		fmt.Println("Listening on port 8080...")
		stdio.Serve(context.Background(), server.New(nil), os.Stdin, os.Stdout, nil)
	case "exit3":
		fmt.Fprintln(os.Stderr, "helper: cannot open database")
		os.Exit(3)
	case "deaf":
		// Ignores stdin's end; only a kill stops it. (A bare select{}
		// would be reported as a deadlock.)
		time.Sleep(time.Hour)
	}
	os.Exit(0)
}

func helper(mode string, stderr io.Writer) *stdio.CommandTransport {
	return &stdio.CommandTransport{
		Command: os.Args[0],
		Args:    []string{"-test.run=^TestClientHelperProcess$"},
		// The race detector would otherwise sleep 1 s at the child's exit.
		Env:         []string{helperEnv + "=" + mode, "GORACE=atexit_sleep_ms=0"},
		Stderr:      stderr,
		GracePeriod: 5 * time.Second,
	}
}

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func initialize(t *testing.T, conn mcp.Conn, id int64) {
	t.Helper()
	req, _ := mcp.NewRequest(mcp.IntID(id), mcp.MethodInitialize, mcp.InitializeParams{ProtocolVersion: mcp.LatestProtocolVersion})
	if err := conn.Write(ctxT(t), req); err != nil {
		t.Fatal(err)
	}
}

// syncBuffer is a bytes.Buffer safe for the child's stderr copier.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func TestCommandTransport(t *testing.T) {
	var stderr syncBuffer
	conn, err := helper("serve", &stderr).Connect(ctxT(t))
	if err != nil {
		t.Fatal(err)
	}
	initialize(t, conn, 1)
	m, err := conn.Read(ctxT(t))
	if err != nil || m.ID != mcp.IntID(1) || !strings.Contains(string(m.Result), mcp.LatestProtocolVersion) {
		t.Fatalf("initialize answer %v, %v", m, err)
	}
	st := conn.(mcp.StatsReporter).Stats()
	if st.MessagesSent != 1 || st.MessagesReceived != 1 || st.BytesSent < 50 || st.BytesReceived != int64(len(mustJSON(m))+1) {
		t.Errorf("stats %+v", st)
	}
	// Close closes stdin: the server ends on its own, status 0.
	if err := conn.Close(); err != nil {
		t.Fatalf("close: %v", err)
	}
	if _, err := conn.Read(ctxT(t)); !errors.Is(err, stdio.ErrClosed) {
		t.Errorf("read after close: %v", err)
	}
	if !strings.Contains(stderr.String(), "helper: serving") {
		t.Errorf("stderr not passed on: %q", stderr.String())
	}
}

func mustJSON(m *mcp.Message) []byte {
	b, err := m.MarshalJSON()
	if err != nil {
		panic(err)
	}
	return b
}

func TestCommandTransportNonJSONLine(t *testing.T) {
	conn, err := helper("badline", io.Discard).Connect(ctxT(t))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	initialize(t, conn, 1)
	_, err = conn.Read(ctxT(t))
	var le *stdio.LineError
	if !errors.As(err, &le) || le.Line != "Listening on port 8080..." {
		t.Fatalf("read %v, want a LineError", err)
	}
	if want := `stdio: the server wrote a line that is not a JSON-RPC message: "Listening on port 8080..."`; !strings.HasPrefix(err.Error(), want) {
		t.Errorf("error %q", err)
	}
	// The next line is read as usual.
	if m, err := conn.Read(ctxT(t)); err != nil || m.ID != mcp.IntID(1) {
		t.Fatalf("read after the bad line: %v, %v", m, err)
	}
}

func TestCommandTransportChildExits(t *testing.T) {
	conn, err := helper("exit3", io.Discard).Connect(ctxT(t))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_, err = conn.Read(ctxT(t))
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 3 {
		t.Fatalf("read %v, want exit status 3", err)
	}
	for _, part := range []string{"exit status 3", `"helper: cannot open database"`} {
		if !strings.Contains(err.Error(), part) {
			t.Errorf("error %q lacks %q", err, part)
		}
	}
	// The same error again.
	if _, err2 := conn.Read(ctxT(t)); err2 == nil || err2.Error() != err.Error() {
		t.Errorf("second read: %v", err2)
	}
}

// Close waits GracePeriod on the transport's clock for a child that
// ignores its stdin's end, then kills it. The clock is simulated: the
// kill comes when the test moves time past the grace period, not before.
func TestCommandTransportKillsAfterGrace(t *testing.T) {
	clk := &madeClock{Sim: clock.NewSim(time.Unix(0, 0)), made: make(chan time.Duration, 8)}
	tr := helper("deaf", io.Discard)
	tr.GracePeriod = time.Minute
	tr.Clock = clk
	conn, err := tr.Connect(ctxT(t))
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- conn.Close() }()
	select {
	case d := <-clk.made:
		if d != time.Minute {
			t.Fatalf("Close waits %v, want the grace period", d)
		}
	case <-ctxT(t).Done():
		t.Fatal("Close made no grace timer")
	}
	clk.Advance(time.Minute - time.Nanosecond)
	select {
	case err := <-done:
		t.Fatalf("Close returned %v before the grace period passed", err)
	default:
	}
	clk.Advance(time.Nanosecond)
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("close: %v", err)
		}
	case <-ctxT(t).Done():
		t.Fatal("Close did not kill a child that ignores stdin's end")
	}
}

// madeClock is a simulated clock that reports every timer made on it.
type madeClock struct {
	*clock.Sim
	made chan time.Duration
}

func (c *madeClock) AfterFunc(d time.Duration, f func()) clock.Timer {
	tm := c.Sim.AfterFunc(d, f)
	c.made <- d
	return tm
}

func TestCommandTransportNoSuchCommand(t *testing.T) {
	_, err := (&stdio.CommandTransport{Command: "tasksim-no-such-server"}).Connect(ctxT(t))
	if err == nil || !strings.Contains(err.Error(), "stdio: start tasksim-no-such-server") {
		t.Fatalf("err %v", err)
	}
}

// IOTransport against an in-process Serve: requests and a streaming
// answer with several responses of one id. It runs in a synctest bubble
// (everything goes over io.Pipe): the server's immediate window and the
// tool's chunks are on virtual time, so the tool cannot finish inside the
// window however the goroutines are scheduled.
func TestIOTransport(t *testing.T) { synctest.Test(t, testIOTransport) }

func testIOTransport(t *testing.T) {
	fromServer, serverOut := io.Pipe()
	serverIn, toServer := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	srv := server.New(nil)
	defer srv.Close()
	served := make(chan error, 1)
	go func() {
		served <- stdio.Serve(ctx, srv, serverIn, serverOut, nil)
		serverOut.Close()
	}()
	conn, err := (&stdio.IOTransport{Reader: fromServer, Writer: toServer}).Connect(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	initialize(t, conn, 1)
	if m, err := conn.Read(t.Context()); err != nil || m.ID != mcp.IntID(1) {
		t.Fatalf("initialize: %v, %v", m, err)
	}
	call, _ := mcp.NewRequest(mcp.IntID(2), mcp.MethodToolsCall, mcp.CallToolParams{Name: server.ToolSlowText,
		Arguments: []byte(`{"chunks":3,"intervalMs":1}`), Task: &mcp.TaskParams{ResponseModes: []mcp.ResponseMode{mcp.ModeStreaming}}})
	if err := conn.Write(t.Context(), call); err != nil {
		t.Fatal(err)
	}
	responses := 0
	for {
		m, err := conn.Read(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		if m.Kind() != mcp.KindResponse {
			continue
		}
		responses++
		if m.ID != mcp.IntID(2) {
			t.Fatalf("response id %v", m.ID)
		}
		if strings.Contains(string(m.Result), `"isComplete":true`) {
			break
		}
	}
	if responses < 2 {
		t.Errorf("%d responses, want several with one id", responses)
	}
	conn.Close()
	<-served
}

// A write the server never takes is abandoned with ctx, and Close
// unblocks it. Over in-memory pipes it runs in a synctest bubble: the
// deadline passes in virtual time once the write is stuck.
func TestIOTransportWriteBlocked(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		fromServer, _ := io.Pipe()
		_, toServer := io.Pipe() // nobody reads
		conn, err := (&stdio.IOTransport{Reader: fromServer, Writer: toServer}).Connect(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(t.Context(), 20*time.Millisecond)
		defer cancel()
		req, _ := mcp.NewRequest(mcp.IntID(1), mcp.MethodPing, nil)
		start := time.Now()
		if err := conn.Write(ctx, req); !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("write: %v", err)
		}
		if d := time.Since(start); d != 20*time.Millisecond {
			t.Errorf("write gave up after %v, want the 20 ms deadline", d)
		}
		conn.Close()
		if err := conn.Write(t.Context(), req); !errors.Is(err, stdio.ErrClosed) {
			t.Errorf("write after close: %v", err)
		}
	})
}

func TestIOTransportServerEOF(t *testing.T) {
	conn, err := (&stdio.IOTransport{Reader: strings.NewReader(`{"jsonrpc":"2.0","method":"notifications/message","params":{}}` + "\n"), Writer: nopCloser{io.Discard}}).Connect(ctxT(t))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if m, err := conn.Read(ctxT(t)); err != nil || m.Method != "notifications/message" {
		t.Fatalf("read %v, %v", m, err)
	}
	if _, err := conn.Read(ctxT(t)); err == nil || err.Error() != "stdio: the server closed its output" {
		t.Errorf("read at EOF: %v", err)
	}
}

type nopCloser struct{ io.Writer }

func (nopCloser) Close() error { return nil }
