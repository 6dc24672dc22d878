package cli

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tasksim/tasksim/internal/refserver"
	"github.com/tasksim/tasksim/mcp/client"
	"github.com/tasksim/tasksim/mcp/server"
	"github.com/tasksim/tasksim/mcp/streamhttp"
	"github.com/tasksim/tasksim/traces"
)

// startProxy runs tasksim proxy in-process with args and returns its URL,
// a stop function (SIGINT) that returns the exit code, and its stderr.
func startProxy(t *testing.T, args ...string) (string, func() int, *syncBuffer) {
	t.Helper()
	return startFront(t, append([]string{"proxy"}, args...)...)
}

// TestProxyDropSSEEvent: the reference client calls slow_text in streaming
// mode through tasksim proxy, which drops the second event of the call's
// stream; the client still gets the whole result, and the trace records
// the fault. A tool done by the time the server decides how to answer is
// answered whole, as JSON, with no event to drop (SEP-1905 scenario 3), so
// the upstream's slow_text holds after its first chunk until the call's
// first answer is out (answerGate): the call is streamed as several events
// at any machine speed.
func TestProxyDropSSEEvent(t *testing.T) {
	upstream := startGatedUpstream(t)
	out := filepath.Join(t.TempDir(), "proxy.trace")
	u, stop, stderr := startProxy(t, "--upstream", upstream, "--fault", "drop-sse-event:method=tools/call,nth=2", "--seed", "1", "--record", out)

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	sess, err := client.New(nil).Connect(ctx, &streamhttp.ClientTransport{URL: u})
	if err != nil {
		t.Fatal(err)
	}
	res, err := sess.CallTool(ctx, client.CallOptions{Name: server.ToolSlowText, Args: map[string]any{"chunks": 4, "chunkSize": 10, "intervalMs": 50}, Mode: client.ModeStreaming})
	if err != nil || !res.Complete {
		t.Fatalf("call through the proxy: %v (complete %v)", err, res != nil && res.Complete)
	}
	var text strings.Builder
	for _, c := range res.Content {
		text.WriteString(c.Text)
	}
	want := server.ChunkText(1, 10) + server.ChunkText(2, 10) + server.ChunkText(3, 10) + server.ChunkText(4, 10)
	if text.String() != want {
		t.Errorf("result %q, want %q", text.String(), want)
	}
	sess.Close()
	if code := stop(); code != ExitOK {
		t.Fatalf("exit code %d: %s", code, stderr.String())
	}
	if !strings.Contains(stderr.String(), "fault drop-sse-event:method=tools/call,nth=2 fired 1 times") {
		t.Errorf("no count of the fault on stderr: %q", stderr.String())
	}
	hdr, recs := readTraceFile(t, out)
	if hdr.Seed != 1 {
		t.Errorf("trace seed %d, want 1", hdr.Seed)
	}
	if hdr.Faults == nil || len(hdr.Faults.Specs) != 1 || hdr.Faults.Specs[0] != "drop-sse-event:method=tools/call,nth=2" {
		t.Errorf("trace header schedule %+v", hdr.Faults)
	}
	// The header holds the spec once, in its schedule: trace show prints
	// it once (a "fault" label beside it printed it twice).
	if _, show, _ := run(t, "", "trace", "show", out); strings.Count(show, "# fault: drop-sse-event:method=tools/call,nth=2\n") != 1 {
		t.Errorf("trace show should print the fault spec once:\n%.600s", show)
	}
	var notes []string
	for _, r := range recs {
		if testing.Verbose() {
			t.Logf("%d %s %s %s %.60s", r.Index, r.Kind, r.Stream, r.Note, r.Raw)
		}
		if r.Kind == traces.KindFault {
			notes = append(notes, r.Note)
			if f := r.Fault; f == nil || f.Name != "drop-sse-event" || f.Action != "dropped" || f.Target.Method != "tools/call" {
				t.Errorf("fault record %d: structured fault %+v", r.Index, f)
			}
		}
	}
	if len(notes) != 1 || !strings.HasPrefix(notes[0], "drop-sse-event:method=tools/call,nth=2 post:s") || !strings.HasSuffix(notes[0], ": dropped") {
		t.Errorf("fault records %q", notes)
		for _, r := range recs {
			t.Logf("%d %s %s %s %.60s", r.Index, r.Kind, r.Stream, r.Note, r.Raw)
		}
		t.Logf("stderr %s", stderr)
	}
}

