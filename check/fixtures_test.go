package check

import (
	"iter"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/tasksim/tasksim/traces"
)

// passFixtures are the real traces of testdata/pass (see
// testdata/README.md) and the rules each one is there to show passing.
// Every fixture must yield no FAIL or WARN at all; these rules must PASS.
var passFixtures = map[string][]string{
	"streaming":                {"TASK-STATUS-TRANSITION", "TASK-FIELDS", "S1905-MODE-SELECT", "S1905-SEQNR", "S1905-COMPLETE", "S2679-SEQ", "S2679-AFTER-TERMINAL", "S2679-CONTENT", "S2679-NEGOTIATION", "HTTP-EVENT-ID-UNIQUE", "HTTP-NO-BROADCAST", "HTTP-SESSION"},
	"mode-fallback":            {"S1905-MODE-SELECT", "S1905-FALLBACK-WARNING", "TASK-STATUS-TRANSITION", "TASK-FIELDS"},
	"partial":                  {"TASK-STATUS-TRANSITION", "TASK-RESULT", "S2679-SEQ", "S2679-AFTER-TERMINAL", "S2679-CONTENT", "S2679-NEGOTIATION", "HTTP-NO-BROADCAST"},
	"poll":                     {"TASK-STATUS-TRANSITION", "TASK-RESULT", "CLIENT-TASKS-GET-INTERVAL"},
	"cancel":                   {"TASK-STATUS-TRANSITION", "TASK-FIELDS"},
	"immediate-fallback":       {"S1905-MODE-SELECT", "TASK-RESULT"},
	"task-errors":              {"TASK-NOT-FOUND", "TASK-CANCEL-TERMINAL", "TASK-FIELDS", "TASK-RESULT", "S1905-LASTSEQNR-INVALID"},
	"streaming-results":        {"TASK-ID-ENTROPY", "S1905-SEQNR", "S1905-COMPLETE", "S1905-RESUME", "S1905-MERGE", "S1905-IMMEDIATE", "TASK-RESULT", "HTTP-NO-BROADCAST"},
	"isolation-session-origin": {"TASK-ISOLATION", "HTTP-ORIGIN", "HTTP-SESSION", "HTTP-SESSION-MISSING"},
	"stdio-streaming":          {"TASK-STATUS-TRANSITION", "TASK-FIELDS", "S1905-SEQNR", "S1905-COMPLETE", "S2679-SEQ", "S2679-AFTER-TERMINAL", "S2679-NEGOTIATION"},
	"stdio-partial":            {"TASK-RESULT", "S2679-SEQ", "S2679-CONTENT"},
	"rev2026": {"S2663-RESULT-TYPE", "S2663-GET-SHAPE", "S2663-TERMINAL-FINAL", "S2663-DURABLE-CREATE", "S2663-NOT-FOUND", "S2663-REMOVED-METHODS", "S2663-ACK-EMPTY", "S2663-INPUT-KEYS", "HTTP-HEADER-MISMATCH", "HTTP-STATELESS", "S2663-CAPABILITY", "S2663-ID-ENTROPY", "S2663-LISTEN-TASKS", "S2663-TASK-FIELDS",
		"CLIENT-2663-POLL-INTERVAL", "CLIENT-2663-MCP-NAME", "CLIENT-2663-CAPABILITY", "CLIENT-2663-KEEP-POLLING", "CLIENT-2663-FAILED-OUTCOME"},
	"rev2026-client":       {"CLIENT-2663-MCP-NAME", "CLIENT-2663-CAPABILITY", "CLIENT-2663-NEW-ID", "CLIENT-2663-RESULT-TYPE", "CLIENT-2663-KEEP-POLLING", "CLIENT-2663-FAILED-OUTCOME", "S2663-RESULT-TYPE"},
	"resume-last-event-id": {"TASK-SURVIVES-REQUEST", "HTTP-RESUME-SAME-STREAM", "HTTP-RESUME-COMPLETE", "CLIENT-RESUME", "CLIENT-POLL-INTERVAL", "HTTP-EVENT-ID-UNIQUE"},
}

// unobservable are the rules a trace alone cannot judge, so they have no
// fixtures: CLIENT-DEDUP and CLIENT-COMPLETE need what the client
// delivered to its user (its printed output under tasksim check
// --client-cmd), which no trace holds.
var unobservable = map[string]string{
	"CLIENT-DEDUP":    "needs the client's delivered output, not in a trace",
	"CLIENT-COMPLETE": "needs the client's delivered output and the scripted server's own record of the result, not in a trace",
}

