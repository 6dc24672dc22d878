package interop

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
)

// TestRecordTSServerStdio records a TypeScript SDK task server over stdio:
// `tasksim call --server-cmd "tasksim record -o FILE -- node
// ts-task-server.mjs --stdio"` completes a task by polling, and the trace
// holds the whole lifecycle, line by line with directions.
func TestRecordTSServerStdio(t *testing.T) {
	nm := nodeModules(t)
	trace := filepath.Join(t.TempDir(), "ts-stdio.trace")
	serverCmd := fmt.Sprintf("%s record -o %s -- %s ts-task-server.mjs --stdio",
		recordQuote(tasksimBinary(t)), recordQuote(trace), recordQuote(filepath.Join(nm, ".bin", "node")))
	got, code := runCall(t, "--server-cmd", serverCmd, "--tool", "ts_slow",
		"--args", `{"delayMs":200,"text":"recorded over stdio"}`, "--mode", "poll", "--poll-interval", "50ms")
	if code != 0 || !got.Result.Complete || got.text() != "recorded over stdio" {
		t.Fatalf("tasksim call through tasksim record: exit %d, complete %v, text %q, error %q", code, got.Result.Complete, got.text(), got.Error)
	}
	checkRecordedLifecycle(t, trace)
	checkRecordedTraceShow(t, trace)
}

// recordQuote makes s one word for tasksim call --server-cmd.
func recordQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
