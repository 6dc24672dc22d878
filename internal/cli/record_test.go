package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tasksim/tasksim/internal/refserver"
	"github.com/tasksim/tasksim/mcp/client"
	"github.com/tasksim/tasksim/mcp/server"
	"github.com/tasksim/tasksim/mcp/stdio"
	"github.com/tasksim/tasksim/mcp/streamhttp"
	"github.com/tasksim/tasksim/traces"
)

// helperArgsEnv, when set in a re-executed test binary, makes it run the
// tasksim CLI with these arguments (a JSON array) and exit: a tasksim
// binary without building one.
const helperArgsEnv = "TASKSIM_CLI_HELPER_ARGS"

// TestRecordHelperProcess is not a test: it is the child process of the
// stdio recording tests.
func TestRecordHelperProcess(t *testing.T) {
	raw := os.Getenv(helperArgsEnv)
	if raw == "" {
		t.Skip("helper process only")
	}
	var args []string
	if err := json.Unmarshal([]byte(raw), &args); err != nil {
		os.Exit(99)
	}
	if len(args) == 2 && args[0] == "exit-with" {
		n, _ := strconv.Atoi(args[1])
		fmt.Fprintln(os.Stderr, "helper exits with", n)
		os.Exit(n)
	}
	st, stop := OSState()
	st.Args = args
	code := Main(st)
	stop()
	os.Exit(code)
}

// helperCommand returns the arguments that run this test binary as
// `tasksim ARGS...`, with the environment set for the test's duration.
func helperCommand(t *testing.T, args ...string) []string {
	raw, _ := json.Marshal(args)
	t.Setenv(helperArgsEnv, string(raw))
	return []string{os.Args[0], "-test.run=^TestRecordHelperProcess$"}
}

// syncBuffer is a bytes.Buffer safe for concurrent use.
type syncBuffer struct {
	mu      sync.Mutex
	b       bytes.Buffer
	written chan struct{} // closed and replaced on every write
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.written != nil {
		close(s.written)
		s.written = nil
	}
	return s.b.Write(p)
}

// await returns pat's first group in the buffer once a write makes it
// match. It fails the test if done delivers first (the command ended); a
// command that neither writes it nor ends is go test's -timeout's.
func (s *syncBuffer) await(t *testing.T, pat *regexp.Regexp, done <-chan int) string {
	t.Helper()
	for {
		s.mu.Lock()
		m := pat.FindStringSubmatch(s.b.String())
		if s.written == nil {
			s.written = make(chan struct{})
		}
		written := s.written
		s.mu.Unlock()
		if m != nil {
			return m[1]
		}
		select {
		case <-written:
		case code := <-done:
			t.Fatalf("the command exited (%d) before writing %v: %q", code, pat, s.String())
		}
	}
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func readTraceFile(t *testing.T, path string) (traces.Header, []traces.Record) {
	t.Helper()
	r, err := traces.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var recs []traces.Record
	for rec, err := range r.Records() {
		if err != nil {
			t.Fatal(err)
		}
		recs = append(recs, rec)
	}
	return r.Header(), recs
}

func TestRecordBadInput(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "t.trace")
	cases := []struct {
		name string
		args []string
		code int
		want string
	}{
		{"no output", []string{"record", "--upstream", "http://127.0.0.1:1/mcp"}, ExitUsage, "-o FILE is required"},
		{"no mode", []string{"record", "-o", out}, ExitUsage, "give --upstream URL"},
		{"both modes", []string{"record", "-o", out, "--upstream", "http://127.0.0.1:1/mcp", "--", "cat"}, ExitUsage, "not both"},
		{"bad upstream", []string{"record", "-o", out, "--upstream", "ftp://example.com/mcp"}, ExitUsage, "--upstream"},
		{"upstream without host", []string{"record", "-o", out, "--upstream", "http:///mcp"}, ExitUsage, "--upstream"},
		{"unwritable output", []string{"record", "-o", filepath.Join(dir, "missing", "t.trace"), "--upstream", "http://127.0.0.1:1/mcp", "--listen", "127.0.0.1:0"}, ExitUsage, "cannot write the trace"},
		{"listen failure", []string{"record", "-o", out, "--upstream", "http://127.0.0.1:1/mcp", "--listen", "127.0.0.1:99999"}, ExitRuntime, "listen on"},
		{"command not found", []string{"record", "-o", out, "--", filepath.Join(dir, "no-such-server")}, ExitUsage, "no-such-server"},
		{"argument before --", []string{"record", "-o", out, "stray", "--", "cat"}, ExitUsage, "after --"},
		{"bad pattern", []string{"record", "-o", out, "--redact-regexp", "(", "--", "cat"}, ExitUsage, "redaction"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			code, _, stderr := run(t, "", tc.args...)
			if code != tc.code {
				t.Errorf("exit code %d, want %d (stderr %q)", code, tc.code, stderr)
			}
			if strings.Count(stderr, "\n") != 1 || !strings.HasPrefix(stderr, "tasksim: ") || !strings.Contains(stderr, tc.want) {
				t.Errorf("stderr %q: want one line mentioning %q", stderr, tc.want)
			}
		})
	}
}

var recordingURL = regexp.MustCompile(`msg=recording url=(http://\S+)`)

