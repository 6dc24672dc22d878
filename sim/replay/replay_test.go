package replay

import (
	"context"
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tasksim/tasksim/check"
	"github.com/tasksim/tasksim/internal/plant"
	"github.com/tasksim/tasksim/internal/refserver"
	"github.com/tasksim/tasksim/mcp/streamhttp"
	"github.com/tasksim/tasksim/sim/suite"
	"github.com/tasksim/tasksim/traces"
)

// recordScenario records one scenario of the suite against a reference
// server started with opts and returns the trace's path.
func recordScenario(t *testing.T, scenario string, o *refserver.Options) string {
	t.Helper()
	s := refserver.StartHTTP(t, o)
	dir := t.TempDir()
	res, err := suite.RunSuite(context.Background(), Target{URL: s.URL}, &suite.SuiteOptions{Scenarios: []string{scenario}, TraceDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	// A recording of the reference pair that failed its scenario is not
	// one: its replay would be judged by what the recording lacks.
	if sc := res.Scenarios[0]; sc.Status == check.Fail && o.Server == nil && o.HTTP == nil {
		t.Fatalf("recording %s against the reference failed, not the replay: %s\n%s", scenario, sc.Why, describe(res))
	}
	return filepath.Join(dir, scenario+".trace")
}

func replayFile(t *testing.T, path string, target Target, o *ReplayOptions) *ReplayResult {
	t.Helper()
	r, err := traces.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if o == nil {
		o = &ReplayOptions{}
	}
	if o.Record == "" {
		o.Record = filepath.Join(t.TempDir(), "replay.trace")
	}
	res, err := Replay(context.Background(), r, target, o)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// TestReplayReferenceNoDivergence: traces of the reference pair, replayed
// against a fresh reference server over real HTTP, show no divergence and
// their replays pass the checker.
func TestReplayReferenceNoDivergence(t *testing.T) {
	// Scenarios whose answers do not hang on timing: task-lifecycle, say,
	// cancels a working task, and how many partials precede the cancel
	// depends on when it is sent (docs/replay.md, Speed).
	for _, sc := range []string{"sep1905-streaming", "http-resume", "sep2679-partials", "task-isolation", "invalid-params"} {
		t.Run(sc, func(t *testing.T) {
			path := recordScenario(t, sc, &refserver.Options{})
			s := refserver.StartHTTP(t, &refserver.Options{})
			res := replayFile(t, path, Target{URL: s.URL}, &ReplayOptions{Speed: 1})
			if res.Divergence != nil {
				t.Fatalf("divergence against the reference:\n%s", res.Divergence)
			}
			if res.Verdict.Failed() {
				var b bytesBuffer
				res.Verdict.WriteText(&b)
				t.Fatalf("replay judged failed:\n%s", b.String())
			}
			if res.Compared == 0 || res.Sent == 0 {
				t.Fatalf("sent %d, compared %d", res.Sent, res.Compared)
			}
		})
	}
}

// TestReplayPlantedBugDiverges: a trace recorded against a server with a
// planted bug, replayed against the reference, names the first message
// that differs.
func TestReplayPlantedBugDiverges(t *testing.T) {
	path := recordScenario(t, "sep1905-streaming", plant.MustNamed("seqnr-from-zero").RefServer(&refserver.Options{HTTP: &streamhttp.Options{}}))
	s := refserver.StartHTTP(t, &refserver.Options{})
	res := replayFile(t, path, Target{URL: s.URL}, nil)
	if res.Divergence == nil {
		t.Fatal("no divergence")
	}
	t.Log(res.Divergence)
}

type bytesBuffer = strings.Builder

// TestReplayFaultsActAgain: a replay recorded with a fault (its trace's
// header names it, its fault records say what it did) replays against the
// reference with no divergence, the fault acting again on the same
// message; with NoFaults the first divergence is the message the fault
// had dropped, live now. The fault drops a SEP-2679 notification: how a
// SEP-1905 answer splits its segments over events is timing, so which
// segment the nth event carries is too.
func TestReplayFaultsActAgain(t *testing.T) {
	base := recordScenario(t, "sep1905-streaming", &refserver.Options{})
	s := refserver.StartHTTP(t, &refserver.Options{})
	faulted := filepath.Join(t.TempDir(), "faulted.trace")
	first := replayFile(t, base, Target{URL: s.URL}, &ReplayOptions{Faults: []string{"drop-sse-event:method=notifications/tasks/partial,nth=2"}, Record: faulted})
	if first.Divergence == nil || len(first.Faults) != 1 {
		t.Fatalf("a dropped event should diverge from the fault-free recording: %+v", first)
	}
	again := replayFile(t, faulted, Target{URL: s.URL}, nil)
	if again.Divergence != nil {
		t.Fatalf("the recorded fault, acting again, should reproduce the recording:\n%s", again.Divergence)
	}
	if !slices.Equal(again.Faults, first.Faults) {
		t.Errorf("faults %v, want the recorded %v", again.Faults, first.Faults)
	}
	without := replayFile(t, faulted, Target{URL: s.URL}, &ReplayOptions{NoFaults: true})
	if without.Divergence == nil || len(without.Faults) != 0 {
		t.Fatalf("without the fault the dropped event comes back: %+v", without)
	}
	t.Log(without.Divergence)
}

func TestSpeedDue(t *testing.T) {
	cases := []struct {
		name          string
		speed         Speed
		offset, first time.Duration
		want          time.Duration
	}{
		{"max sends at once", 0, 5 * time.Second, time.Second, 0},
		{"as recorded", 1, 5 * time.Second, time.Second, 4 * time.Second},
		{"four times faster", 4, 5 * time.Second, time.Second, time.Second},
		{"half speed", 0.5, 2 * time.Second, time.Second, 2 * time.Second},
		{"before the first send", 1, 0, time.Second, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.speed.due(tc.offset, tc.first); got != tc.want {
				t.Errorf("due = %v, want %v", got, tc.want)
			}
		})
	}
	for in, want := range map[string]string{"max": "max", "1": "x1", "4": "x4", "x2.5": "x2.5"} {
		if s, err := ParseSpeed(in); err != nil || s.String() != want {
			t.Errorf("ParseSpeed(%q) = %v, %v; want %s", in, s, err, want)
		}
	}
	for _, bad := range []string{"", "0", "-1", "fast", "NaN"} {
		if _, err := ParseSpeed(bad); err == nil {
			t.Errorf("ParseSpeed(%q): no error", bad)
		}
	}
}

func TestCompareJSON(t *testing.T) {
	cases := []struct {
		name, rec, live string
		path            string // "" when they agree
	}{
		{"same", `{"a":1,"b":[true,null]}`, `{"b":[true,null],"a":1}`, ""},
		{"times may differ", `{"createdAt":"2026-01-01T00:00:00Z","x":"2026-01-01T00:00:00.5Z"}`, `{"createdAt":"2027-02-02T01:01:01.123Z","x":"2030-01-01T00:00:00Z"}`, ""},
		{"a time must be a time", `{"createdAt":""}`, `{"createdAt":"2026-01-01T00:00:00Z"}`, "$.createdAt"},
		{"task ids map", `{"taskId":"t1","m":{"taskId":"t1"}}`, `{"taskId":"L1","m":{"taskId":"L1"}}`, ""},
		{"task ids map one to one", `{"taskId":"t1","m":{"taskId":"t1"}}`, `{"taskId":"L1","m":{"taskId":"L2"}}`, "$.taskId"}, // members in name order: $.m binds t1 first
		{"number", `{"seqNr":0}`, `{"seqNr":1}`, "$.seqNr"},
		{"missing member", `{"a":1,"b":2}`, `{"a":1}`, "$.b"},
		{"extra member", `{"a":1}`, `{"a":1,"c":2}`, "$.c"},
		{"array length", `{"a":[1,2]}`, `{"a":[1]}`, "$.a"},
		{"type", `{"a":"1"}`, `{"a":1}`, "$.a"},
		{"requestState: any string", `{"requestState":"s1"}`, `{"requestState":"other"}`, ""},
		{"requestState: a string", `{"requestState":"s1"}`, `{"requestState":1}`, "$.requestState"},
		{"input keys pair", `{"inputRequests":{"k1":{"method":"m"}}}`, `{"inputRequests":{"z9":{"method":"m"}}}`, ""},
		{"input keys pair by request", `{"inputRequests":{"a":{"m":"x"},"b":{"m":"y"}}}`, `{"inputRequests":{"p":{"m":"y"},"q":{"m":"x"}}}`, ""},
		{"input requests differ", `{"inputRequests":{"a":{"m":"x"}}}`, `{"inputRequests":{"a":{"m":"y"}}}`, "$.inputRequests.a.m"},
		{"input request extra", `{"inputRequests":{"a":{}}}`, `{"inputRequests":{"a":{},"b":{}}}`, "$.inputRequests.b"},
		{"input request missing", `{"inputRequests":{"a":{},"b":{}}}`, `{"inputRequests":{"c":{}}}`, "$.inputRequests.b"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			d := newIDMap().compareJSON([]byte(tc.rec), []byte(tc.live))
			switch {
			case tc.path == "" && d != nil:
				t.Errorf("differ at %s: %s", d.path, d.reason)
			case tc.path != "" && d == nil:
				t.Errorf("agree, want a difference at %s", tc.path)
			case tc.path != "" && d.path != tc.path:
				t.Errorf("differ at %s (%s), want %s", d.path, d.reason, tc.path)
			}
		})
	}
}

// describe shows a suite run's scenarios, their rules and findings, for
// a failure message.
func describe(res *suite.SuiteResult) string {
	b, _ := json.MarshalIndent(res.Scenarios, "", "  ")
	return string(b)
}
