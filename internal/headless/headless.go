package headless

import (
	"context"
	"encoding/json"
	"html"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Width and Height are the window a page is laid out in.
const (
	Width  = 1280
	Height = 900
)

// Chromium returns the path of chromium. Without it the test skips, or,
// with the environment variable CI set to true, fails.
func Chromium(t testing.TB) string {
	t.Helper()
	path, err := exec.LookPath("chromium")
	if err == nil {
		return path
	}
	if os.Getenv("CI") == "true" {
		t.Fatal("chromium not found and CI=true: the browser test cannot run (apt-get install chromium; .ci/run installs it)")
	}
	t.Skip("chromium not found (apt-get install chromium): the page is not laid out in a browser")
	return ""
}

// Args are the flags of a headless, offline Chromium with a Width x
// Height window, then extra.
func Args(t testing.TB, extra ...string) []string {
	return append([]string{"--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking",
		"--disable-component-update", "--disable-sync", "--user-data-dir=" + t.TempDir(), "--virtual-time-budget=3000",
		"--hide-scrollbars", "--window-size=" + strconv.Itoa(Width) + "," + strconv.Itoa(Height)}, extra...)
}

// probeRE finds what the probe wrote in the dumped DOM.
var probeRE = regexp.MustCompile(`(?s)<pre id="probe">(.*?)</pre>`)

// Probe loads page (an HTML document) in chromium with a script added at
// the end of its body that evaluates expr (a JavaScript expression) once
// the page's own scripts ran, and decodes its JSON into out.
func Probe(t testing.TB, chromium string, page []byte, expr string, out any) {
	t.Helper()
	script := `<script>(function () { const p = document.createElement("pre"); p.id = "probe"; p.textContent = JSON.stringify(` + expr + `); document.body.appendChild(p); })();</script>`
	doc := string(page)
	if i := strings.LastIndex(doc, "</body>"); i >= 0 {
		doc = doc[:i] + script + doc[i:]
	} else {
		doc += script
	}
	file := filepath.Join(t.TempDir(), "page.html")
	if err := os.WriteFile(file, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	dom, err := exec.CommandContext(ctx, chromium, Args(t, "--dump-dom", "file://"+file)...).Output()
	if err != nil {
		t.Fatalf("chromium --dump-dom: %v", err)
	}
	m := probeRE.FindSubmatch(dom)
	if m == nil {
		t.Fatalf("the probe did not run:\n%.800s", dom)
	}
	if err := json.Unmarshal([]byte(html.UnescapeString(string(m[1]))), out); err != nil {
		t.Fatalf("probe %s: %v", m[1], err)
	}
}
