package refserver_test

import (
	"context"
	"errors"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/tasksim/tasksim/internal/cli"
	"github.com/tasksim/tasksim/internal/refserver"
	"github.com/tasksim/tasksim/mcp/client"
	"github.com/tasksim/tasksim/mcp/server"
	"github.com/tasksim/tasksim/mcp/streamhttp"
)

// beEnv makes the test binary, run as a child, play a part: "tasksim"
// runs the command line (so StartChild runs the real tasksim serve),
// "hang" waits forever, "fail" exits 1 with a line on stderr.
const beEnv = "TASKSIM_REFSERVER_TEST_BE"

func TestMain(m *testing.M) {
	switch os.Getenv(beEnv) {
	case "tasksim":
		st, stop := cli.OSState()
		code := cli.Main(st)
		stop()
		os.Exit(code)
	case "hang":
		// Alive and silent until killed (a bare select{} would die at
		// once of the runtime's deadlock check).
		time.Sleep(time.Hour)
		os.Exit(1)
	case "fail":
		os.Stderr.WriteString("listen tcp: address already in use\n")
		os.Exit(3)
	}
	os.Exit(m.Run())
}

func childEnv(part string) []string { return append(os.Environ(), beEnv+"="+part) }

// callSlowText checks the server at url is the reference server: a
// streaming call of slow_text returns its chunks.
func callSlowText(t *testing.T, url string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	sess, err := client.New(nil).Connect(ctx, &streamhttp.ClientTransport{URL: url})
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close()
	res, err := sess.CallTool(ctx, client.CallOptions{Name: server.ToolSlowText, Args: map[string]any{"chunks": 2, "chunkSize": 8, "intervalMs": 1}, Mode: client.ModeStreaming})
	if err != nil || !res.Complete || len(res.Content) != 2 {
		t.Fatalf("slow_text: %+v, %v", res, err)
	}
}

func TestListen(t *testing.T) {
	s, err := refserver.Listen(&refserver.Options{
		Server: &server.Options{MaxTasksPerSession: 3},
		HTTP:   &streamhttp.Options{Path: "/other"},
	})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(s.URL, "http://127.0.0.1:") || !strings.HasSuffix(s.URL, "/other") || !strings.HasSuffix(s.URL, s.Addr+"/other") {
		t.Errorf("URL %q, Addr %q", s.URL, s.Addr)
	}
	callSlowText(t, s.URL)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-s.Done():
	default:
		t.Fatal("Done not closed after Close")
	}
	if err := s.Err(); err != nil {
		t.Errorf("Err after Close = %v", err)
	}
	if err := s.Close(); err != nil {
		t.Errorf("second Close = %v", err)
	}
	if _, err := http.Post(s.URL, "application/json", strings.NewReader("{}")); err == nil {
		t.Error("the server still answers after Close")
	}
}

func TestListenBadAddr(t *testing.T) {
	if _, err := refserver.Listen(&refserver.Options{Addr: "256.1.1.1:1"}); err == nil || !strings.Contains(err.Error(), "listen on 256.1.1.1:1") {
		t.Fatalf("Listen on a bad address = %v", err)
	}
}

func TestStart(t *testing.T) {
	url, srv := refserver.Start(t, nil)
	if srv == nil {
		t.Fatal("no server")
	}
	callSlowText(t, url)
}

// TestStartChild runs the real tasksim serve (this test binary playing
// tasksim) and waits for its ready line.
func TestStartChild(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	var log strings.Builder
	c, err := refserver.StartChild(t.Context(), exe, &refserver.ChildOptions{
		Args:   []string{"--log-level", "info", "--max-tasks-per-session", "5"},
		Env:    childEnv("tasksim"),
		Stderr: &log,
	})
	if err != nil {
		t.Fatal(err)
	}
	if c.Pid <= 0 || !strings.HasPrefix(c.URL, "http://127.0.0.1:") || !strings.HasSuffix(c.URL, "/mcp") {
		t.Errorf("pid %d, URL %q", c.Pid, c.URL)
	}
	callSlowText(t, c.URL)
	c.Stop()
	c.Stop()
	ps := c.ProcessState()
	if ps == nil || ps.ExitCode() != 0 {
		t.Errorf("after Stop: %v, want exit 0 (tasksim serve ends cleanly on an interrupt)", ps)
	}
	// The log is read to its end before the child is waited for.
	if !strings.Contains(log.String(), "msg=serving url="+c.URL) {
		t.Errorf("child log:\n%s", log.String())
	}
}

func TestStartChildFails(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	t.Run("cannot listen", func(t *testing.T) {
		_, err := refserver.StartChild(t.Context(), exe, &refserver.ChildOptions{Args: []string{"--addr", "256.1.1.1:1", "--allow-remote"}, Env: childEnv("tasksim")})
		if err == nil || !strings.Contains(err.Error(), "exited before listening (exit status 3)") || !strings.Contains(err.Error(), "listen on 256.1.1.1:1") {
			t.Errorf("err = %v", err)
		}
	})
	t.Run("exits without a word on the pipe", func(t *testing.T) {
		_, err := refserver.StartChild(t.Context(), exe, &refserver.ChildOptions{Env: childEnv("fail")})
		if err == nil || !strings.Contains(err.Error(), "exited before listening (exit status 3): listen tcp: address already in use") {
			t.Errorf("err = %v", err)
		}
	})
	t.Run("start abandoned", func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		cancel()
		_, err := refserver.StartChild(ctx, exe, &refserver.ChildOptions{Env: childEnv("hang")})
		if !errors.Is(err, context.Canceled) {
			t.Errorf("err = %v, want context.Canceled", err)
		}
	})
	t.Run("no such program", func(t *testing.T) {
		_, err := refserver.StartChild(t.Context(), "/nonexistent/tasksim", nil)
		if err == nil || !strings.Contains(err.Error(), "start the reference server (/nonexistent/tasksim serve)") {
			t.Errorf("err = %v", err)
		}
	})
}

func TestServeStdio(t *testing.T) {
	in := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}
{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"instant","arguments":{"text":"hi"}}}
`
	var out strings.Builder
	if err := refserver.ServeStdio(t.Context(), &server.Options{Version: "v-test"}, strings.NewReader(in), &out, nil); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 2 || !strings.Contains(lines[0], `"version":"v-test"`) || !strings.Contains(lines[1], `"text":"hi"`) {
		t.Errorf("output:\n%s", out.String())
	}
}
