package cli

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
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

// serveReady runs tasksim serve in-process on a free port and returns its
// URL from --ready-fd, and stop.
func serveReady(t *testing.T, args ...string) (url string, stop func() int, stderr *syncBuffer) {
	t.Helper()
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
	stop, stderr = serveInProcess(t, append([]string{"--addr", "127.0.0.1:0", "--ready-fd", strconv.Itoa(fd)}, args...)...)
	rest, err := io.ReadAll(r) // ends once the descriptor is closed
	if err != nil {
		t.Fatal(err)
	}
	url, found := strings.CutSuffix(string(rest), "\n")
	if !found || strings.Contains(url, "\n") || !strings.HasPrefix(url, "http://127.0.0.1:") || !strings.HasSuffix(url, "/mcp") {
		t.Fatalf("ready pipe carried %q: want one line with the URL; stderr %q", rest, stderr.String())
	}
	return url, stop, stderr
}

// TestServeReadyFD: --ready-fd writes the endpoint URL and a newline once
// the server listens, then closes the descriptor.
func TestServeReadyFD(t *testing.T) {
	url, stop, stderr := serveReady(t, "--log-level", "error")
	sess, err := client.New(nil).Connect(t.Context(), &streamhttp.ClientTransport{URL: url})
	if err != nil {
		t.Fatalf("connect to the URL on the ready pipe: %v", err)
	}
	sess.Close()
	if code := stop(); code != ExitOK {
		t.Fatalf("exit %d, stderr %q", code, stderr.String())
	}
}

// TestServeRetry: --retry sets the retry field of each stream's priming
// event; 0 sends none, as its help says.
func TestServeRetry(t *testing.T) {
	cases := []struct {
		name, flag string
		want       string // the priming event
	}{
		{"default", "", "id: 0_0_1\nretry: 1000\ndata:\n\n"},
		{"2s", "2s", "id: 0_0_1\nretry: 2000\ndata:\n\n"},
		{"0 is none", "0", "id: 0_0_1\ndata:\n\n"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			args := []string{"--log-level", "error"}
			if tc.flag != "" {
				args = append(args, "--retry", tc.flag)
			}
			url, _, _ := serveReady(t, args...)
			if got := primingEvent(t, url); got != tc.want {
				t.Errorf("priming event %q, want %q", got, tc.want)
			}
		})
	}
}

// primingEvent opens a session at url and returns the first event of its
// standalone GET stream, as sent.
func primingEvent(t *testing.T, url string) string {
	t.Helper()
	post := func(sid, body string) *http.Response {
		req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, url, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if sid != "" {
			req.Header.Set("Mcp-Session-Id", sid)
			req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode/100 != 2 {
			t.Fatalf("POST %s: %s", body, resp.Status)
		}
		return resp
	}
	sid := post("", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`).Header.Get("Mcp-Session-Id")
	post(sid, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Mcp-Session-Id", sid)
	req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET: %s", resp.Status)
	}
	br := bufio.NewReader(resp.Body)
	var ev strings.Builder
	for !strings.HasSuffix(ev.String(), "\n\n") {
		line, err := br.ReadString('\n')
		ev.WriteString(line)
		if err != nil {
			t.Fatalf("GET stream ended after %q: %v", ev.String(), err)
		}
	}
	return ev.String()
}

// TestServeCPUProfile: --cpuprofile writes a Go CPU profile once the server
// stops; "-" is refused (a profile is binary).
func TestServeCPUProfile(t *testing.T) {
	cpu := filepath.Join(t.TempDir(), "serve.cpu")
	url, stop, stderr := serveReady(t, "--log-level", "error", "--cpuprofile", cpu)
	sess, err := client.New(nil).Connect(t.Context(), &streamhttp.ClientTransport{URL: url})
	if err != nil {
		t.Fatal(err)
	}
	sess.Close()
	if code := stop(); code != ExitOK {
		t.Fatalf("exit %d, stderr %q", code, stderr.String())
	}
	b := gunzip(t, cpu)
	for _, w := range []string{"samples", "cpu", "nanoseconds"} {
		if !bytes.Contains(b, []byte(w)) {
			t.Errorf("the profile lacks %q", w)
		}
	}
	code, _, errOut := run(t, "", "serve", "--cpuprofile", "-")
	if code != ExitUsage || !strings.Contains(errOut, "--cpuprofile: give a file") {
		t.Errorf("--cpuprofile -: exit %d, stderr %q; want %d and the reason", code, errOut, ExitUsage)
	}
}
