package recorder_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tasksim/tasksim/internal/leaktest"
	"github.com/tasksim/tasksim/mcp/client"
	"github.com/tasksim/tasksim/mcp/server"
	"github.com/tasksim/tasksim/mcp/stdio"
	"github.com/tasksim/tasksim/recorder"
	"github.com/tasksim/tasksim/traces"
)

// helperEnv makes the test binary act as a child process.
const helperEnv = "RECORDER_TEST_HELPER"

func TestMain(m *testing.M) {
	switch os.Getenv(helperEnv) {
	case "":
		// Fail the tests if any goroutine outlives them.
		leaktest.Main(m)
	case "serve":
		// The reference server over stdio, as `tasksim serve --stdio`.
		srv := server.New(nil)
		err := stdio.Serve(context.Background(), srv, os.Stdin, os.Stdout, &stdio.ServerOptions{Logger: slog.New(slog.NewTextHandler(os.Stderr, nil))})
		srv.Close()
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	case "exit7":
		fmt.Println(`{"jsonrpc":"2.0","method":"notifications/message","params":{}}`)
		fmt.Fprintln(os.Stderr, "failing on purpose")
		fmt.Print("no newline")
		os.Exit(7)
	case "proxy":
		runProxyChild() // kill_test.go
	case "hang":
		fmt.Println("ready")
		time.Sleep(time.Hour)
	}
}

// helperCmd returns a command running this test binary as helper kind.
func helperCmd(t *testing.T, kind string) *exec.Cmd {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe)
	cmd.Env = append(os.Environ(), helperEnv+"="+kind)
	return cmd
}

// byteLog is a concurrency-safe byte buffer.
type byteLog struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *byteLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *byteLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// teeWriteCloser copies what is written to w into log.
type teeWriteCloser struct {
	w   io.WriteCloser
	log *byteLog
}

func (t teeWriteCloser) Write(p []byte) (int, error) {
	t.log.Write(p)
	return t.w.Write(p)
}

func (t teeWriteCloser) Close() error { return t.w.Close() }

