package cli

import (
	"bufio"
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tasksim/tasksim/internal/refserver"
	"github.com/tasksim/tasksim/mcp/streamhttp"
	"github.com/tasksim/tasksim/traces"
)

// The tests of the side of record and proxy that faces clients: what they
// redact, the DNS-rebinding guard, the limits, the one socket.

var frontURL = regexp.MustCompile(`msg=(?:proxying|recording) url=(http://\S+)`)

// startFront runs tasksim with args (record or proxy, given --listen
// 127.0.0.1:0 after the command's name) in-process and returns its URL, a stop function (SIGINT)
// that returns the exit code, and its stderr.
func startFront(t *testing.T, args ...string) (string, func() int, *syncBuffer) {
	t.Helper()
	ctx, stop := context.WithCancel(context.Background())
	t.Cleanup(stop)
	stderr := &syncBuffer{}
	st := &State{
		Stdin: strings.NewReader(""), Stdout: io.Discard, Stderr: stderr, Getenv: func(string) string { return "" }, Context: ctx,
		Args: append([]string{args[0], "--listen", "127.0.0.1:0"}, args[1:]...),
	}
	done := make(chan int, 1)
	go func() { done <- Main(st) }()
	u := stderr.await(t, frontURL, done)
	return u, func() int { stop(); return <-done }, stderr
}

// fronts are the commands that face clients over HTTP, recording into
// the trace file given.
var fronts = []struct {
	name string
	args func(upstream, trace string) []string
}{
	{"record", func(up, tr string) []string { return []string{"record", "--upstream", up, "-o", tr} }},
	{"proxy --record", func(up, tr string) []string {
		return []string{"proxy", "--upstream", up, "--record", tr, "--seed", "1"}
	}},
	{"proxy --record --fault", func(up, tr string) []string {
		return []string{"proxy", "--upstream", up, "--record", tr, "--seed", "1", "--fault", "delay:d=1ms"}
	}},
}

// The --upstream URL's user, password and token stay out of the trace
// header and the log of proxy as of record, the client's ?access_token=
// is redacted in the trace's request URLs, and the upstream gets its own
// query (first) and the client's.
func TestFrontRedactsAndForwardsQuery(t *testing.T) {
	const pass, user, tok, custom, clientTok = "pA55-w0rd-9", "alice-user", "tok-7f3e2d", "tenant-secret-42", "client-tok-5e1"
	for _, fr := range fronts {
		t.Run(fr.name, func(t *testing.T) {
			seen := make(chan string, 1)
			up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				u, p, _ := r.BasicAuth()
				seen <- r.URL.RawQuery + " " + u + ":" + p
			}))
			defer up.Close()
			secretURL := strings.Replace(up.URL, "http://", "http://"+user+":"+pass+"@", 1) + "/mcp?token=" + tok + "&tenant=" + custom
			out := filepath.Join(t.TempDir(), "run.trace")
			u, stop, stderr := startFront(t, append(fr.args(secretURL, out), "--redact-query", "tenant")...)
			resp, err := http.Get(u + "?access_token=" + clientTok + "&x=1")
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if got, want := <-seen, "token="+tok+"&tenant="+custom+"&access_token="+clientTok+"&x=1 "+user+":"+pass; got != want {
				t.Errorf("upstream saw %q, want %q", got, want)
			}
			if code := stop(); code != ExitOK {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			data, err := os.ReadFile(out)
			if err != nil {
				t.Fatal(err)
			}
			for _, secret := range []string{pass, user, tok, custom, clientTok} {
				if strings.Contains(string(data), secret) {
					t.Errorf("trace holds %q", secret)
				}
				if strings.Contains(stderr.String(), secret) {
					t.Errorf("log holds %q: %s", secret, stderr)
				}
			}
			h, recs := readTraceFile(t, out)
			var labels []string
			for _, l := range h.Labels {
				labels = append(labels, l.Key+"="+l.Value)
			}
			if !strings.Contains(strings.Join(labels, " "), "upstream=http://redacted@127.0.0.1:") {
				t.Errorf("labels %q: want the upstream with its secrets redacted", labels)
			}
			var urls []string
			for _, r := range recs {
				if r.Kind == traces.KindRequestHead {
					urls = append(urls, r.HTTP.URL)
				}
			}
			if len(urls) != 1 || urls[0] != "/mcp?access_token=[redacted:1]&x=1" {
				t.Errorf("request URLs %q, want the client's token redacted", urls)
			}
		})
	}
}

