package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tasksim/tasksim/load"
)

// TestReportFromLoadRun: one in-process run writes --json, --hlog and
// --html; report html renders the JSON again; report merge of two logs
// equals load.MergeHlogs of them.
func TestReportFromLoadRun(t *testing.T) {
	dir := t.TempDir()
	res, hlogA, page := filepath.Join(dir, "run.json"), filepath.Join(dir, "a.hlog"), filepath.Join(dir, "run.html")
	code, stdout, stderr := run(t, "", loadArgs("--json", res, "--hlog", hlogA, "--html", page)...)
	if code != ExitOK {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	if !strings.Contains(stdout, "report: "+page) {
		t.Errorf("stdout lacks the report's path:\n%s", stdout)
	}
	checkPage(t, page)

	again := filepath.Join(dir, "again.html")
	code, stdout, stderr = run(t, "", "report", "html", "-o", again, res)
	if code != ExitOK || stdout != "report: "+again+"\n" {
		t.Fatalf("report html: exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	checkPage(t, again)

	// Without -o: beside the result, never over a file that exists (it
	// used to write ./report.html, replacing whatever was there).
	t.Chdir(dir)
	before, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	if code, _, stderr := run(t, "", "report", "html", res); code != ExitUsage || !strings.Contains(stderr, "run.html exists") {
		t.Errorf("report html over an existing run.html: exit %d, stderr %q, want %d", code, stderr, ExitUsage)
	}
	if after, _ := os.ReadFile(page); !bytes.Equal(after, before) {
		t.Error("report html without -o replaced run.html")
	}
	if err := os.Remove(page); err != nil {
		t.Fatal(err)
	}
	if code, stdout, stderr := run(t, "", "report", "html", res); code != ExitOK || stdout != "report: "+page+"\n" {
		t.Errorf("report html RESULT: exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	checkPage(t, page)
	if _, err := os.Stat(filepath.Join(dir, "report.html")); err == nil {
		t.Error("report html wrote ./report.html")
	}

	// A second log covering the same seconds, as from another machine: the
	// first, rewritten by MergeHlogs.
	a, err := os.ReadFile(hlogA)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := load.MergeHlogs(&b, load.DefaultInterval, bytes.NewReader(a)); err != nil {
		t.Fatal(err)
	}
	hlogB := filepath.Join(dir, "b.hlog")
	if err := os.WriteFile(hlogB, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	var want bytes.Buffer
	if err := load.MergeHlogs(&want, load.DefaultInterval, bytes.NewReader(a), bytes.NewReader(b.Bytes())); err != nil {
		t.Fatal(err)
	}
	merged := filepath.Join(dir, "all.hlog")
	if code, _, stderr := run(t, "", "report", "merge", "-o", merged, hlogA, hlogB); code != ExitOK {
		t.Fatalf("report merge: exit %d, stderr %q", code, stderr)
	}
	got, err := os.ReadFile(merged)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want.Bytes()) {
		t.Errorf("merged log differs from load.MergeHlogs:\n%s\nwant:\n%s", got, want.Bytes())
	}
	totals, err := load.HlogTotals(bytes.NewReader(got))
	if err != nil {
		t.Fatal(err)
	}
	single, err := load.HlogTotals(bytes.NewReader(a))
	if err != nil {
		t.Fatal(err)
	}
	for tag, h := range single {
		if n := totals[tag].TotalCount(); n != 2*h.TotalCount() {
			t.Errorf("%s: %d values merged, want %d", tag, n, 2*h.TotalCount())
		}
	}
}

func checkPage(t *testing.T, name string) {
	t.Helper()
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	page := string(b)
	if !strings.HasPrefix(page, "<!DOCTYPE html>") || strings.Count(page, "<svg") != 5 {
		t.Errorf("%s: not a report with 5 plots", name)
	}
	for _, mode := range []string{"poll:100ms", "sse", "partial"} {
		if !strings.Contains(page, mode) {
			t.Errorf("%s: lacks mode %s", name, mode)
		}
	}
}

func TestReportBadInput(t *testing.T) {
	dir := t.TempDir()
	notJSON := filepath.Join(dir, "x.json")
	empty := filepath.Join(dir, "empty.json")
	hlog := filepath.Join(dir, "ok.hlog")
	for name, text := range map[string]string{notJSON: "#[Histogram log format version 1.3]\n", empty: "{}", hlog: ""} {
		if err := os.WriteFile(name, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	badHDR := filepath.Join(dir, "bad.json")
	if err := os.WriteFile(badHDR, []byte(`{"modes":[{"name":"sse","ttr":{"count":1,"hdr":"HISTFAAA"}}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out")
	cases := []struct {
		name string
		args []string
		want string
	}{
		{"no subcommand", []string{"report"}, "html, merge or sim-merge"},
		{"html missing file", []string{"report", "html", "-o", out, filepath.Join(dir, "nope.json")}, "no such file"},
		{"html not JSON", []string{"report", "html", "-o", out, notJSON}, "not a tasksim load result"},
		{"html no modes", []string{"report", "html", "-o", out, empty}, "not a tasksim load result"},
		{"html bad histogram", []string{"report", "html", "-o", out, badHDR}, "histogram"},
		{"html no argument", []string{"report", "html"}, "accepts 1 arg"},
		{"merge no output", []string{"report", "merge", hlog}, "-o"},
		{"merge missing file", []string{"report", "merge", "-o", out, filepath.Join(dir, "nope.hlog")}, "no such file"},
		{"merge JSON", []string{"report", "merge", "-o", out, badHDR}, "not an interval log"},
		{"merge empty", []string{"report", "merge", "-o", out, hlog}, "not an interval log"},
		{"merge bad interval", []string{"report", "merge", "-o", out, "--interval", "0s", hlog}, "--interval"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			code, _, stderr := run(t, "", tc.args...)
			if code != ExitUsage || strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, tc.want) {
				t.Errorf("exit %d, stderr %q; want %d and one line mentioning %q", code, stderr, ExitUsage, tc.want)
			}
			if _, err := os.Stat(out); err == nil {
				t.Error("an output was written")
			}
		})
	}
}