func checkFixture(t *testing.T, path string) *Verdict {
	t.Helper()
	v, err := Check(recordSeq(readFixture(t, path)), nil)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// recordSeq yields recs, in order.
func recordSeq(recs []traces.Record) iter.Seq2[traces.Record, error] {
	return func(yield func(traces.Record, error) bool) {
		for _, r := range recs {
			if !yield(r, nil) {
				return
			}
		}
	}
}

// failures lists the rules v holds broken: FAIL or WARN.
func failures(v *Verdict) []string {
	var out []string
	for _, r := range v.Rules {
		if r.Status.Broken() {
			out = append(out, r.Rule.ID)
		}
	}
	return out
}

func verdictText(v *Verdict) string {
	var b strings.Builder
	_ = v.WriteText(&b)
	return b.String()
}

func TestPassFixtures(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join("testdata", "pass", "*.jsonl"))
	if len(files) != len(passFixtures) {
		t.Errorf("testdata/pass has %d fixtures, the table %d", len(files), len(passFixtures))
	}
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".jsonl")
		t.Run(name, func(t *testing.T) {
			want, ok := passFixtures[name]
			if !ok {
				t.Fatalf("%s is not in passFixtures", f)
			}
			v := checkFixture(t, f)
			if fs := failures(v); len(fs) > 0 {
				t.Errorf("real trace %s fails %v:\n%s", f, fs, verdictText(v))
			}
			for _, id := range want {
				if r, _ := v.Result(id); r.Status != Pass {
					t.Errorf("%s: %s is %s, want PASS (%s)", f, id, r.Status, r.Why)
				}
			}
		})
	}
}

// ruleOf returns the rule a fail fixture is named after: the longest
// catalog ID the name starts with, followed by nothing or "-variant".
func ruleOf(name string) string {
	best := ""
	for _, r := range Catalog() {
		if (name == r.ID || strings.HasPrefix(name, r.ID+"-")) && len(r.ID) > len(best) {
			best = r.ID
		}
	}
	return best
}

func TestFailFixtures(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join("testdata", "fail", "*.jsonl"))
	if len(files) == 0 {
		t.Fatal("no fixtures in testdata/fail")
	}
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".jsonl")
		t.Run(name, func(t *testing.T) {
			id := ruleOf(name)
			if id == "" {
				t.Fatalf("%s is named after no rule of the catalog", f)
			}
			v := checkFixture(t, f)
			if fs := failures(v); !slices.Equal(fs, []string{id}) {
				t.Errorf("%s fails %v, want exactly [%s]:\n%s", f, fs, id, verdictText(v))
			}
			r, _ := v.Result(id)
			if len(r.Findings) == 0 || len(r.Findings[0].Records) == 0 {
				t.Errorf("%s: %s has no finding naming records", f, id)
			}
			// A MUST broken is FAIL, a SHOULD broken WARN.
			if want := r.Rule.Breach(false); r.Status != want {
				t.Errorf("%s: %s (%s) is %s, want %s", f, id, r.Rule.Keyword, r.Status, want)
			}
		})
	}
}

// TestFixturesCoverCatalog: every rule a trace can show has a passing and
// a violating fixture.
func TestFixturesCoverCatalog(t *testing.T) {
	passing := map[string]bool{}
	for _, ids := range passFixtures {
		for _, id := range ids {
			if _, ok := RuleByID(id); !ok {
				t.Errorf("passFixtures names unknown rule %s", id)
			}
			passing[id] = true
		}
	}
	failing := map[string]bool{}
	files, _ := filepath.Glob(filepath.Join("testdata", "fail", "*.jsonl"))
	for _, f := range files {
		failing[ruleOf(strings.TrimSuffix(filepath.Base(f), ".jsonl"))] = true
	}
	for _, r := range Catalog() {
		if why, ok := unobservable[r.ID]; ok {
			if passing[r.ID] || failing[r.ID] {
				t.Errorf("%s is listed unobservable (%s) but has fixtures", r.ID, why)
			}
			continue
		}
		if !passing[r.ID] {
			t.Errorf("%s has no passing fixture", r.ID)
		}
		if !failing[r.ID] {
			t.Errorf("%s has no violating fixture in testdata/fail", r.ID)
		}
	}
}

// TestFailFixturesGenerated: every generated fixture is committed and
// every committed one is generated, so that -update reproduces testdata.
func TestFailFixturesGenerated(t *testing.T) {
	want := map[string]bool{}
	for _, ff := range failFixtures {
		want[ff.name+".jsonl"] = true
		if _, err := os.Stat(filepath.Join("testdata", "fail", ff.name+".jsonl")); err != nil {
			t.Errorf("%s is not committed: run go test -run TestGenerateFailFixtures -update", ff.name)
		}
	}
	files, _ := filepath.Glob(filepath.Join("testdata", "fail", "*.jsonl"))
	for _, f := range files {
		if !want[filepath.Base(f)] {
			t.Errorf("%s is not made by fixtures_gen_test.go", f)
		}
	}
}
