package cli

import (
	"encoding/json"
	"encoding/xml"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/tasksim/tasksim/check"
	"github.com/tasksim/tasksim/sim"
)

// importFixture turns a checker fixture (JSONL) into a trace file.
func importFixture(t *testing.T, fixture string) string {
	t.Helper()
	out := filepath.Join(t.TempDir(), filepath.Base(fixture)+".trace")
	if code, _, stderr := run(t, "", "trace", "import", filepath.Join("..", "..", "check", "testdata", fixture), "-o", out); code != ExitOK {
		t.Fatalf("import %s: exit %d: %s", fixture, code, stderr)
	}
	return out
}

func TestTraceCheck(t *testing.T) {
	pass := importFixture(t, "pass/streaming.jsonl")
	fail := importFixture(t, "fail/S1905-SEQNR.jsonl")

	code, stdout, stderr := run(t, "", "trace", "check", pass)
	if code != ExitOK || !strings.Contains(stdout, "PASS  S1905-SEQNR") || !strings.Contains(stdout, "0 failed") {
		t.Fatalf("a passing trace: exit %d\n%s%s", code, stdout, stderr)
	}

	dir := t.TempDir()
	jsonOut, junitOut := filepath.Join(dir, "v.json"), filepath.Join(dir, "v.xml")
	code, stdout, _ = run(t, "", "trace", "check", "--json", jsonOut, "--junit", junitOut, pass, fail)
	if code != ExitFindings || !strings.Contains(stdout, "FAIL  S1905-SEQNR") || !strings.Contains(stdout, "records ") {
		t.Fatalf("a violating trace: exit %d\n%s", code, stdout)
	}
	js, err := os.ReadFile(jsonOut)
	if err != nil || !strings.Contains(string(js), `"schema": "tasksim.trace-check/v1"`) || !strings.Contains(string(js), `"status": "FAIL"`) {
		t.Errorf("--json: %v\n%.300s", err, js)
	}
	x, err := os.ReadFile(junitOut)
	var suites struct {
		Suites []struct {
			Failures int `xml:"failures,attr"`
			Cases    []struct {
				Name    string    `xml:"name,attr"`
				Failure *struct{} `xml:"failure"`
			} `xml:"testcase"`
		} `xml:"testsuite"`
	}
	if err != nil || xml.Unmarshal(x, &suites) != nil || len(suites.Suites) != 2 || suites.Suites[0].Failures != 0 || suites.Suites[1].Failures != 1 {
		t.Errorf("--junit: %v\n%.400s", err, x)
	}

	code, stdout, _ = run(t, "", "trace", "check", "--rule", "TASK-FIELDS", fail)
	if code != ExitOK || strings.Contains(stdout, "S1905-SEQNR") {
		t.Errorf("--rule TASK-FIELDS on a trace breaking S1905-SEQNR only: exit %d\n%s", code, stdout)
	}
}