// initialize is an initialize request's body.
const initialize = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`

// postInit sends initialize to u with the given Host and Origin (empty:
// none) and returns the status.
func postInit(t *testing.T, u, host, origin string) int {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, u, strings.NewReader(initialize))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if host != "" {
		req.Host = host
	}
	if origin != "" {
		req.Header.Set("Origin", origin)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode
}

// Through proxy and record, a rebound page's Host or Origin is refused as
// the server itself refuses it (before, the proxy replaced Host with the
// upstream's, and the server's check passed: 200 through the proxy, 403
// direct); --allow-host and --allow-origin widen the lists as on serve.
func TestFrontGuardsHostAndOrigin(t *testing.T) {
	// The upstream checks Origin too: it is forwarded as it came.
	upstream := refserver.StartHTTP(t, &refserver.Options{HTTP: &streamhttp.Options{AllowedOrigins: []string{"https://ok.example"}, Logger: slog.New(slog.DiscardHandler)}}).URL
	if got := postInit(t, upstream, "evil.example.com", ""); got != http.StatusForbidden {
		t.Fatalf("direct, rebound Host: %d, want 403", got)
	}
	for _, fr := range append(fronts, struct {
		name string
		args func(upstream, trace string) []string
	}{"proxy", func(up, _ string) []string { return []string{"proxy", "--upstream", up, "--seed", "1"} }}) {
		t.Run(fr.name, func(t *testing.T) {
			u, stop, stderr := startFront(t, append(fr.args(upstream, filepath.Join(t.TempDir(), "g.trace")), "--allow-host", "ok.example", "--allow-origin", "https://ok.example")...)
			port := u[strings.LastIndex(u, ":")+1 : strings.LastIndex(u, "/")]
			cases := []struct {
				name, host, origin string
				want               int
			}{
				{"loopback", "", "", http.StatusOK},
				{"rebound Host", "evil.example.com", "", http.StatusForbidden},
				{"rebound Host with port", "evil.example.com:" + port, "", http.StatusForbidden},
				{"rebound Origin", "", "http://evil.example.com", http.StatusForbidden},
				{"loopback Origin", "", "http://localhost:3000", http.StatusOK},
				{"allowed Host", "ok.example:" + port, "", http.StatusOK},
				{"allowed Origin", "", "https://ok.example", http.StatusOK},
			}
			for _, tc := range cases {
				if got := postInit(t, u, tc.host, tc.origin); got != tc.want {
					t.Errorf("%s: status %d, want %d", tc.name, got, tc.want)
				}
			}
			if code := stop(); code != ExitOK {
				t.Fatalf("exit %d: %s", code, stderr)
			}
		})
	}
}

// A body that stops coming is cut with 408 and its connection closed, by
// proxy (with and without --record, with a fault whose layer reads the
// body whole) as by record, at --body-timeout (before, nothing came for
// 100 s and more). The timeout is tiny so that the test does not wait;
// only the outcome is asserted, never when it came.
func TestFrontCutsSlowBody(t *testing.T) {
	upstream, _ := refserver.Start(t, nil)
	all := append(fronts[:len(fronts):len(fronts)],
		struct {
			name string
			args func(upstream, trace string) []string
		}{"proxy", func(up, _ string) []string { return []string{"proxy", "--upstream", up, "--seed", "1"} }},
		struct {
			name string
			args func(upstream, trace string) []string
		}{"proxy --fault", func(up, _ string) []string {
			return []string{"proxy", "--upstream", up, "--seed", "1", "--fault", "delay:d=1ms"}
		}})
	for _, fr := range all {
		t.Run(fr.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "slow.trace")
			u, stop, stderr := startFront(t, append(fr.args(upstream, out), "--body-timeout", "20ms")...)
			addr := strings.TrimPrefix(u[:strings.LastIndex(u, "/")], "http://")
			c, err := net.Dial("tcp", addr)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			// 100 bytes announced, 1 sent, the rest never.
			if _, err := io.WriteString(c, "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"+
				"Accept: application/json, text/event-stream\r\nContent-Length: 100\r\n\r\n{"); err != nil {
				t.Fatal(err)
			}
			// A bound on the test, not on the proxy: far above the timeout.
			_ = c.SetReadDeadline(time.Now().Add(60 * time.Second))
			br := bufio.NewReader(c)
			resp, err := http.ReadResponse(br, nil)
			if err != nil {
				t.Fatalf("no answer to a slow body: %v", err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusRequestTimeout || !strings.Contains(string(body), `"code":-32000`) {
				t.Errorf("answer %d %q, want 408 with a JSON-RPC error", resp.StatusCode, body)
			}
			if _, err := br.ReadByte(); err != io.EOF {
				t.Errorf("connection after the 408: %v, want it closed (EOF)", err)
			}
			// A legitimate client is served after.
			if got := postInit(t, u, "", ""); got != http.StatusOK {
				t.Errorf("a client after the slow body: %d, want 200", got)
			}
			if code := stop(); code != ExitOK {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			if strings.Contains(fr.name, "record") {
				_, recs := readTraceFile(t, out)
				var statuses []int
				for _, r := range recs {
					if r.Kind == traces.KindResponseHead {
						statuses = append(statuses, r.HTTP.Status)
					}
				}
				if len(statuses) == 0 || statuses[0] != http.StatusRequestTimeout {
					t.Errorf("response statuses recorded %v, want the 408 first", statuses)
					for _, r := range recs {
						t.Logf("%d %s %s %s %.80q", r.Index, r.Wall.Format("15:04:05.000"), r.Kind, r.Note, r.Raw)
					}
				}
			}
		})
	}
}

// Past --max-conns a connection gets 503 and is closed, on proxy and
// record as on serve; the connections holding slots are served.
func TestFrontMaxConns(t *testing.T) {
	upstream, _ := refserver.Start(t, nil)
	for _, fr := range fronts[:2] {
		t.Run(fr.name, func(t *testing.T) {
			u, stop, stderr := startFront(t, append(fr.args(upstream, filepath.Join(t.TempDir(), "c.trace")), "--max-conns", "1")...)
			addr := strings.TrimPrefix(u[:strings.LastIndex(u, "/")], "http://")
			// The first connection holds the one slot once it is served.
			first, err := net.Dial("tcp", addr)
			if err != nil {
				t.Fatal(err)
			}
			defer first.Close()
			req := "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\n" +
				"Content-Length: " + strconv.Itoa(len(initialize)) + "\r\n\r\n" + initialize
			io.WriteString(first, req)
			fr1 := bufio.NewReader(first)
			resp, err := http.ReadResponse(fr1, nil)
			if err != nil || resp.StatusCode != http.StatusOK {
				t.Fatalf("first connection: %v %v", resp, err)
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			second, err := net.Dial("tcp", addr)
			if err != nil {
				t.Fatal(err)
			}
			defer second.Close()
			io.WriteString(second, req)
			_ = second.SetReadDeadline(time.Now().Add(60 * time.Second))
			resp, err = http.ReadResponse(bufio.NewReader(second), nil)
			if err != nil || resp.StatusCode != http.StatusServiceUnavailable {
				t.Errorf("second connection: %v %v, want 503", resp, err)
			}
			// The first connection is still served.
			io.WriteString(first, req)
			if resp, err := http.ReadResponse(fr1, nil); err != nil || resp.StatusCode != http.StatusOK {
				t.Errorf("first connection, again: %v %v", resp, err)
			}
			first.Close()
			if code := stop(); code != ExitOK {
				t.Fatalf("exit %d: %s", code, stderr)
			}
		})
	}
}

// listeningSockets counts this process's listening TCP sockets (Linux).
func listeningSockets(t *testing.T) int {
	t.Helper()
	inodes := map[string]bool{}
	for _, f := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		data, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		for _, line := range strings.Split(string(data), "\n")[1:] {
			fields := strings.Fields(line)
			if len(fields) > 9 && fields[3] == "0A" { // TCP_LISTEN
				inodes[fields[9]] = true
			}
		}
	}
	fds, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skipf("no /proc/self/fd: %v", err)
	}
	n := 0
	for _, fd := range fds {
		target, err := os.Readlink(filepath.Join("/proc/self/fd", fd.Name()))
		if err == nil && strings.HasPrefix(target, "socket:[") && inodes[strings.TrimSuffix(strings.TrimPrefix(target, "socket:["), "]")] {
			n++
		}
	}
	return n
}

// proxy --record opens one listening socket: the faults act behind the
// recorder in the same process (before, on a second, loopback listener of
// their own, where traffic passed faulted and unrecorded). Traffic is
// faulted and recorded.
func TestProxyRecordOneListener(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("counts sockets in /proc")
	}
	upstream, _ := refserver.Start(t, nil)
	before := listeningSockets(t)
	out := filepath.Join(t.TempDir(), "one.trace")
	u, stop, stderr := startFront(t, "proxy", "--upstream", upstream, "--record", out, "--seed", "1", "--fault", "http-status:code=418,method=initialize")
	if n := listeningSockets(t) - before; n != 1 {
		t.Errorf("proxy --record opened %d listening sockets, want 1", n)
	}
	if got := postInit(t, u, "", ""); got != http.StatusTeapot {
		t.Errorf("initialize through the fault: %d, want 418", got)
	}
	if code := stop(); code != ExitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	_, recs := readTraceFile(t, out)
	var statuses []int
	faults := 0
	for _, r := range recs {
		switch r.Kind {
		case traces.KindFault:
			faults++
		case traces.KindResponseHead:
			statuses = append(statuses, r.HTTP.Status)
		}
	}
	if faults != 1 || len(statuses) != 1 || statuses[0] != http.StatusTeapot {
		t.Errorf("%d fault records, response statuses %v: want the fault and the 418 it answered", faults, statuses)
	}
}
