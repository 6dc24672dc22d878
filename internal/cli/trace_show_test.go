package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/tasksim/tasksim/traces"
)

func TestTraceShow(t *testing.T) {
	path := writeSampleTrace(t, false)
	code, stdout, stderr := run(t, "", "trace", "show", path)
	if code != ExitOK || stderr != "" {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	lines := strings.Split(strings.TrimRight(stdout, "\n"), "\n")
	if len(lines) != 3+1+6 {
		t.Fatalf("%d lines:\n%s", len(lines), stdout)
	}
	if !strings.Contains(lines[0], fmt.Sprintf("trace format %d · tasksim test", traces.FormatVersion)) || !strings.Contains(lines[0], "seed 7") {
		t.Errorf("header line %q", lines[0])
	}
	wantFields := map[int][]string{
		4: {"+0.001s", "1", "req:1", "c>s", "request-head", "POST", "/mcp"},
		6: {"+0.002s", "message", "tools/call", "1", "-", "-"},
		7: {"+0.005s", "post:1", "s>c", "response-head", "200", "text/event-stream"},
		8: {"+0.009s", "sse-event", "(response)", "1", "t-77", "seqNr=1", "complete=true", "event-id=9"},
		9: {"body-end", `"eof"`},
	}
	for i, want := range wantFields {
		got := strings.Fields(lines[i])
		for _, w := range want {
			if !strings.Contains(" "+strings.Join(got, " ")+" ", " "+w+" ") {
				t.Errorf("line %d %q lacks %q", i, lines[i], w)
			}
		}
	}
	// Filters.
	code, stdout, _ = run(t, "", "trace", "show", path, "--kind", "sse-event,message")
	if code != ExitOK || strings.Count(stdout, "\n") != 3+1+2 {
		t.Errorf("--kind: exit %d\n%s", code, stdout)
	}
	code, _, stderr = run(t, "", "trace", "show", path, "--kind", "telepathy")
	if code != ExitUsage {
		t.Errorf("bad --kind: exit %d", code)
	}
	oneErrorLine(t, stderr, "telepathy")
	// stdin.
	data, _ := os.ReadFile(path)
	if code, stdout, _ = run(t, string(data), "trace", "show", "-"); code != ExitOK || !strings.Contains(stdout, "tools/call") {
		t.Errorf("show -: exit %d\n%s", code, stdout)
	}
}

func TestTraceShowJSON(t *testing.T) {
	path := writeSampleTrace(t, false)
	code, stdout, stderr := run(t, "", "trace", "show", path, "--json")
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var got struct {
		Header struct {
			Seed int64 `json:"seed"`
		} `json:"header"`
		Records []struct {
			Index uint64 `json:"index"`
			Kind  string `json:"kind"`
			RPC   *struct {
				TaskID string  `json:"taskId"`
				SeqNrs []int64 `json:"seqNrs"`
			} `json:"rpc"`
		} `json:"records"`
		Truncated any `json:"truncated"`
	}
	if err := json.Unmarshal([]byte(stdout), &got); err != nil {
		t.Fatalf("%v\n%s", err, stdout)
	}
	if got.Header.Seed != 7 || len(got.Records) != 6 || got.Records[4].Kind != "sse-event" ||
		got.Records[4].RPC.TaskID != "t-77" || got.Records[4].RPC.SeqNrs[0] != 1 || got.Truncated != nil {
		t.Errorf("%+v", got)
	}
}

// A cut trace is shown up to its last whole record, with a warning.
func TestTraceShowCut(t *testing.T) {
	path := writeSampleTrace(t, false)
	cut := variant(t, path, func(b []byte) []byte { return b[:len(b)-5] })
	code, stdout, stderr := run(t, "", "trace", "show", cut)
	if code != ExitOK || strings.Count(stdout, "\n") != 3+1+5 {
		t.Errorf("exit %d\n%s", code, stdout)
	}
	if !strings.Contains(stderr, "warning: trace cut at record 5") {
		t.Errorf("stderr %q", stderr)
	}
}
