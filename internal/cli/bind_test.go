package cli

import (
	"bytes"
	"context"
	"log/slog"
	"net"
	"net/http"
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
// address passed), and the bind is warned about (Hardening item 8).
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
	cmd.SetArgs([]string{"--addr", ":0"})
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
	if !strings.Contains(stderr.String(), "non-loopback address") || !strings.Contains(stderr.String(), "--allow-remote") {
		t.Errorf("no warning about the non-loopback bind:\n%s", stderr)
	}
}

func TestWarnRemoteBind(t *testing.T) {
	cases := []struct {
		name   string
		addr   net.Addr
		allow  bool
		warned bool
	}{
		{"loopback", &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 1}, false, false},
		{"IPv6 loopback", &net.TCPAddr{IP: net.IPv6loopback, Port: 1}, false, false},
		{"every interface", &net.TCPAddr{IP: net.IPv4zero, Port: 1}, false, true},
		{"every interface, IPv6", &net.TCPAddr{IP: net.IPv6unspecified, Port: 1}, false, true},
		{"a LAN address", &net.TCPAddr{IP: net.IPv4(192, 0, 2, 1), Port: 1}, false, true},
		{"a LAN address, --allow-remote", &net.TCPAddr{IP: net.IPv4(192, 0, 2, 1), Port: 1}, true, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var b bytes.Buffer
			warnRemoteBind(slog.New(slog.NewTextHandler(&b, nil)), tc.addr, tc.allow)
			if got := strings.Contains(b.String(), "WARN"); got != tc.warned {
				t.Errorf("warned %v, want %v: %q", got, tc.warned, b.String())
			}
		})
	}
}
