package cli

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/tasksim/tasksim/internal/headless"
	"github.com/tasksim/tasksim/sim"
)

// TestDemoReportInChromium lays the demo's report out in headless
// Chromium at 1280 px: it is titled "tasksim demo" and opens with what
// the demo compares (the same lines the terminal shows before the
// table), nothing is wider than the window (the fault half's summary
// used to be a preformatted block that scrolled sideways), and a run
// that passed says nowhere that a call "hung" (its calls were labelled
// "hung, expected ok" when tasks/result recovered them, which is a
// pass). Skips without chromium; fails without it under CI=true.
func TestDemoReportInChromium(t *testing.T) {
	chromium := headless.Chromium(t)
	if testing.Short() {
		t.Skip("a few seconds of load")
	}
	report := filepath.Join(t.TempDir(), "demo.html")
	// 20 seeds: the run the demo picks among them has calls that a fault
	// kept from their end and tasks/result recovered.
	code, stdout, stderr := run(t, "", "demo", "--in-process", "--duration", "1s", "--rate", "10", "--html", report, "--sim-seeds", "20")
	if code != ExitOK {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	intro, table, ok := strings.Cut(stdout, "  mode ")
	if !ok || !strings.HasPrefix(stdout, demoIntro(true)) || !strings.Contains(table, "0 failed") {
		t.Fatalf("want the intro, then the table, and a fault half with 0 failed runs:\n%s", stdout)
	}
	for _, want := range []string{"tasks/get every 1 s or every 100 ms", "SEP-1905 streaming", "SEP-2679 partials", "Watch discovery delay"} {
		if !strings.Contains(intro, want) {
			t.Errorf("the intro lacks %q:\n%s", want, intro)
		}
	}
	page, err := os.ReadFile(report)
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		Title, H1, Intro, Text  string
		ScrollWidth, Width      int
		TableWidth, TableBox    int
		Clipped                 []string
		Notes, Recovered, Heads int
	}
	headless.Probe(t, chromium, page, `{
  title: document.title, h1: document.querySelector("h1").textContent,
  intro: Array.from(document.querySelectorAll("h1 ~ .intro, h1 ~ table.kv")).slice(0, 3).map(function (e) { return e.textContent; }).join("\n"),
  text: document.body.innerText, scrollWidth: document.documentElement.scrollWidth, width: window.innerWidth,
  tableWidth: document.querySelector(".summary").scrollWidth, tableBox: document.querySelector(".summary").clientWidth,
  clipped: Array.from(document.querySelectorAll("figure svg text")).filter(function (t) {
    return t.getBoundingClientRect().right > t.ownerSVGElement.getBoundingClientRect().right + 1;
  }).map(function (t) { return t.textContent; }),
  notes: document.querySelectorAll(".tl-note").length,
  recovered: Array.from(document.querySelectorAll(".tl-note")).filter(function (n) { return n.textContent.indexOf("recovered") >= 0; }).length,
  heads: document.querySelectorAll(".tl-colhead").length
}`, &got)
	if got.Title != "tasksim demo" || got.H1 != "tasksim demo" {
		t.Errorf("title %q, heading %q; want tasksim demo", got.Title, got.H1)
	}
	for _, want := range []string{demoLesson.lead, "SEP-1905 streaming", "SEP-2679 partials", demoLesson.watch} {
		if !strings.Contains(got.Intro, want) {
			t.Errorf("the page's intro lacks %q:\n%s", want, got.Intro)
		}
	}
	if got.ScrollWidth > got.Width || got.Width != headless.Width {
		t.Errorf("page %d px wide in a %d px window (want a %d px window, no horizontal scroll)", got.ScrollWidth, got.Width, headless.Width)
	}
	// The summary of both revisions' six modes, with the columns of
	// 2026-07-28 polling, fits the window: it scrolls by itself only in a
	// narrower one.
	if got.TableWidth > got.TableBox {
		t.Errorf("summary table %d px wide in a %d px box: it scrolls in a %d px window", got.TableWidth, got.TableBox, headless.Width)
	}
	if len(got.Clipped) > 0 {
		t.Errorf("plot text past its plot's right edge, clipped: %q", got.Clipped)
	}
	if got.Notes == 0 || got.Recovered == 0 {
		t.Errorf("%d call notes, %d recovered: the picked run should show a recovered call", got.Notes, got.Recovered)
	}
	if i := strings.Index(got.Text, sim.OutcomeHung); i >= 0 {
		t.Errorf("a passing run's page says %q: ...%s...", sim.OutcomeHung, got.Text[max(i-200, 0):min(i+200, len(got.Text))])
	}
	if got.Heads != 2 {
		t.Errorf("%d client/server heads over the lanes, want 2 (once)", got.Heads)
	}
}

// TestSimTimelineCallNotes: a call that a fault kept from its end and
// tasks/result recovered once the faults stopped passes SIM-LIVENESS;
// its line under the timeline says it was recovered, not that it "hung,
// expected ok" as if the run failed.
func TestSimTimelineCallNotes(t *testing.T) {
	for seed := uint64(1); seed <= 100; seed++ {
		res, err := sim.Run(t.Context(), sim.Draw(seed, nil, nil), nil)
		if err != nil {
			t.Fatal(err)
		}
		i := slices.IndexFunc(res.Calls, func(c sim.CallOutcome) bool {
			return c.Got == sim.OutcomeHung && c.Recovered == c.Expected
		})
		if i < 0 || res.Failed() {
			continue
		}
		run, err := simRunTimeline(res, "recovered")
		if err != nil {
			t.Fatal(err)
		}
		note := run.Notes[len(res.Liveness)+i]
		if strings.Contains(note, sim.OutcomeHung) || !strings.Contains(note, "recovered") || !strings.Contains(note, "as expected") {
			t.Errorf("seed %d: %q", seed, note)
		}
		return
	}
	t.Fatal("no passing run of seeds 1-100 has a call recovered after the faults")
}

// TestDemoRuleTableAligned: the fault half's rule table keeps its columns
// under their headings for every rule, the longest ID included.
func TestDemoRuleTableAligned(t *testing.T) {
	tab := newRuleTable()
	for _, id := range tab.ids {
		tab.counts[id][0] = 200
	}
	var b strings.Builder
	if err := tab.write(&b); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
	end := strings.Index(lines[0], "pass") + len("pass")
	for _, l := range lines[1:] {
		if len(l) != len(lines[0]) || l[end-3:end] != "200" {
			t.Errorf("row %q is not under the heading %q", l, lines[0])
		}
	}
}
