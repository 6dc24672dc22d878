package cli

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/tasksim/tasksim/internal/refserver"
	"github.com/tasksim/tasksim/mcp/server"
)

func referenceServer(t *testing.T) string {
	t.Helper()
	url, _ := refserver.Start(t, nil)
	return url
}

func TestCallModes(t *testing.T) {
	url := referenceServer(t)
	for _, mode := range []string{"plain", "immediate", "streaming", "task", "poll", "partial"} {
		t.Run(mode, func(t *testing.T) {
			code, stdout, stderr := run(t, "", "call", "--server", url, "--tool", "slow_text",
				"--args", `{"chunks":3,"chunkSize":10,"intervalMs":5}`, "--mode", mode, "--poll-interval", "10ms")
			if code != ExitOK {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			want := server.ChunkText(1, 10) + server.ChunkText(2, 10) + server.ChunkText(3, 10)
			if strings.TrimSpace(stdout) != want {
				t.Errorf("stdout %q, want %q", stdout, want)
			}
			if mode != "plain" && !strings.Contains(stderr, " completed · mode "+mode) {
				t.Errorf("summary line %q", stderr)
			}
		})
	}
}

func TestCallJSON(t *testing.T) {
	url := referenceServer(t)
	code, stdout, stderr := run(t, "", "call", "--server", url, "--tool", "slow_text",
		"--args", `{"chunks":2,"intervalMs":5}`, "--mode", "streaming", "--json")
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var got struct {
		Result struct {
			Complete bool `json:"complete"`
			Content  []struct {
				Text string `json:"text"`
			} `json:"content"`
		} `json:"result"`
		Answer   string `json:"answer"`
		Segments int    `json:"segments"`
		Timeline []struct {
			Kind  string `json:"kind"`
			SeqNr int64  `json:"seqNr"`
		} `json:"timeline"`
	}
	if err := json.Unmarshal([]byte(stdout), &got); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, stdout)
	}
	if !got.Result.Complete || len(got.Result.Content) != 2 || got.Answer != "streaming" || got.Segments != 2 {
		t.Errorf("result %+v answer %s segments %d", got.Result, got.Answer, got.Segments)
	}
	var segs []int64
	for _, e := range got.Timeline {
		if e.Kind == "segment" {
			segs = append(segs, e.SeqNr)
		}
	}
	if len(segs) != 2 || segs[0] != 1 || segs[1] != 2 {
		t.Errorf("timeline segments %v", segs)
	}
}

func TestCallCancelAfter(t *testing.T) {
	url := referenceServer(t)
	code, _, stderr := run(t, "", "call", "--server", url, "--tool", "sleep", "--args", `{"durationMs":60000}`, "--mode", "task", "--cancel-after", "50ms")
	if code != ExitOK || !strings.Contains(stderr, "cancelled") {
		t.Errorf("exit %d, stderr %q: want 0 and a cancelled task", code, stderr)
	}
}

func TestCallBadInput(t *testing.T) {
	url := referenceServer(t)
	notMCP := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		w.Write([]byte("<html>hello</html>"))
	}))
	defer notMCP.Close()
	silent := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// Read the request as a server does (only then does net/http
		// notice the client hanging up), then never answer.
		_, _ = io.Copy(io.Discard, r.Body)
		<-r.Context().Done()
	}))
	defer silent.Close()
	cases := []struct {
		name string
		args []string
		code int
		want string
	}{
		{"no tool", []string{"call", "--server", url}, ExitUsage, "--tool is required"},
		{"no server", []string{"call", "--tool", "x"}, ExitUsage, "--server"},
		{"both servers", []string{"call", "--server", url, "--server-cmd", "x", "--tool", "x"}, ExitUsage, "not both"},
		{"bad url", []string{"call", "--server", "127.0.0.1:1", "--tool", "x"}, ExitUsage, "http://"},
		{"args not JSON", []string{"call", "--server", url, "--tool", "echo", "--args", "{nope"}, ExitUsage, "not a JSON object"},
		{"args not an object", []string{"call", "--server", url, "--tool", "echo", "--args", "[1]"}, ExitUsage, "not a JSON object"},
		{"bad mode", []string{"call", "--server", url, "--tool", "echo", "--mode", "warp"}, ExitUsage, "unknown call mode"},
		{"bad quoting", []string{"call", "--server-cmd", "sh -c 'x", "--tool", "echo"}, ExitUsage, "quote"},
		{"unknown tool", []string{"call", "--server", url, "--tool", "nope", "--mode", "plain"}, ExitUsage, "Unknown tool"},
		{"task for a forbidden tool", []string{"call", "--server", url, "--tool", "echo", "--mode", "task"}, ExitUsage, "does not support"},
		{"unreachable", []string{"call", "--server", "http://127.0.0.1:1/mcp", "--tool", "x"}, ExitRuntime, "connect"},
		{"not MCP", []string{"call", "--server", notMCP.URL, "--tool", "x"}, ExitRuntime, "connect"},
		{"never answers", []string{"call", "--server", silent.URL, "--tool", "x", "--timeout", "300ms"}, ExitRuntime, "within 300ms"},
		{"missing command", []string{"call", "--server-cmd", "/nonexistent/server", "--tool", "x"}, ExitRuntime, "connect"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			code, _, stderr := run(t, "", tc.args...)
			if code != tc.code {
				t.Errorf("exit %d, want %d; stderr %q", code, tc.code, stderr)
			}
			if strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, tc.want) {
				t.Errorf("stderr %q: want one line mentioning %q", stderr, tc.want)
			}
		})
	}
}
