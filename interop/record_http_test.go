package interop

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// startRecorder runs `tasksim record --upstream URL` on a free loopback
// port and returns the URL to give clients and a function that stops it
// with SIGINT and returns its exit error.
func startRecorder(t *testing.T, upstream, trace string) (string, func() error) {
	t.Helper()
	return startTasksimHTTP(t, "record", "record", "--upstream", upstream, "--listen", "127.0.0.1:0", "-o", trace)
}

// startTasksimHTTP runs tasksim with args (record or proxy in front of an
// upstream, on a free loopback port), waits for the URL it logs, and
// returns it with a function that stops it with SIGINT and returns its exit
// error; it is stopped when the test ends at the latest.
func startTasksimHTTP(t *testing.T, name string, args ...string) (string, func() error) {
	t.Helper()
	cmd := exec.Command(tasksimBinary(t), args...)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	waited := make(chan error, 1)
	var once bool
	stop := func() error {
		if once {
			return nil
		}
		once = true
		_ = cmd.Process.Signal(os.Interrupt)
		select {
		case err := <-waited:
			return err
		case <-time.After(20 * time.Second):
			_ = cmd.Process.Kill()
			return errors.New("tasksim " + name + " did not stop within 20s of SIGINT")
		}
	}
	t.Cleanup(func() { _ = stop() })
	url, drained := awaitURL(t, stderr, urlLine, name)
	go func() {
		<-drained
		waited <- cmd.Wait()
	}()
	return url, stop
}

// TestRecordTSClientTSServerHTTP records the official TypeScript SDK client
// (ts-task-client.mjs) and a TypeScript SDK task server
// (ts-task-server.mjs) through `tasksim record --upstream`: the client
// completes its task through the proxy, and the trace holds the whole
// task lifecycle, also as `tasksim trace show` prints it.
func TestRecordTSClientTSServerHTTP(t *testing.T) {
	nm := nodeModules(t)
	upstream := startTSServer(t, nm)
	trace := filepath.Join(t.TempDir(), "ts-http.trace")
	proxy, stop := startRecorder(t, upstream, trace)

	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, filepath.Join(nm, ".bin", "node"), "ts-task-client.mjs", proxy, "ts_slow", `{"delayMs":300,"text":"recorded over http"}`).Output()
	var got struct {
		TaskID   string   `json:"taskId"`
		Statuses []string `json:"statuses"`
		Result   *struct {
			Content []struct {
				Text string `json:"text"`
			} `json:"content"`
		} `json:"result"`
	}
	if jerr := json.Unmarshal(lastLine(out), &got); jerr != nil || err != nil {
		t.Fatalf("ts-task-client through the recorder: %v / %v\n%s\nstderr: %s", err, jerr, out, stderrOf(err))
	}
	if got.TaskID == "" || got.Statuses[len(got.Statuses)-1] != "completed" || got.Result == nil || len(got.Result.Content) == 0 || got.Result.Content[0].Text != "recorded over http" {
		t.Fatalf("task flow through the recorder incomplete: %s", out)
	}
	if err := stop(); err != nil {
		t.Fatalf("tasksim record on SIGINT: %v", err)
	}
	checkRecordedLifecycle(t, trace)
	checkRecordedTraceShow(t, trace)
}
