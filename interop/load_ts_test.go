package interop

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestLoadTSTaskServer: tasksim load drives the TypeScript SDK's task
// server with its own tool (ts_slow, not slow_text), per-task arguments
// and an Authorization header, through tasksim record. The server refuses
// any request without the header, so a run that completes proves it got
// there on every request; the trace holds the header redacted and the
// token nowhere. The server reports no completion time in its results:
// discovery delay comes from lastUpdatedAt, and the table marks it.
func TestLoadTSTaskServer(t *testing.T) {
	nm := nodeModules(t)
	const auth = "Bearer interop-s3cret"
	upstream := startTSServer(t, nm, "TS_REQUIRE_AUTH="+auth)
	trace := filepath.Join(t.TempDir(), "load.trace")
	proxy, stop := startRecorder(t, upstream, trace)

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	load := func(extra ...string) (stdout, stderr []byte, err error) {
		// Poll mode only: in sse mode about one run in five lost one
		// call's SSE answer from this server before its response (it keeps
		// no event store, so the stream cannot be resumed), and the
		// failure rate then failed the run. That is not what this test is
		// about (a tool of the server's own, and the header); it is noted
		// for the streaming interop tests.
		args := append([]string{"load", "--server", proxy, "--mode", "poll", "--rate", "10", "--tasks", "6", "--max-lag", "1h",
			"--tool", "ts_slow", "--args", `{"delayMs":{{durationMs}},"text":"task {{task}}"}`, "--task-duration", "200ms..400ms"}, extra...)
		cmd := exec.CommandContext(ctx, tasksimBinary(t), args...)
		var o, e bytes.Buffer
		cmd.Stdout, cmd.Stderr = &o, &e
		err = cmd.Run()
		return o.Bytes(), e.Bytes(), err
	}

	// Without the header the server refuses: exit 3.
	if _, stderr, err := load(); err == nil || !strings.Contains(string(stderr), "401") {
		t.Fatalf("load without the header: %v, stderr %s; want refused (401)", err, stderr)
	}
	result := filepath.Join(t.TempDir(), "run.json")
	stdout, stderr, err := load("--header", "Authorization: "+auth, "--json", result)
	if err != nil {
		t.Fatalf("load: %v\nstdout:\n%s\nstderr:\n%s", err, stdout, stderr)
	}
	if out := string(stdout) + string(stderr); strings.Contains(out, "interop-s3cret") {
		t.Errorf("the token was printed:\n%s", out)
	}
	b, err := os.ReadFile(result)
	if err != nil {
		t.Fatal(err)
	}
	var res struct {
		Config struct {
			Tool string `json:"tool"`
		} `json:"config"`
		Modes []struct {
			Name                     string `json:"name"`
			Completed                int    `json:"completed"`
			DiscoveryFromLastUpdated int    `json:"discoveryFromLastUpdated"`
		} `json:"modes"`
	}
	if err := json.Unmarshal(b, &res); err != nil {
		t.Fatal(err)
	}
	if res.Config.Tool != "ts_slow" || len(res.Modes) != 1 {
		t.Fatalf("result: %s", b)
	}
	for _, m := range res.Modes {
		if m.Completed != 6 || m.DiscoveryFromLastUpdated != 6 {
			t.Errorf("%s: %d completed, %d discovery delays from lastUpdatedAt; want 6 and 6", m.Name, m.Completed, m.DiscoveryFromLastUpdated)
		}
	}
	if !strings.Contains(string(stdout), "†") {
		t.Errorf("the table does not mark discovery from lastUpdatedAt:\n%s", stdout)
	}

	if err := stop(); err != nil {
		t.Fatalf("record: %v", err)
	}
	tb, err := os.ReadFile(trace)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(tb, []byte("interop-s3cret")) {
		t.Error("the trace holds the token")
	}
	shown, err := exec.CommandContext(ctx, tasksimBinary(t), "trace", "export", "--format", "jsonl", trace).Output()
	if err != nil {
		t.Fatalf("trace export: %v", err)
	}
	if !bytes.Contains(bytes.ToLower(shown), []byte(`"authorization"`)) || !bytes.Contains(shown, []byte("[redacted:")) {
		t.Errorf("the trace lacks the redacted Authorization header")
	}
}
