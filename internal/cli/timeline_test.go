package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/tasksim/tasksim/traces"
)

// htmlRuns returns the run sections of an --html page by title, and the
// record numbers of each run's highlighted rows.
func htmlRuns(t *testing.T, path string) (page string, titles []string, violations [][]string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("--html: %v", err)
	}
	page = string(b)
	for _, sec := range regexp.MustCompile(`(?s)<section class="tl-run".*?</section>`).FindAllString(page, -1) {
		titles = append(titles, regexp.MustCompile(`<h2 class="tl-title">([^<]*)</h2>`).FindStringSubmatch(sec)[1])
		var v []string
		for _, m := range regexp.MustCompile(`<g class="tl-row tl-violation[^"]*" id="[^"]*" data-record="(\d+)"`).FindAllStringSubmatch(sec, -1) {
			v = append(v, m[1])
		}
		violations = append(violations, v)
	}
	return page, titles, violations
}

// TestTraceCheckHTML: trace check --html draws every trace it judged,
// with the records of a failed rule's findings highlighted, and still
// exits 1 for the violation.
func TestTraceCheckHTML(t *testing.T) {
	pass := importFixture(t, "pass/streaming.jsonl")
	fail := importFixture(t, "fail/S1905-SEQNR.jsonl")
	out := filepath.Join(t.TempDir(), "check.html")
	code, stdout, stderr := run(t, "", "trace", "check", "--html", out, pass, fail)
	if code != ExitFindings {
		t.Fatalf("exit %d, want %d\n%s%s", code, ExitFindings, stdout, stderr)
	}
	// The text names the violating records: the page highlights those.
	named := map[string]bool{}
	for _, m := range regexp.MustCompile(`records ([\d,]+): `).FindAllStringSubmatch(stdout, -1) {
		for _, n := range strings.Split(m[1], ",") {
			named[n] = true
		}
	}
	if len(named) == 0 {
		t.Fatalf("no findings in\n%s", stdout)
	}
	page, titles, viol := htmlRuns(t, out)
	if len(titles) != 2 || titles[0] != pass || titles[1] != fail {
		t.Fatalf("runs %q, want %q and %q", titles, pass, fail)
	}
	highlighted := map[string]bool{}
	for _, n := range viol[1] {
		highlighted[n] = true
	}
	if len(viol[0]) != 0 || fmt.Sprint(highlighted) != fmt.Sprint(named) {
		t.Errorf("highlighted %q, want none and %v", viol, named)
	}
	if !strings.Contains(page, `<tr class="tl-status-FAIL"><td>S1905-SEQNR</td>`) {
		t.Error("the verdict table does not fail S1905-SEQNR")
	}

	code, _, stderr = run(t, "", "trace", "check", "--html", filepath.Join(t.TempDir(), "no", "such", "dir", "x.html"), pass)
	if code != ExitRuntime || strings.Count(strings.TrimSpace(stderr), "\n") != 0 || !strings.Contains(stderr, "--html") {
		t.Errorf("unwritable --html: exit %d, stderr %q; want %d and one line", code, stderr, ExitRuntime)
	}
}

// TestSimHTML: sim --html draws the one run of --seed with a fault mark
// per fault record of its trace; of many seeds, it draws one and says why.
func TestSimHTML(t *testing.T) {
	dir := t.TempDir()
	out, tr := filepath.Join(dir, "sim.html"), filepath.Join(dir, "sim.trace")
	code, stdout, stderr := run(t, "", "sim", "--seed", "5", "--html", out, "--trace", tr)
	if code != ExitOK {
		t.Fatalf("exit %d\n%s%s", code, stdout, stderr)
	}
	rd, err := traces.Open(tr)
	if err != nil {
		t.Fatal(err)
	}
	defer rd.Close()
	faults := 0
	for rec, err := range rd.Records() {
		if err != nil {
			t.Fatal(err)
		}
		if rec.Kind == traces.KindFault {
			faults++
		}
	}
	page, titles, _ := htmlRuns(t, out)
	if len(titles) != 1 || titles[0] != "tasksim sim --seed 5" {
		t.Errorf("runs %q", titles)
	}
	if got := strings.Count(page, `<g class="tl-fault">`); faults == 0 || got != faults {
		t.Errorf("%d fault marks, want %d (seed 5 has faults)", got, faults)
	}
	if !strings.Contains(page, "call 0: ") {
		t.Error("the calls' outcomes are not on the page")
	}

	code, stdout, stderr = run(t, "", "sim", "--seeds", "4", "--html", out)
	if code != ExitOK {
		t.Fatalf("exit %d\n%s%s", code, stdout, stderr)
	}
	if page, titles, _ = htmlRuns(t, out); len(titles) != 1 || !strings.Contains(page, "one of 4 runs: no run failed") {
		t.Errorf("runs %q; the page should say which of the 4 runs it draws", titles)
	}
}

// TestCheckHTML: check --html draws every scenario that ran, though only
// failures' traces are kept: the traces of passing scenarios are still
// removed.
func TestCheckHTML(t *testing.T) {
	url := referenceServer(t)
	out := filepath.Join(t.TempDir(), "check.html")
	code, stdout, stderr := run(t, "", "check", "--server", url, "--scenario", "sep1905-gap-fill", "--scenario", "task-ttl", "--html", out)
	if code != ExitOK {
		t.Fatalf("exit %d\n%s%s", code, stdout, stderr)
	}
	if strings.Contains(stdout, "traces:") {
		t.Errorf("passing scenarios' traces were kept:\n%s", stdout)
	}
	page, titles, _ := htmlRuns(t, out)
	if strings.Join(titles, "|") != "task-ttl: PASS|sep1905-gap-fill: PASS" {
		t.Errorf("runs %q", titles)
	}
	if !strings.Contains(page, `<g class="tl-fault">`) {
		t.Error("sep1905-gap-fill's faults are not marked")
	}
}