// TestRecordHTTP runs `tasksim record --upstream` in-process between the
// reference client and server, stops it as SIGINT would, and reads the
// trace.
func TestRecordHTTP(t *testing.T) {
	upstream := refserver.StartHTTP(t, &refserver.Options{HTTP: &streamhttp.Options{Logger: slog.New(slog.DiscardHandler)}})

	out := filepath.Join(t.TempDir(), "http.trace")
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	var stderr syncBuffer
	st := &State{
		Stdin: strings.NewReader(""), Stdout: io.Discard, Stderr: &stderr, Getenv: func(string) string { return "" }, Context: ctx,
		Args: []string{"record", "--upstream", upstream.URL, "--listen", "127.0.0.1:0", "-o", out, "--redact-header", "X-Api-Key"},
	}
	done := make(chan int, 1)
	go func() { done <- Main(st) }()
	// The recorder logs its URL once it listens.
	proxyURL := stderr.await(t, recordingURL, done)
	if !strings.HasSuffix(proxyURL, "/mcp") {
		t.Fatalf("no recording URL ending in /mcp on stderr: %q", stderr.String())
	}

	cctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	tr := &streamhttp.ClientTransport{URL: proxyURL, Header: http.Header{"X-Api-Key": {"hunter2"}}}
	sess, err := client.New(nil).Connect(cctx, tr)
	if err != nil {
		t.Fatal(err)
	}
	res, err := sess.CallTool(cctx, client.CallOptions{Name: server.ToolSlowText, Args: map[string]any{"chunks": 3, "intervalMs": 5}, Mode: client.ModeStreaming})
	if err != nil || !res.Complete {
		t.Fatalf("call through the recorder: %v", err)
	}
	sess.Close()
	stop() // SIGINT
	if code := <-done; code != ExitOK {
		t.Fatalf("exit code %d, stderr %q", code, stderr.String())
	}

	hdr, recs := readTraceFile(t, out)
	if len(hdr.Command) < 2 || hdr.Command[1] != "record" {
		t.Errorf("trace header command %q", hdr.Command)
	}
	kinds := map[traces.Kind]int{}
	var calls int
	for _, r := range recs {
		kinds[r.Kind]++
		if r.RPC != nil && r.RPC.Method == "tools/call" {
			calls++
		}
		if r.HTTP != nil {
			for _, f := range r.HTTP.Header {
				if strings.Contains(f.Value, "hunter2") {
					t.Errorf("record %d keeps the secret header value: %+v", r.Index, f)
				}
			}
		}
	}
	for _, k := range []traces.Kind{traces.KindConnOpen, traces.KindRequestHead, traces.KindResponseHead, traces.KindMessage, traces.KindSSEEvent, traces.KindBodyEnd, traces.KindConnClose} {
		if kinds[k] == 0 {
			t.Errorf("no %s record (have %v)", k, kinds)
		}
	}
	if calls != 1 {
		t.Errorf("%d tools/call messages recorded, want 1", calls)
	}
	if !strings.Contains(stderr.String(), "msg=recorded") {
		t.Errorf("stderr %q: want a closing line", stderr.String())
	}
}

// TestRecordStdio records the reference client driving `tasksim serve
// --stdio` through `tasksim record -o FILE -- CMD`, in-process.
func TestRecordStdio(t *testing.T) {
	out := filepath.Join(t.TempDir(), "stdio.trace")
	args := append([]string{"record", "-o", out, "--"}, helperCommand(t, "serve", "--stdio", "--log-level", "error")...)
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	var stderr syncBuffer
	st := &State{Stdin: inR, Stdout: outW, Stderr: &stderr, Args: args, Getenv: func(string) string { return "" }, Context: context.Background()}
	done := make(chan int, 1)
	go func() {
		code := Main(st)
		outW.Close()
		done <- code
	}()

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	sess, err := client.New(nil).Connect(ctx, &stdio.IOTransport{Reader: outR, Writer: inW})
	if err != nil {
		t.Fatalf("connect: %v (stderr %q)", err, stderr.String())
	}
	res, err := sess.CallTool(ctx, client.CallOptions{Name: server.ToolSlowText, Args: map[string]any{"chunks": 3, "intervalMs": 5}, Mode: client.ModePoll, PollInterval: 10 * time.Millisecond})
	if err != nil || !res.Complete {
		t.Fatalf("call: %v", err)
	}
	sess.Close() // the server's stdin closes, it exits 0
	if code := <-done; code != ExitOK {
		t.Fatalf("exit code %d, stderr %q", code, stderr.String())
	}

	_, recs := readTraceFile(t, out)
	dirs := map[string]int{}
	for _, r := range recs {
		if r.Kind == traces.KindStdioLine && r.RPC != nil {
			dirs[r.Stream+" "+r.Dir.String()+" "+r.RPC.Method]++
		}
	}
	for _, want := range []string{"stdin c>s initialize", "stdout s>c ", "stdin c>s tools/call", "stdin c>s tasks/get", "stdin c>s tasks/result"} {
		if dirs[want] == 0 {
			t.Errorf("no %q line recorded (have %v)", want, dirs)
		}
	}
	if last := recs[len(recs)-1]; last.Kind != traces.KindConnClose || last.Note != "exit status 0" {
		t.Errorf("last record %s %q", last.Kind, last.Note)
	}
}

// TestRecordStdioExitCode: the server's exit code is tasksim's, and
// tasksim adds nothing to stderr.
func TestRecordStdioExitCode(t *testing.T) {
	out := filepath.Join(t.TempDir(), "exit.trace")
	args := append([]string{"record", "-o", out, "--"}, helperCommand(t, "exit-with", "5")...)
	code, _, stderr := run(t, "", args...)
	if code != 5 {
		t.Errorf("exit code %d, want 5", code)
	}
	if stderr != "helper exits with 5\n" {
		t.Errorf("stderr %q: want the server's own line only", stderr)
	}
	_, recs := readTraceFile(t, out)
	if last := recs[len(recs)-1]; last.Kind != traces.KindConnError || last.Note != "exit status 5" {
		t.Errorf("last record %s %q", last.Kind, last.Note)
	}
}
