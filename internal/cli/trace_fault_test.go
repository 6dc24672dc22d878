package cli

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tasksim/tasksim/traces"
)

// A trace of a run with a fault layer: the schedule in the header, the
// two sides in DIR, a fault on one line.
func TestTraceShowFaults(t *testing.T) {
	path := filepath.Join(t.TempDir(), "faults.trace")
	start := time.Date(2026, 5, 3, 10, 30, 0, 0, time.UTC)
	w, err := traces.Create(path, traces.Header{TasksimVersion: "test", Seed: 1 << 63,
		Faults: &traces.Schedule{Specs: []string{"drop-sse-event:nth=1"}, Decisions: []string{"stream post:1 event 1"}, Note: "more in the fault records"}},
		&traces.WriterOptions{Now: func() time.Time { return start }})
	if err != nil {
		t.Fatal(err)
	}
	recs := []traces.Record{
		{Offset: time.Millisecond, Conn: 1, Stream: "conn", Dir: traces.DirServerToClient, Kind: traces.KindMessage, Raw: []byte(tSeg), Side: traces.SideServer},
		{Offset: time.Millisecond, Conn: 1, Stream: "conn", Kind: traces.KindFault, Note: "by the test", Fault: &traces.Fault{
			Name: "drop-sse-event", Params: []traces.Param{{Key: "nth", Value: "1"}}, Action: "dropped",
			Target: traces.Target{Conn: 1, Stream: "conn", RPCID: "1", Method: "tools/call", TaskID: "t-77", SeqNr: 1, HasSeqNr: true, Record: 0, HasRecord: true}}},
	}
	for _, r := range recs {
		if err := w.Write(r); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := run(t, "", "trace", "show", path)
	if code != ExitOK || stderr != "" {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	lines := strings.Split(strings.TrimRight(stdout, "\n"), "\n")
	want := []string{
		"seed 9223372036854775808",
		"# fault: drop-sse-event:nth=1",
		"# fault decision: stream post:1 event 1",
		"# faults: more in the fault records",
	}
	for i, w := range want {
		if i >= len(lines) || !strings.Contains(lines[i], w) {
			t.Fatalf("line %d lacks %q:\n%s", i, w, stdout)
		}
	}
	msg, fault := strings.Fields(lines[len(lines)-2]), lines[len(lines)-1]
	if msg[3] != "s>c/server" {
		t.Errorf("message line %q: want DIR s>c/server", lines[len(lines)-2])
	}
	for _, w := range []string{" fault ", " tools/call ", " 1 ", " t-77 ", " seqNr=1 ",
		"drop-sse-event nth=1 on conn=1 stream=conn id=1 method=tools/call task=t-77 seqNr=1 record=0: dropped", `"by the test"`} {
		if !strings.Contains(fault, w) {
			t.Errorf("fault line %q lacks %q", fault, w)
		}
	}
}
