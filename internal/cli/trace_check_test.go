package cli

import (
	"encoding/xml"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// importFixture turns a checker fixture (JSONL) into a trace file.
func importFixture(t *testing.T, fixture string) string {
	t.Helper()
	out := filepath.Join(t.TempDir(), filepath.Base(fixture)+".trace")
	if code, _, stderr := run(t, "", "trace", "import", filepath.Join("..", "..", "sim", "check", "testdata", fixture), "-o", out); code != ExitOK {
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
