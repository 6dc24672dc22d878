package cli

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/tasksim/tasksim/traces"
)

func TestTraceStats(t *testing.T) {
	path := writeSampleTrace(t, false)
	code, stdout, stderr := run(t, "", "trace", "stats", path)
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, want := range []string{"records    6 over 10ms", "1 conns, 1 HTTP exchanges, 2 streams, 1 tasks",
		"methods    tools/call 1", "http       200 1", "1 seqNr segments"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("stats lack %q:\n%s", want, stdout)
		}
	}
	code, stdout, _ = run(t, "", "trace", "stats", path, "--json")
	var got struct {
		Stats traces.Stats `json:"stats"`
	}
	if code != ExitOK || json.Unmarshal([]byte(stdout), &got) != nil || got.Stats.Records != 6 || got.Stats.Kinds["sse-event"] != 1 ||
		got.Stats.Statuses[200] != 1 || got.Stats.Tasks != 1 {
		t.Errorf("exit %d, %+v\n%s", code, got, stdout)
	}
}
