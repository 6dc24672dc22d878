package replay

import (
	"context"
	"flag"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/tasksim/tasksim/check"
	"github.com/tasksim/tasksim/internal/plant"
	"github.com/tasksim/tasksim/internal/refserver"
	"github.com/tasksim/tasksim/mcp/streamhttp"
	"github.com/tasksim/tasksim/sim/internal/harness"
	"github.com/tasksim/tasksim/sim/suite"
)

var updateBugs = flag.Bool("update", false, "record testdata/bugs again: each bug's trace from the reference server with that bug planted")

// bugDir holds the bug-trace corpus: one small trace per known protocol
// bug, each recorded from the reference server with the bug planted.
const bugDir = "testdata/bugs"

// knownBugs are the bugs of the corpus. (resume-skips-one is not among
// them: the suite sees it by its own assertion, not in the
// trace, so no trace of it fails HTTP-RESUME-COMPLETE.) The first two are public bugs of
// real peers, planted in the reference transport: server-everything's
// event store replays other streams' events after Last-Event-ID, and
// mcp-go's task dies with the HTTP request that created it.
var knownBugs = []struct {
	file string
	bug  string // plant.Named
	// origins, when set, replaces the transport's allowed origins.
	origins []string
	rule    string
}{
	{file: "replay-other-streams", bug: "replay-other-streams", rule: "HTTP-RESUME-SAME-STREAM"},
	{file: "cancel-on-disconnect", bug: "cancel-on-disconnect", rule: "TASK-SURVIVES-REQUEST"},
	{file: "shared-event-ids", bug: "shared-event-ids", rule: "HTTP-EVENT-ID-UNIQUE"},
	{file: "missing-session-404", bug: "missing-session-404", rule: "HTTP-SESSION-MISSING"},
	{file: "broadcast", bug: "broadcast", rule: "HTTP-NO-BROADCAST"},
	{file: "any-origin", origins: []string{"*"}, rule: "HTTP-ORIGIN"},
	{file: "seqnr-from-zero", bug: "seqnr-from-zero", rule: "S1905-SEQNR"},
	{file: "seq-from-one", bug: "seq-from-one", rule: "S2679-SEQ"},
	{file: "sequential-ids", bug: "sequential-ids", rule: "TASK-ID-ENTROPY"},
	{file: "cancel-terminal", bug: "cancel-terminal", rule: "TASK-CANCEL-TERMINAL"},
	{file: "reopen-terminal", bug: "reopen-terminal", rule: "TASK-STATUS-TRANSITION"},
	{file: "not-found-internal", bug: "not-found-internal", rule: "TASK-NOT-FOUND"},
	{file: "no-created-at", bug: "no-created-at", rule: "TASK-FIELDS"},
	{file: "no-related-task", bug: "no-related-task", rule: "TASK-RESULT"},
	{file: "shared-tasks", bug: "shared-tasks", rule: "TASK-ISOLATION"},
	{file: "lastseqnr-zero", bug: "lastseqnr-zero", rule: "S1905-LASTSEQNR-INVALID"},
	{file: "resume-off-by-one", bug: "resume-off-by-one", rule: "S1905-RESUME"},
	{file: "reversed-merge", bug: "reversed-merge", rule: "S1905-MERGE"},
	{file: "immediate-working", bug: "immediate-working", rule: "S1905-IMMEDIATE"},
	{file: "failed-without-error", bug: "failed-without-error", rule: "S1905-COMPLETE"},
	{file: "ignore-modes", bug: "ignore-modes", rule: "S1905-MODE-SELECT"},
	{file: "partials-unasked", bug: "partials-unasked", rule: "S2679-NEGOTIATION"},
	{file: "empty-partial", bug: "empty-partial", rule: "S2679-CONTENT"},
	{file: "partial-after-terminal", bug: "partial-after-terminal", rule: "S2679-AFTER-TERMINAL"},
}

