package timeline

import (
	"bytes"
	"context"
	"encoding/json"
	"html"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/tasksim/tasksim/check"
	"github.com/tasksim/tasksim/internal/headless"
	"github.com/tasksim/tasksim/sim"
	"github.com/tasksim/tasksim/traces"
)

// errorCatcher goes first in the page's head: it keeps every script
// error for the probe.
const errorCatcher = `<script>window.tlErrors = []; window.addEventListener("error", function (e) { window.tlErrors.push(String(e.message)); });</script>`

// probe goes last in the body: it clicks a violating row, then writes
// what the DOM holds into #probe as JSON.
const probe = `<script>
const q = function (s) { return document.querySelectorAll(s).length; };
const runs = Array.from(document.querySelectorAll(".tl-run"));
const hit = document.querySelector(".tl-violation .tl-label");
if (hit) hit.dispatchEvent(new MouseEvent("click", {bubbles: true}));
const p = document.createElement("pre");
p.id = "probe";
p.textContent = JSON.stringify({
  errors: window.tlErrors, runs: runs.length, ready: runs.filter(function (r) { return r.dataset.ready === "1"; }).length,
  lanes: q(".tl-lane"), arrows: q("line.tl-arrow"), faults: q(".tl-fault"), violations: q(".tl-row.tl-violation"),
  scripts: q("script"), imgs: q("img"), title: document.title,
  details: runs.length ? runs[0].querySelector(".tl-details").textContent : "",
  chosen: q(".tl-chosen"), wide: document.documentElement.scrollWidth > window.innerWidth
});
document.body.appendChild(p);
</script>`

type probed struct {
	Errors                            []string
	Runs, Ready                       int
	Lanes, Arrows, Faults, Violations int
	Scripts, Imgs                     int
	Title, Details                    string
	Chosen                            int
	Wide                              bool
}

// counts is what a run's picture must hold: its lanes, arrows, fault
// marks and violating rows, from its records and verdict.
func counts(recs []traces.Record, v *check.Verdict) (lanes, arrows, faults, viol int) {
	keys := map[string]bool{}
	for _, r := range recs {
		k, _ := laneKey(r)
		keys[k] = true
		if r.Kind == traces.KindFault {
			faults++
		} else if isMessage(r.Kind) && r.Dir != traces.DirNone {
			arrows++
		}
	}
	return len(keys), arrows, faults, len(violations(v))
}

// TestTimelineInChromium loads a page with two runs in headless
// Chromium: the checker fixture that breaks S1905-SEQNR with hostile
// text added, and a simulator run whose faults acted. The scripts run
// without error, the DOM holds every lane, arrow, fault mark and
// violating row, a click on a violating row shows its record, nothing
// from the traces became markup (no <img>, the title unchanged, only the
// page's scripts) and the page is no wider than the window. It skips
// without chromium (Debian package chromium; .ci/run installs it), and
// fails without it under CI=true (internal/headless).
// TASKSIM_TIMELINE_SCREENSHOT=FILE also saves a screenshot.
func TestTimelineInChromium(t *testing.T) {
	chromium := headless.Chromium(t)
	fix, fixRecs := fixtureRun(t, nil)
	res, err := sim.Run(t.Context(), sim.Draw(5, nil, nil), nil)
	if err != nil {
		t.Fatal(err)
	}
	simRun, err := FromTrace(res.Trace, "tasksim sim --seed 5", nil)
	if err != nil {
		t.Fatal(err)
	}
	simRun.Verdict = res.Verdict
	rd, err := traces.NewReader(bytes.NewReader(res.Trace))
	if err != nil {
		t.Fatal(err)
	}
	var simRecs []traces.Record
	for r, err := range rd.Records() {
		if err != nil {
			t.Fatal(err)
		}
		simRecs = append(simRecs, r)
	}
	fl, fa, ff, fv := counts(fixRecs, fix.Verdict)
	sl, sa, sf, sv := counts(simRecs, res.Verdict)
	if sf == 0 {
		t.Fatal("seed 5 should have faults that acted")
	}

	var buf bytes.Buffer
	if err := Write(&buf, "timeline: browser test", fix, simRun); err != nil {
		t.Fatal(err)
	}
	page := strings.Replace(buf.String(), "<head>", "<head>"+errorCatcher, 1)
	page = strings.Replace(page, "</body>", probe+"</body>", 1)
	dir := t.TempDir()
	file := filepath.Join(dir, "timeline.html")
	if err := os.WriteFile(file, []byte(page), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 90*time.Second)
	defer cancel()
	args := headless.Args(t)
	out, err := exec.CommandContext(ctx, chromium, append(args, "--dump-dom", "file://"+file)...).Output()
	if err != nil {
		t.Fatalf("chromium --dump-dom: %v", err)
	}
	m := regexp.MustCompile(`(?s)<pre id="probe">(.*?)</pre>`).FindSubmatch(out)
	if m == nil {
		t.Fatalf("the probe did not run:\n%.800s", out)
	}
	var got probed
	if err := json.Unmarshal([]byte(html.UnescapeString(string(m[1]))), &got); err != nil {
		t.Fatalf("probe %s: %v", m[1], err)
	}
	if len(got.Errors) > 0 {
		t.Errorf("script errors: %q", got.Errors)
	}
	if got.Runs != 2 || got.Ready != 2 {
		t.Errorf("%d runs, %d set up by the script; want 2, 2", got.Runs, got.Ready)
	}
	if got.Lanes != fl+sl || got.Arrows != fa+sa || got.Faults != ff+sf || got.Violations != fv+sv {
		t.Errorf("DOM: %d lanes, %d arrows, %d fault marks, %d violating rows; want %d, %d, %d, %d",
			got.Lanes, got.Arrows, got.Faults, got.Violations, fl+sl, fa+sa, ff+sf, fv+sv)
	}
	if fv == 0 || !strings.HasPrefix(got.Details, "violates S1905-SEQNR\nrecord ") || got.Chosen != 2 {
		t.Errorf("after a click on a violating row: details %q, %d rows chosen (one per run)", got.Details, got.Chosen)
	}
	if got.Imgs != 0 || got.Scripts != 3 || got.Title != "timeline: browser test" {
		t.Errorf("trace text became markup: %d img, %d scripts (want 3: the catcher, the page's, the probe), title %q", got.Imgs, got.Scripts, got.Title)
	}
	if got.Wide {
		t.Error("the page is wider than a 1280 px window: the picture should scroll in its box")
	}
	if shot := os.Getenv("TASKSIM_TIMELINE_SCREENSHOT"); shot != "" {
		if b, err := exec.CommandContext(ctx, chromium, append(args, "--screenshot="+shot, "file://"+file)...).CombinedOutput(); err != nil {
			t.Errorf("chromium --screenshot: %v\n%s", err, b)
		}
	}
}
