package cli

import (
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
)

// nonLoopbackIP returns an IPv4 address of this machine that is not
// loopback, or skips the test.
func nonLoopbackIP(t *testing.T) net.IP {
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		t.Skipf("interface addresses: %v", err)
	}
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok && !n.IP.IsLoopback() && n.IP.To4() != nil {
			return n.IP
		}
	}
	t.Skip("no non-loopback IPv4 address on this machine")
	return nil
}

// serve --addr :PORT binds every interface. The Host check must hold on
// the non-loopback addresses too (before, connections arriving there were
// not Host-checked: a DNS-rebinding page reaching the machine's LAN
// address passed) (Hardening item 8). Without --allow-remote the bind is
// refused (TestRemoteBindRefused).
func TestServeRemoteBindKeepsHostCheck(t *testing.T) {
	ip := nonLoopbackIP(t)
	stderr := &syncBuffer{}
	st := &State{Stdin: strings.NewReader(""), Stdout: &bytes.Buffer{}, Stderr: stderr, Getenv: func(string) string { return "" }}
	ctx, cancel := context.WithCancel(context.Background())
	ready := make(chan string, 1)
	cmd := NewCmdServe(st, func(ctx context.Context, st *State, o *ServeOptions) error {
		o.Ready = func(addr string) { ready <- addr }
		return runServe(ctx, st, o)
	})
	cmd.SetArgs([]string{"--addr", ":0", "--allow-remote"})
	done := make(chan error, 1)
	go func() { done <- cmd.ExecuteContext(ctx) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("serve: %v", err)
		}
	}()
	var addr string
	select {
	case addr = <-ready:
	case err := <-done:
		t.Fatalf("serve ended: %v", err)
	}
	_, port, _ := net.SplitHostPort(addr)

	initialize := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`
	post := func(hostport, hostHeader string) int {
		req, _ := http.NewRequest(http.MethodPost, "http://"+hostport+"/mcp", strings.NewReader(initialize))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if hostHeader != "" {
			req.Host = hostHeader
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	lan := net.JoinHostPort(ip.String(), port)
	cases := []struct {
		name       string
		dial, host string
		want       int
	}{
		{"LAN address, rebound name", lan, "evil.example:" + port, http.StatusForbidden},
		{"LAN address, its own IP", lan, "", http.StatusOK},
		{"LAN address, localhost", lan, "localhost:" + port, http.StatusOK},
		{"loopback, rebound name", "127.0.0.1:" + port, "evil.example:" + port, http.StatusForbidden},
		{"loopback", "127.0.0.1:" + port, "", http.StatusOK},
	}
	for _, tc := range cases {
		if got := post(tc.dial, tc.host); got != tc.want {
			t.Errorf("%s: status %d, want %d", tc.name, got, tc.want)
		}
	}
}

// A listen address beyond loopback is refused, before anything listens,
// by serve, record and proxy alike unless --allow-remote (before, serve
// only warned, and record and proxy bound every interface silently).
func TestRemoteBindRefused(t *testing.T) {
	cases := []struct {
		name, addr string
		allow, ok  bool
	}{
		{"loopback", "127.0.0.1:7071", false, true},
		{"loopback, other", "127.8.9.10:7071", false, true},
		{"IPv6 loopback", "[::1]:7071", false, true},
		{"localhost", "localhost:7071", false, true},
		{"every interface, no host", ":7071", false, false},
		{"every interface", "0.0.0.0:7071", false, false},
		{"every interface, IPv6", "[::]:7071", false, false},
		{"a LAN address", "192.0.2.1:7071", false, false},
		{"a host name", "example.com:7071", false, false},
		{"every interface, --allow-remote", ":7071", true, true},
		{"a LAN address, --allow-remote", "192.0.2.1:7071", true, true},
		{"no port", "127.0.0.1", false, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := checkBind("--listen", tc.addr, tc.allow)
			if (err == nil) != tc.ok {
				t.Errorf("checkBind(%q, allow %v) = %v, want ok %v", tc.addr, tc.allow, err, tc.ok)
			}
			if err != nil && (ExitCode(err) != ExitUsage || strings.Contains(err.Error(), "\n")) {
				t.Errorf("error %q: want a one-line usage error", err)
			}
		})
	}
	// Each command refuses before it listens: nothing binds here.
	for _, args := range [][]string{
		{"serve", "--addr", ":0"},
		{"serve", "--addr", "0.0.0.0:0"},
		{"record", "--upstream", "http://127.0.0.1:1/mcp", "--listen", ":0", "-o", filepath.Join(t.TempDir(), "r.trace")},
		{"proxy", "--upstream", "http://127.0.0.1:1/mcp", "--listen", "0.0.0.0:0"},
		{"proxy", "--upstream", "http://127.0.0.1:1/mcp", "--listen", ":0", "--record", filepath.Join(t.TempDir(), "p.trace")},
	} {
		var stderr bytes.Buffer
		st := &State{Stdin: strings.NewReader(""), Stdout: io.Discard, Stderr: &stderr, Getenv: func(string) string { return "" }, Context: context.Background(), Args: args}
		if code := Main(st); code != ExitUsage || !strings.Contains(stderr.String(), "--allow-remote") || strings.Count(stderr.String(), "\n") != 1 {
			t.Errorf("%q: exit %d, stderr %q; want %d and one line naming --allow-remote", args, code, stderr.String(), ExitUsage)
		}
	}
}
