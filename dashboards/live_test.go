package dashboards

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/tasksim/tasksim/load"

	"github.com/tasksim/tasksim/internal/headless"
)

// TestLiveProgress: /progress answers the latest figures in milliseconds,
// with a tasks/s history per mode; / is the page; other paths are 404.
func TestLiveProgress(t *testing.T) {
	live := NewLive("test run")
	for _, tps := range []float64{5, 7} {
		live.Update(load.Progress{Elapsed: 2 * time.Second, Started: 9, Modes: []load.ModeProgress{
			{Name: "sse", Started: 9, Completed: 8, InFlight: 1, TasksPerSec: tps, TTRP50: 150 * time.Millisecond, TTRP99: 300 * time.Millisecond, LagMax: 250 * time.Microsecond},
		}})
	}
	ts := httptest.NewServer(live)
	defer ts.Close()
	resp, err := http.Get(ts.URL + "/progress")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var got LiveProgress
	if err := json.NewDecoder(resp.Body).Decode(&got); err != nil {
		t.Fatal(err)
	}
	m := got.Modes[0]
	if got.Title != "test run" || got.Updates != 2 || got.ElapsedMs != 2000 || m.Name != "sse" || m.TTRP50Ms != 150 || m.TTRP99Ms != 300 ||
		m.LagMaxMs != 0.25 || m.InFlight != 1 || len(m.History) != 2 || m.History[1] != 7 {
		t.Errorf("progress %+v", got)
	}
	for path, want := range map[string]int{"/": 200, "/nope": 404} {
		r, err := http.Get(ts.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		r.Body.Close()
		if r.StatusCode != want {
			t.Errorf("GET %s: %d, want %d", path, r.StatusCode, want)
		}
	}
}

// chromiumArgs are the flags of a headless, offline-friendly Chromium.
func chromiumArgs(t *testing.T, extra ...string) []string {
	return append([]string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--user-data-dir=" + t.TempDir(), "--virtual-time-budget=5000"}, extra...)
}

// TestLivePageChromium runs live.html in headless Chromium while a real
// load runs: the DOM it renders has a row for every mode with non-zero
// figures (tasks done, time to result). It skips without /usr/bin/chromium
// (Debian package chromium). TASKSIM_DASH_SCREENSHOT=FILE also saves a
// screenshot.
func TestLivePageChromium(t *testing.T) {
	chromium := headless.Chromium(t) // skips without it; fails under CI=true
	live := NewLive("tasksim load: browser test")
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	hs := &http.Server{Handler: live, ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = hs.Serve(ln) }()
	defer hs.Close()
	url := "http://" + ln.Addr().String() + "/"

	ready := make(chan struct{})
	type outcome struct {
		res *load.Result
		err error
	}
	done := make(chan outcome, 1)
	target := referenceServer(t)
	cfg, err := testConfig(120) // six seconds' worth
	if err != nil {
		t.Fatal(err)
	}
	runCtx := testContext(t)
	go func() {
		var once bool
		// Tasks that all finish, so every interval has results to show.
		res, err := runLoad(runCtx, target, cfg, load.Options{Progress: func(p load.Progress) {
			live.Update(p)
			if !once && p.Completed > 0 && len(p.Modes) > 0 {
				for _, m := range p.Modes {
					if m.Completed == 0 {
						return
					}
				}
				once = true
				close(ready)
			}
		}})
		done <- outcome{res, err}
	}()
	select {
	case <-ready:
	case o := <-done:
		t.Fatalf("the run ended before every mode completed a task: %v %+v", o.err, o.res)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, chromium, chromiumArgs(t, "--dump-dom", url)...).Output()
	if err != nil {
		t.Fatalf("chromium --dump-dom: %v", err)
	}
	dom := string(out)
	if shot := os.Getenv("TASKSIM_DASH_SCREENSHOT"); shot != "" {
		if b, err := exec.CommandContext(ctx, chromium, chromiumArgs(t, "--screenshot="+shot, "--window-size=1200,800", url)...).CombinedOutput(); err != nil {
			t.Errorf("chromium --screenshot: %v\n%s", err, b)
		}
	}
	if o := <-done; o.err != nil {
		t.Fatalf("load run: %v", o.err)
	}

	rowRe := regexp.MustCompile(`(?s)<tr id="mode-([^"]+)"[^>]*>(.*?)</tr>`)
	cellRe := regexp.MustCompile(`<td[^>]*>([^<]*)</td>`)
	rows := map[string][]string{}
	for _, m := range rowRe.FindAllStringSubmatch(dom, -1) {
		var cells []string
		for _, c := range cellRe.FindAllStringSubmatch(m[2], -1) {
			cells = append(cells, c[1])
		}
		rows[m[1]] = cells
	}
	// Text cells (the sparkline's holds an svg): mode, tasks/s, started,
	// done, failed, in flight, ttr p50, ttr p99, discovery p50, discovery
	// p99, lag max.
	for _, mode := range strings.Split(testModes, ",") {
		cells, ok := rows[mode]
		if !ok {
			t.Errorf("no row for %s in the DOM:\n%s", mode, dom)
			continue
		}
		if len(cells) != 11 || cells[0] != mode {
			t.Errorf("%s: cells %q", mode, cells)
			continue
		}
		if cells[3] == "0" || cells[7] == "0" {
			t.Errorf("%s: done %q, ttr p99 %q: want non-zero figures (row %q)", mode, cells[3], cells[7], cells)
		}
	}
	if !strings.Contains(dom, "<polyline") {
		t.Errorf("no sparkline in the DOM")
	}
	t.Logf("rows: %q", rows)
}
