package load

import (
	"bytes"
	"context"
	"html"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/tasksim/tasksim/internal/headless"
)

// layoutCheck is appended to a copy of the report (the report itself has
// no scripts): it lists, in #layout, everything that does not fit at the
// window's width: a page wider than the window, a table wider than the
// body, an SVG text (tick label, legend, title) outside its plot.
const layoutCheck = `<script>
const bad = [];
const de = document.documentElement;
if (de.scrollWidth > window.innerWidth) bad.push("page " + de.scrollWidth + "px wide in a " + window.innerWidth + "px window");
for (const t of document.querySelectorAll("table")) {
  const r = t.getBoundingClientRect(), b = document.body.getBoundingClientRect();
  if (r.right > b.right + 1 || t.scrollWidth > t.clientWidth + 1) bad.push("table " + t.className + " " + Math.round(r.width) + "px, body " + Math.round(b.width) + "px");
}
document.querySelectorAll("svg").forEach((s, i) => {
  const sr = s.getBoundingClientRect();
  for (const t of s.querySelectorAll("text")) {
    const r = t.getBoundingClientRect();
    if (!t.textContent.trim()) continue;
    if (r.left < sr.left - 1 || r.right > sr.right + 1 || r.top < sr.top - 1 || r.bottom > sr.bottom + 1)
      bad.push("svg " + (i+1) + ": text " + JSON.stringify(t.textContent) + " outside its plot by " + [sr.left-r.left, r.right-sr.right, sr.top-r.top, r.bottom-sr.bottom].map(Math.round).join(","));
  }
});
const p = document.createElement("pre");
p.id = "layout";
p.textContent = bad.length ? bad.join("\n") : "fits";
document.body.appendChild(p);
</script>`

// TestHTMLReportInChromium renders the report of a four-mode run in
// headless Chromium at 1280 px: the page and its summary table fit the
// window, no plot text is clipped, and a screenshot has the window's size.
// It skips without chromium (Debian package chromium).
func TestHTMLReportInChromium(t *testing.T) {
	chromium := headless.Chromium(t) // skips without it; fails under CI=true
	url := referenceServer(t)
	ctx, cancel := context.WithTimeout(t.Context(), 90*time.Second)
	defer cancel()
	cfg := Config{
		Modes: mustModes(t, "poll:100ms,poll:50ms,sse,partial"),
		Rate:  40, Tasks: 12, Sessions: 2, Seed: 3, Interval: Duration(100 * time.Millisecond),
		Shape: Shape{Chunks: FixedInt(3), ChunkSize: FixedInt(16), Interval: mustDurationDist(t, "10ms..40ms")},
	}
	res, err := Run(ctx, cfg, Options{Targets: []Target{{URL: url, Label: "in-process"}}})
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := HTMLReporter(res)(&buf); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	page := filepath.Join(dir, "report.html")
	checked := strings.Replace(buf.String(), "</body>", layoutCheck+"</body>", 1)
	if err := os.WriteFile(page, []byte(checked), 0o644); err != nil {
		t.Fatal(err)
	}
	args := []string{"--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking",
		"--disable-component-update", "--disable-sync", "--user-data-dir=" + t.TempDir(), "--virtual-time-budget=3000",
		"--hide-scrollbars", "--window-size=1280,900"}
	out, err := exec.CommandContext(ctx, chromium, append(args, "--dump-dom", "file://"+page)...).Output()
	if err != nil {
		t.Fatalf("chromium --dump-dom: %v", err)
	}
	m := regexp.MustCompile(`(?s)<pre id="layout">(.*?)</pre>`).FindSubmatch(out)
	if m == nil {
		t.Fatalf("the layout check did not run:\n%.500s", out)
	}
	if got := html.UnescapeString(string(m[1])); got != "fits" {
		t.Errorf("the report does not fit 1280 px:\n%s", got)
	}
	shot := filepath.Join(dir, "report.png")
	if b, err := exec.CommandContext(ctx, chromium, append(args, "--screenshot="+shot, "file://"+filepath.Join(dir, "report.html"))...).CombinedOutput(); err != nil {
		t.Fatalf("chromium --screenshot: %v\n%s", err, b)
	}
	f, err := os.Open(shot)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	c, err := png.DecodeConfig(f)
	if err != nil {
		t.Fatal(err)
	}
	if c.Width != 1280 || c.Height != 900 {
		t.Errorf("screenshot %dx%d, want 1280x900", c.Width, c.Height)
	}
	if s := os.Getenv("TASKSIM_REPORT_SCREENSHOT"); s != "" {
		b, _ := os.ReadFile(shot)
		_ = os.WriteFile(s, b, 0o644)
	}
}