// TestUpdateBugCorpus records the corpus again with -update: for each
// bug, the suite runs against the reference server with that bug
// planted, and the smallest scenario trace that fails exactly the bug's
// rule becomes testdata/bugs/BUG.trace.
func TestUpdateBugCorpus(t *testing.T) {
	if !*updateBugs {
		t.Skip("run with -update to record testdata/bugs again")
	}
	if err := os.MkdirAll(bugDir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, b := range knownBugs {
		t.Run(b.file, func(t *testing.T) {
			o := &refserver.Options{HTTP: &streamhttp.Options{AllowedOrigins: b.origins}}
			if b.bug != "" {
				o = plant.MustNamed(b.bug).RefServer(o)
			}
			s := refserver.StartHTTP(t, o)
			dir := t.TempDir()
			res, err := suite.RunSuite(context.Background(), Target{URL: s.URL}, &suite.SuiteOptions{TraceDir: dir, Command: []string{"tasksim", "check", "--server", "URL"}})
			if err != nil {
				t.Fatal(err)
			}
			best, size := "", int64(-1)
			for _, sc := range res.Scenarios {
				if !sc.Status.Broken() {
					continue
				}
				v, err := harness.JudgeTrace(sc.Trace, check.Server, check.Transport)
				if err != nil || !slices.Equal(failedIDs(v), []string{b.rule}) {
					continue
				}
				fi, err := os.Stat(sc.Trace)
				if err == nil && (size < 0 || fi.Size() < size) {
					best, size = sc.Trace, fi.Size()
				}
			}
			if best == "" {
				t.Fatalf("no scenario trace fails exactly %s\n%s", b.rule, describe(res))
			}
			data, err := os.ReadFile(best)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(bugDir, b.file+".trace"), data, 0o644); err != nil {
				t.Fatal(err)
			}
			t.Logf("%s: %s (%d bytes)", b.file, filepath.Base(best), size)
		})
	}
}

// failedIDs lists the rules v holds broken: FAIL, or WARN for a SHOULD.
func failedIDs(v *check.Verdict) []string {
	var ids []string
	for _, rr := range v.Rules {
		if rr.Status.Broken() {
			ids = append(ids, rr.Rule.ID)
		}
	}
	return ids
}

// TestBugCorpus judges every trace of the corpus (it fails exactly its
// bug's rule) and replays it against the reference server over HTTP: the
// first divergence is a message the server sent, no later than the
// checker's first evidence of the bug. A bug that shows only in values a
// replay maps (sequential task ids) shows no divergence; the replay's
// own verdict then passes the rule the recording failed.
func TestBugCorpus(t *testing.T) {
	for _, b := range knownBugs {
		t.Run(b.file, func(t *testing.T) {
			t.Parallel()
			path := filepath.Join(bugDir, b.file+".trace")
			v, err := harness.JudgeTrace(path, check.Server, check.Transport)
			if err != nil {
				t.Fatal(err)
			}
			if got := failedIDs(v); !slices.Equal(got, []string{b.rule}) {
				t.Fatalf("judged: failed %v, want exactly [%s]", got, b.rule)
			}
			rr, _ := v.Result(b.rule)
			var evidence []uint64
			for _, f := range rr.Findings {
				evidence = append(evidence, f.Records...)
			}
			s := refserver.StartHTTP(t, &refserver.Options{})
			res := replayFile(t, path, Target{URL: s.URL}, &ReplayOptions{Speed: 1, Wait: 5 * time.Second})
			if b.file == "sequential-ids" {
				if res.Divergence != nil {
					t.Fatalf("task ids are mapped, yet:\n%s", res.Divergence)
				}
				if rr, _ := res.Verdict.Result(b.rule); rr.Status != check.Pass {
					t.Fatalf("the replay against the reference: %s %s, want PASS", b.rule, rr.Status)
				}
				return
			}
			d := res.Divergence
			if d == nil {
				t.Fatalf("no divergence against the reference (compared %d answers)", res.Compared)
			}
			if last := slices.Max(evidence); d.Record > last {
				t.Errorf("divergence at record %d, after the checker's evidence (records %v):\n%s", d.Record, evidence, d)
			}
			t.Logf("evidence %v\n%s", evidence, d)
		})
	}
}