func createTrace(t *testing.T) (*traces.Writer, string) {
	path := filepath.Join(t.TempDir(), "stdio.trace")
	w, err := traces.Create(path, traces.Header{Command: []string{"test"}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return w, path
}

// TestStdioReferencePair records the reference client driving the
// reference server over stdio through RunStdio.
func TestStdioReferencePair(t *testing.T) {
	w, path := createTrace(t)
	inR, inW := io.Pipe()   // client -> recorder's stdin
	outR, outW := io.Pipe() // recorder's stdout -> client
	var sent, received, stderr byteLog
	type result struct {
		code int
		err  error
	}
	done := make(chan result, 1)
	go func() {
		code, err := recorder.RunStdio(context.Background(), helperCmd(t, "serve"), inR, io.MultiWriter(outW, &received), &stderr, w)
		outW.Close()
		done <- result{code, err}
	}()

	ctx := testContext(t)
	sess, err := client.New(nil).Connect(ctx, &stdio.IOTransport{Reader: outR, Writer: teeWriteCloser{inW, &sent}})
	if err != nil {
		t.Fatal(err)
	}
	for _, mode := range []client.Mode{client.ModePoll, client.ModeStreaming, client.ModePartial} {
		res, err := sess.CallTool(ctx, client.CallOptions{Name: server.ToolSlowText, Args: map[string]any{"chunks": 3, "intervalMs": 5}, Mode: mode, PollInterval: 10 * time.Millisecond})
		if err != nil || !res.Complete {
			t.Fatalf("%s call: %v", mode, err)
		}
	}
	sess.Close() // closes the server's stdin: it exits
	res := <-done
	if res.err != nil || res.code != 0 {
		t.Fatalf("RunStdio = %d, %v", res.code, res.err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}

	recs := readTrace(t, path)
	var in, out bytes.Buffer
	methods := map[string]bool{}
	for _, r := range recs {
		if r.Kind != traces.KindStdioLine {
			continue
		}
		switch r.Stream {
		case "stdin":
			in.Write(r.Raw)
			in.WriteByte('\n')
			if r.Dir != traces.DirClientToServer {
				t.Errorf("stdin line %d: dir %v", r.Index, r.Dir)
			}
		case "stdout":
			out.Write(r.Raw)
			out.WriteByte('\n')
			if r.Dir != traces.DirServerToClient {
				t.Errorf("stdout line %d: dir %v", r.Index, r.Dir)
			}
		default:
			continue
		}
		if r.RPC == nil {
			t.Errorf("line %d on %s has no RPC fields: %s", r.Index, r.Stream, r.Raw)
			continue
		}
		methods[r.RPC.Method] = true
	}
	if in.String() != sent.String() {
		t.Errorf("stdin lines recorded:\n%s\nsent:\n%s", in.String(), sent.String())
	}
	if out.String() != received.String() {
		t.Errorf("stdout lines recorded:\n%s\nreceived:\n%s", out.String(), received.String())
	}
	for _, m := range []string{"initialize", "tools/call", "tasks/get", "tasks/result", "notifications/tasks/status"} {
		if !methods[m] {
			t.Errorf("no %s message recorded (have %v)", m, methods)
		}
	}
	first, last := recs[0], recs[len(recs)-1]
	if first.Kind != traces.KindConnOpen || last.Kind != traces.KindConnClose || last.Note != "exit status 0" {
		t.Errorf("first record %s %q, last %s %q", first.Kind, first.Note, last.Kind, last.Note)
	}
}

// TestStdioExitCode: the child's exit code comes back, stderr passes
// through and is recorded, a last line without newline is recorded.
func TestStdioExitCode(t *testing.T) {
	w, path := createTrace(t)
	var stdout, stderr byteLog
	code, err := recorder.RunStdio(context.Background(), helperCmd(t, "exit7"), strings.NewReader(""), &stdout, &stderr, w)
	if err != nil || code != 7 {
		t.Fatalf("RunStdio = %d, %v; want 7, nil", code, err)
	}
	w.Close()
	if !strings.Contains(stderr.String(), "failing on purpose") || !strings.HasSuffix(stdout.String(), "no newline") {
		t.Errorf("stdout %q, stderr %q", stdout.String(), stderr.String())
	}
	// stdout, stderr and stdin are separate pipes: compare each stream's
	// records in order, and the end.
	byStream := map[string][]string{}
	recs := readTrace(t, path)
	for _, r := range recs[1 : len(recs)-1] {
		byStream[r.Stream] = append(byStream[r.Stream], fmt.Sprintf("%s %s %q %s", r.Kind, r.Dir, r.Raw, r.Note))
	}
	byStream["end"] = []string{fmt.Sprintf("%s %q", recs[len(recs)-1].Kind, recs[len(recs)-1].Note)}
	want := map[string][]string{
		"stdout": {
			`stdio-line s>c "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{}}" `,
			`stdio-line s>c "no newline" no newline at the end`,
		},
		"stderr": {`stdio-line - "failing on purpose" `},
		"stdin":  {`annotation c>s "" stdin closed`},
		"end":    {`conn-error "exit status 7"`},
	}
	if fmt.Sprint(byStream) != fmt.Sprint(want) {
		t.Errorf("records by stream:\n%q\nwant\n%q", byStream, want)
	}
}

// TestStdioStop: ending the context stops the child with SIGTERM.
func TestStdioStop(t *testing.T) {
	w, path := createTrace(t)
	ctx, cancel := context.WithCancel(context.Background())
	stdinR, stdinW := io.Pipe() // never closed before the end: a terminal
	defer stdinW.Close()
	ready := make(chan struct{})
	out := writerFunc(func(p []byte) (int, error) {
		if bytes.Contains(p, []byte("ready")) {
			close(ready)
		}
		return len(p), nil
	})
	go func() {
		<-ready
		cancel()
	}()
	code, err := recorder.RunStdio(ctx, helperCmd(t, "hang"), stdinR, out, io.Discard, w)
	if err != nil || code != 128+15 {
		t.Fatalf("RunStdio = %d, %v; want 143 (SIGTERM)", code, err)
	}
	w.Close()
	recs := readTrace(t, path)
	last := recs[len(recs)-1]
	if last.Kind != traces.KindConnError || !strings.Contains(last.Note, "terminated") || last.End != traces.EndStopped {
		t.Errorf("last record %s %q", last.Kind, last.Note)
	}
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }

// TestStdioPipeline: records others add to the pipeline while the child
// runs land in order with the child's.
func TestStdioPipeline(t *testing.T) {
	w, path := createTrace(t)
	p := recorder.NewPipeline(w, nil)
	ctx, cancel := context.WithCancel(context.Background())
	stdinR, stdinW := io.Pipe()
	defer stdinW.Close()
	once := sync.Once{}
	out := writerFunc(func(b []byte) (int, error) {
		if bytes.Contains(b, []byte("ready")) {
			once.Do(func() {
				p.Annotate("the child is ready")
				cancel()
			})
		}
		return len(b), nil
	})
	p.Annotate("before the child")
	if _, err := recorder.RunStdioPipeline(ctx, helperCmd(t, "hang"), stdinR, out, io.Discard, p); err != nil {
		t.Fatal(err)
	}
	p.Annotate("after the child")
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	w.Close()
	var got []string
	for _, r := range readTrace(t, path) {
		if r.Kind != traces.KindStdioLine {
			got = append(got, r.Kind.String()+" "+r.Note)
		}
	}
	// The child may print before its conn-open is added: the two middle
	// records come in either order.
	if len(got) == 5 && strings.HasPrefix(got[2], "conn-open") {
		got[1], got[2] = got[2], got[1]
	}
	if len(got) != 5 || got[0] != "annotation before the child" || !strings.HasPrefix(got[1], "conn-open child pid") ||
		got[2] != "annotation the child is ready" || !strings.HasPrefix(got[3], "conn-error") || got[4] != "annotation after the child" {
		t.Errorf("records:\n%s", strings.Join(got, "\n"))
	}
}