func TestTraceCheckBadInput(t *testing.T) {
	dir := t.TempDir()
	notTrace := filepath.Join(dir, "notes.txt")
	if err := os.WriteFile(notTrace, []byte("not a trace\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	pass := importFixture(t, "pass/streaming.jsonl")
	data, err := os.ReadFile(pass)
	if err != nil {
		t.Fatal(err)
	}
	cut := filepath.Join(dir, "cut.trace")
	if err := os.WriteFile(cut, data[:len(data)-7], 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name     string
		args     []string
		code     int
		inStderr string
	}{
		{"not a trace", []string{notTrace}, ExitUsage, "not a tasksim trace"},
		{"missing file", []string{filepath.Join(dir, "nope.trace")}, ExitUsage, "no such file"},
		{"a directory", []string{dir}, ExitUsage, ""},
		{"unknown rule", []string{"--rule", "NO-SUCH-RULE", pass}, ExitUsage, "--rule NO-SUCH-RULE: no such rule"},
		{"no file", nil, ExitUsage, ""},
		{"a cut trace is judged, with a warning", []string{cut}, ExitOK, "judged up to its last whole record"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, _, stderr := run(t, "", append([]string{"trace", "check"}, tc.args...)...)
			if code != tc.code || !strings.Contains(stderr, tc.inStderr) {
				t.Fatalf("exit %d, want %d; stderr %q, want it to contain %q", code, tc.code, stderr, tc.inStderr)
			}
			if strings.Contains(stderr, "goroutine ") || strings.Count(strings.TrimSpace(stderr), "\n") > 1 {
				t.Errorf("stderr is not one or two clear lines: %q", stderr)
			}
		})
	}
}

// tasksim trace check of a trace written by tasksim sim --trace judges
// each rule as the sim run did: both sides of the fault layer are in the
// trace, and the checker judges each rule on its side's view (before it
// read sides, seed 1's trace failed S1905-SEQNR and S2679-SEQ, every
// message seen twice). Seeds over HTTP and stdio, each with a fault that
// acted: reorder (1), drop-partial and duplicate-seqnr (4), disconnect
// over stdio (6), server-restart over stdio (12), drop-sse-event (15).
func TestTraceCheckSimTrace(t *testing.T) {
	for _, seed := range []string{"1", "4", "6", "12", "15"} {
		t.Run("seed "+seed, func(t *testing.T) {
			dir := t.TempDir()
			trace, simJSON, checkJSON := filepath.Join(dir, "run.trace"), filepath.Join(dir, "sim.json"), filepath.Join(dir, "check.json")
			if code, stdout, stderr := run(t, "", "sim", "--seed", seed, "--trace", trace, "--json", simJSON, "--out", dir); code != ExitOK && code != ExitFindings {
				t.Fatalf("sim: exit %d: %s%s", code, stdout, stderr)
			}
			var ran struct {
				Summary sim.Summary    `json:"summary"`
				Verdict *check.Verdict `json:"verdict"`
			}
			if b, err := os.ReadFile(simJSON); err != nil || json.Unmarshal(b, &ran) != nil || ran.Verdict == nil {
				t.Fatalf("sim --json holds no verdict: %v\n%.300s", err, b)
			}
			var fired int64
			for _, n := range ran.Summary.Fired {
				fired += n
			}
			if fired == 0 || ran.Verdict.Faults == 0 || !ran.Verdict.Sides {
				t.Fatalf("seed %s: %d faults fired, %d fault records, sides %v: want a two-sided trace where a fault acted", seed, fired, ran.Verdict.Faults, ran.Verdict.Sides)
			}
			code, stdout, stderr := run(t, "", "trace", "check", "--json", checkJSON, trace)
			wantCode := ExitOK
			if ran.Verdict.Failed() {
				wantCode = ExitFindings
			}
			if code != wantCode {
				t.Fatalf("trace check: exit %d, want %d: %s%s", code, wantCode, stdout, stderr)
			}
			var checked struct {
				Traces []checkedTrace `json:"traces"`
			}
			if b, err := os.ReadFile(checkJSON); err != nil || json.Unmarshal(b, &checked) != nil || len(checked.Traces) != 1 {
				t.Fatalf("trace check --json: %v\n%.300s", err, b)
			}
			got := checked.Traces[0].Verdict
			if got.Records != ran.Verdict.Records || got.Faults != ran.Verdict.Faults || !got.Sides {
				t.Errorf("trace check: %d records, %d faults, sides %v; the run: %d, %d", got.Records, got.Faults, got.Sides, ran.Verdict.Records, ran.Verdict.Faults)
			}
			if len(got.Rules) != len(ran.Verdict.Rules) {
				t.Fatalf("trace check judged %d rules, the run %d", len(got.Rules), len(ran.Verdict.Rules))
			}
			// A run over HTTP judges some rules on its HTTP record, a
			// file beside the trace (docs/sim.md, "The HTTP record"):
			// trace check of the trace alone judges them otherwise.
			httpRecord := httpTracePath(trace)
			_, statErr := os.Stat(httpRecord)
			for i, want := range ran.Verdict.Rules {
				if statErr == nil && slices.Contains(sim.HTTPRecordRules(), want.Rule.ID) {
					continue
				}
				if diff := cmp.Diff(want, got.Rules[i]); diff != "" {
					t.Errorf("%s: trace check and the sim run differ (-run +check):\n%s", want.Rule.ID, diff)
				}
			}
			if !strings.Contains(stdout, "both sides of a fault layer") {
				t.Errorf("trace check does not say it judged two views:\n%s", stdout)
			}
		})
	}
}