func TestProxyBadInput(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.faults")
	if err := os.WriteFile(bad, []byte("# CI faults\ndelay:d=1s\ndrop-everything:p=0.5\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	badJSON := filepath.Join(dir, "bad.json")
	if err := os.WriteFile(badJSON, []byte(`{"seed": 1, "faults": [{"fault": "delay", "params": {"d": "soon"}}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	up := []string{"--upstream", "http://127.0.0.1:1/mcp", "--listen", "127.0.0.1:0"}
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"no mode", []string{"proxy"}, "give --upstream URL"},
		{"both modes", append(append([]string{"proxy"}, up...), "--", "cat"), "not both"},
		{"unknown fault", append(append([]string{"proxy"}, up...), "--fault", "drop-everything"), `--fault: fault "drop-everything": unknown fault`},
		{"bad parameter", append(append([]string{"proxy"}, up...), "--fault", "delay:d=soon"), `d=soon: want a duration`},
		{"unknown parameter", append(append([]string{"proxy"}, up...), "--fault", "drop-partial:nth=1,x=2"), `x: unknown parameter of drop-partial`},
		{"missing file", append(append([]string{"proxy"}, up...), "--faults", filepath.Join(dir, "none")), "no such file"},
		{"bad file", append(append([]string{"proxy"}, up...), "--faults", bad), `bad.faults: fault "drop-everything:p=0.5": drop-everything: unknown fault`},
		{"bad JSON file", append(append([]string{"proxy"}, up...), "--faults", badJSON), `d=soon: want a duration`},
		{"bad seed", append(append([]string{"proxy"}, up...), "--seed", "-1"), "--seed"},
		{"bad upstream", []string{"proxy", "--upstream", "ftp://x/mcp", "--seed", "1"}, "--upstream"},
		{"argument before --", []string{"proxy", "stray", "--", "cat"}, "after --"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, _, stderr := run(t, "", tc.args...)
			if code != ExitUsage {
				t.Errorf("exit code %d, want %d (stderr %q)", code, ExitUsage, stderr)
			}
			lines := strings.Split(strings.TrimSpace(stderr), "\n")
			last := lines[len(lines)-1]
			for _, l := range lines[:len(lines)-1] {
				if !strings.HasPrefix(l, "tasksim proxy: ") {
					t.Errorf("stderr %q: more than the error", stderr)
				}
			}
			if !strings.HasPrefix(last, "tasksim: ") || !strings.Contains(last, tc.want) {
				t.Errorf("stderr %q: want one error line mentioning %q", stderr, tc.want)
			}
		})
	}
}

// TestProxyStdio: the reference server over stdio behind tasksim proxy,
// whose fault drops the answer to the call; the seed comes from the file.
func TestProxyStdio(t *testing.T) {
	in := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}
{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"instant","arguments":{"text":"hi"}}}
{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"instant","arguments":{"text":"there"}}}
`
	dir := t.TempDir()
	file := filepath.Join(dir, "ci.json")
	if err := os.WriteFile(file, []byte(`{"seed": 42, "faults": ["drop-response:id=2,stream=stdout"]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "stdio.trace")
	args := append([]string{"proxy", "--faults", file, "--record", out, "--"}, helperCommand(t, "serve", "--stdio", "--log-level", "error")...)
	code, stdout, stderr := run(t, in, args...)
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	lines := strings.Split(strings.TrimSpace(stdout), "\n")
	if len(lines) != 2 || !strings.Contains(lines[0], `"id":1`) || !strings.Contains(lines[1], `"text":"there"`) {
		t.Errorf("stdout:\n%s", stdout)
	}
	if strings.Contains(stderr, "repeat the run") || !strings.Contains(stderr, "fault drop-response:id=2,stream=stdout fired 1 times") {
		t.Errorf("stderr %q", stderr)
	}
	hdr, recs := readTraceFile(t, out)
	faultsSeen := 0
	for _, r := range recs {
		if r.Kind == traces.KindFault {
			faultsSeen++
		}
	}
	if hdr.Seed != 42 || faultsSeen != 1 {
		t.Errorf("trace seed %d with %d fault records, want 42 and 1", hdr.Seed, faultsSeen)
	}
}

// TestProxyRandomSeedPrinted: without --seed the seed is chosen and
// printed, and the trace keeps it.
func TestProxyRandomSeedPrinted(t *testing.T) {
	in := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}
`
	out := filepath.Join(t.TempDir(), "seed.trace")
	args := append([]string{"proxy", "--fault", "delay:d=1ms", "--record", out, "--"}, helperCommand(t, "serve", "--stdio", "--log-level", "error")...)
	code, _, stderr := run(t, in, args...)
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	m := regexp.MustCompile(`seed (\d+) \(repeat the run with --seed (\d+)\)`).FindStringSubmatch(stderr)
	if m == nil || m[1] != m[2] {
		t.Fatalf("no seed on stderr: %q", stderr)
	}
	hdr, _ := readTraceFile(t, out)
	if strconv.FormatUint(hdr.Seed, 10) != m[1] {
		t.Errorf("trace seed %d, printed %s", hdr.Seed, m[1])
	}
}

// TestProxyTransparent: with no fault the proxy passes a call unchanged
// and records it without fault records.
func TestProxyTransparent(t *testing.T) {
	upstream, _ := refserver.Start(t, nil)
	out := filepath.Join(t.TempDir(), "plain.trace")
	u, stop, stderr := startProxy(t, "--upstream", upstream, "--seed", "3", "--record", out)
	code, stdout, cerr := run(t, "", "call", "--server", u, "--tool", "slow_text", "--args", `{"chunks":2,"chunkSize":10,"intervalMs":5}`, "--mode", "streaming")
	if code != ExitOK || strings.TrimSpace(stdout) != server.ChunkText(1, 10)+server.ChunkText(2, 10) {
		t.Fatalf("call exit %d, stdout %q, stderr %q", code, stdout, cerr)
	}
	if code := stop(); code != ExitOK {
		t.Fatalf("exit code %d: %s", code, stderr.String())
	}
	_, recs := readTraceFile(t, out)
	events := 0
	for _, r := range recs {
		if r.Kind == traces.KindFault {
			t.Errorf("fault record with no fault: %s", r.Note)
		}
		if r.Kind == traces.KindSSEEvent {
			events++
		}
	}
	if events == 0 {
		t.Error("no SSE event recorded")
	}
}

func TestProxyHelp(t *testing.T) {
	code, stdout, _ := run(t, "", "proxy", "--help")
	if code != ExitOK || !strings.Contains(stdout, "docs/faults.md") || !strings.Contains(stdout, "drop-sse-event ") {
		t.Errorf("exit %d, help:\n%s", code, stdout)
	}
}

// TestProxyStdioStall: a stalled stdout passes nothing more, and the run
// still ends when the server does (its stdin closed).
func TestProxyStdioStall(t *testing.T) {
	in := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}
{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"instant","arguments":{"text":"hi"}}}
{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"instant","arguments":{"text":"there"}}}
`
	args := append([]string{"proxy", "--fault", "stall:stream=stdout,nth=2", "--seed", "1", "--"}, helperCommand(t, "serve", "--stdio", "--log-level", "error")...)
	code, stdout, stderr := run(t, in, args...)
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if lines := strings.Split(strings.TrimSpace(stdout), "\n"); len(lines) != 1 || !strings.Contains(lines[0], `"id":1`) {
		t.Errorf("stdout:\n%s", stdout)
	}
	if !strings.Contains(stderr, "fault stall:stream=stdout,nth=2 fired 1 times") {
		t.Errorf("stderr %q", stderr)
	}
}

// TestProxyRefusesFaultOfAnotherRevision: a fault confined to a revision
// it has no meaning on is refused on one line, exit 2, before anything
// listens.
func TestProxyRefusesFaultOfAnotherRevision(t *testing.T) {
	code, _, stderr := run(t, "", "proxy", "--upstream", "http://127.0.0.1:1/mcp", "--listen", "127.0.0.1:0",
		"--fault", "drop-partial:revision=2026-07-28")
	if code != ExitUsage || strings.Count(strings.TrimSpace(stderr), "\n") != 0 ||
		!strings.Contains(stderr, "drop-partial has no meaning on 2026-07-28") {
		t.Errorf("exit %d, stderr %q; want %d and one line", code, stderr, ExitUsage)
	}
}
