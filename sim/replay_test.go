package sim

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tasksim/tasksim/internal/refserver"
	"github.com/tasksim/tasksim/mcp/server"
	"github.com/tasksim/tasksim/mcp/streamhttp"
	"github.com/tasksim/tasksim/traces"
)

// recordScenario records one scenario of the suite against a reference
// server started with opts and returns the trace's path.
func recordScenario(t *testing.T, scenario string, o *refserver.Options) string {
	t.Helper()
	s := refserver.StartHTTP(t, o)
	dir := t.TempDir()
	if _, err := RunSuite(context.Background(), Target{URL: s.URL}, &SuiteOptions{Scenarios: []string{scenario}, TraceDir: dir}); err != nil {
		t.Fatal(err)
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
	for _, sc := range []string{"sep1905-streaming", "task-lifecycle", "http-resume", "sep2679-partials"} {
		t.Run(sc, func(t *testing.T) {
			path := recordScenario(t, sc, &refserver.Options{})
			s := refserver.StartHTTP(t, &refserver.Options{})
			res := replayFile(t, path, Target{URL: s.URL}, nil)
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
	path := recordScenario(t, "sep1905-streaming", &refserver.Options{Server: &server.Options{Bugs: server.Bugs{SeqNrFromZero: true}}, HTTP: &streamhttp.Options{}})
	s := refserver.StartHTTP(t, &refserver.Options{})
	res := replayFile(t, path, Target{URL: s.URL}, nil)
	if res.Divergence == nil {
		t.Fatal("no divergence")
	}
	t.Log(res.Divergence)
}

type bytesBuffer = strings.Builder
