package cli

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/tasksim/tasksim/internal/refserver"
	"github.com/tasksim/tasksim/mcp/streamhttp"
)

// headerSpy serves the reference server and keeps the values of the
// headers named that reached it.
type headerSpy struct {
	mu   sync.Mutex
	seen map[string]map[string]bool
}

func (s *headerSpy) saw(name, value string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.seen[name][value]
}

func spyServer(t *testing.T, names ...string) (*headerSpy, string) {
	t.Helper()
	u, err := url.Parse(referenceServer(t))
	if err != nil {
		t.Fatal(err)
	}
	spy := &headerSpy{seen: map[string]map[string]bool{}}
	rp := httputil.NewSingleHostReverseProxy(&url.URL{Scheme: u.Scheme, Host: u.Host})
	rp.FlushInterval = -1
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		spy.mu.Lock()
		for _, n := range names {
			for _, v := range r.Header.Values(n) {
				if spy.seen[n] == nil {
					spy.seen[n] = map[string]bool{}
				}
				spy.seen[n][v] = true
			}
		}
		spy.mu.Unlock()
		rp.ServeHTTP(w, r)
	}))
	t.Cleanup(s.Close)
	return spy, s.URL + u.Path
}

// TestHeaders: --header and --bearer-token-env reach the server on every
// command that talks to one, and their values are never printed.
func TestHeaders(t *testing.T) {
	const token, team = "s3cret-token", "team-secret"
	for _, tc := range []struct {
		name string
		args []string
	}{
		{"call", []string{"call", "--tool", "sleep", "--args", `{"durationMs":5}`, "--mode", "task"}},
		{"call streaming", []string{"call", "--tool", "slow_text", "--args", `{"chunks":2,"intervalMs":5}`, "--mode", "streaming"}},
		{"load", []string{"load", "--mode", "sse,poll:20ms", "--rate", "40", "--tasks", "2", "--max-lag", "1h", "--task-duration", "20ms"}},
		{"demo", []string{"demo", "--duration", "1s", "--rate", "2", "--html", ""}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			spy, srv := spyServer(t, "Authorization", "X-Team")
			var out, errb strings.Builder
			st := &State{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb, Context: t.Context(),
				Getenv: func(k string) string {
					if k == "MY_TOKEN" {
						return token
					}
					return ""
				},
				Args: append(tc.args, "--server", srv, "--bearer-token-env", "MY_TOKEN", "--header", "X-Team: "+team)}
			if code := Main(st); code != ExitOK {
				t.Fatalf("exit %d\n%s\n%s", code, out.String(), errb.String())
			}
			if !spy.saw("Authorization", "Bearer "+token) || !spy.saw("X-Team", team) {
				t.Errorf("the server did not see the headers: %v", spy.seen)
			}
			if all := out.String() + errb.String(); strings.Contains(all, token) || strings.Contains(all, team) {
				t.Errorf("a header value was printed:\n%s", all)
			}
		})
	}
}

func TestHeadersBadInput(t *testing.T) {
	url := referenceServer(t)
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"no colon", []string{"--header", "Authorization Bearer s3cret"}, `--header #1: want "Name: value"`},
		{"bad name", []string{"--header", "Bad Name: s3cret"}, "not a valid header name"},
		{"unset variable", []string{"--bearer-token-env", "NOPE"}, "--bearer-token-env NOPE: the variable is empty or unset"},
		{"two authorizations", []string{"--bearer-token-env", "TOKEN", "--header", "Authorization: Basic s3cret"}, "not both"},
	} {
		for _, cmd := range [][]string{
			{"call", "--server", url, "--tool", "sleep"},
			{"load", "--server", url, "--tasks", "1"},
		} {
			t.Run(tc.name+"/"+cmd[0], func(t *testing.T) {
				var out, errb strings.Builder
				st := &State{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb, Context: t.Context(),
					Getenv: func(k string) string {
						if k == "TOKEN" {
							return "s3cret"
						}
						return ""
					},
					Args: append(append([]string(nil), cmd...), tc.args...)}
				code := Main(st)
				all := out.String() + errb.String()
				if code != ExitUsage || !strings.Contains(all, tc.want) || strings.Contains(all, "s3cret") {
					t.Errorf("exit %d, output %q; want %d, %q and no secret", code, all, ExitUsage, tc.want)
				}
			})
		}
	}
	if code, _, stderr := run(t, "", "load", "--in-process", "--tasks", "1", "--header", "X-A: b"); code != ExitUsage || !strings.Contains(stderr, "need --server") {
		t.Errorf("load --header without --server: exit %d, %q", code, stderr)
	}
	if code, _, stderr := run(t, "", "call", "--server-cmd", "./nothing", "--tool", "t", "--header", "X-A: b"); code != ExitUsage || !strings.Contains(stderr, "need --server") {
		t.Errorf("call --server-cmd --header: exit %d, %q", code, stderr)
	}
}

// TestHeadersRecordedRedacted: tasksim load --bearer-token-env through
// tasksim record: the trace has the Authorization header, its value
// redacted by default (traces.AlwaysRedactedHeaders), and no token.
func TestHeadersRecordedRedacted(t *testing.T) {
	const token = "s3cret-token"
	upstream := refserver.StartHTTP(t, &refserver.Options{HTTP: &streamhttp.Options{Logger: slog.New(slog.DiscardHandler)}})
	out := filepath.Join(t.TempDir(), "load.trace")
	ctx, stop := context.WithCancel(t.Context())
	defer stop()
	var stderr syncBuffer
	rec := &State{Stdin: strings.NewReader(""), Stdout: io.Discard, Stderr: &stderr, Getenv: func(string) string { return "" }, Context: ctx,
		Args: []string{"record", "--upstream", upstream.URL, "--listen", "127.0.0.1:0", "-o", out}}
	done := make(chan int, 1)
	go func() { done <- Main(rec) }()
	proxyURL := stderr.await(t, recordingURL, done)

	var lout, lerr strings.Builder
	st := &State{Stdin: strings.NewReader(""), Stdout: &lout, Stderr: &lerr, Context: t.Context(),
		Getenv: func(k string) string { return map[string]string{"TOKEN": token}[k] },
		Args: []string{"load", "--server", proxyURL, "--mode", "sse", "--rate", "20", "--tasks", "2", "--max-lag", "1h",
			"--tool", "sleep", "--args", `{"durationMs":5}`, "--bearer-token-env", "TOKEN"}}
	if code := Main(st); code != ExitOK {
		t.Fatalf("load exit %d: %s", code, lerr.String())
	}
	stop()
	if code := <-done; code != ExitOK {
		t.Fatalf("record exit %d: %s", code, stderr.String())
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(b, []byte(token)) {
		t.Error("the trace holds the token")
	}
	_, recs := readTraceFile(t, out)
	auth := 0
	for _, r := range recs {
		if r.HTTP == nil {
			continue
		}
		for _, f := range r.HTTP.Header {
			if strings.EqualFold(f.Name, "Authorization") {
				auth++
				if !strings.HasPrefix(f.Value, "[redacted:") {
					t.Errorf("record %d: Authorization %q, want redacted", r.Index, f.Value)
				}
			}
		}
	}
	if auth == 0 {
		t.Error("no Authorization header in the trace: the load did not send it")
	}
}
