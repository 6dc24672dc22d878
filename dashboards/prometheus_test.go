package dashboards

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tasksim/tasksim/load"
)

// TestDashboardQuantilesInPrometheus evaluates every histogram_quantile
// query of grafana-load.json in a real Prometheus (Debian package
// prometheus, started here on loopback, scraping the exporter) after a
// real run, and checks each mode's answer against the run's own HDR
// figure, within the bucket error: the buckets are a factor
// load.PromBucketFactor wide, so an interpolated quantile and the HDR
// value share a bucket. It skips without prometheus.
//
// Nothing here depends on the machine's speed: the run is bounded by its
// task count; Prometheus scrapes every series at 0 before the first task
// and at its final value after the last (waited for as events, not
// durations), so that rate() over the whole run counts every observation
// in every bucket, whenever the scrapes fell; and the case of the old
// buckets is checked on fixed observations.
func TestDashboardQuantilesInPrometheus(t *testing.T) {
	bin, err := exec.LookPath("prometheus")
	if err != nil {
		t.Skip("prometheus not found (apt-get install prometheus): the dashboard's quantile queries are not evaluated")
	}
	ctx := testContext(t)
	prom := load.NewProm()
	exporter := serveExporter(t, prom)
	// Started after the exporter, so stopped before it.
	api := startPrometheus(ctx, t, bin, strings.TrimPrefix(exporter, "http://"))

	modes, err := load.ParseModes("poll:1s,poll:200ms,sse,partial")
	if err != nil {
		t.Fatal(err)
	}
	dur, err := load.ParseDurationDist("300ms..1.3s")
	if err != nil {
		t.Fatal(err)
	}
	cfg := load.Config{Modes: modes, Rate: 10, Tasks: 30, Sessions: 2, Seed: 5,
		Timeout: load.Duration(time.Hour), MaxLag: load.Duration(time.Hour),
		Shape: load.Shape{Chunks: load.FixedInt(5), ChunkSize: load.FixedInt(16), Duration: dur}}

	// The case of the old buckets, on fixed times to result: sse's
	// (uniform over the tasks' 300 ms..1.3 s) and poll:1s's (the same, plus
	// up to a poll interval). With the old 1-2.5-5 buckets both p99s were
	// the same 2.485 s line.
	const caseSSE, casePoll = "case:sse", "case:poll:1s"
	declared := load.Progress{Modes: []load.ModeProgress{{Name: caseSSE}, {Name: casePoll}}}
	for _, m := range modes {
		declared.Modes = append(declared.Modes, load.ModeProgress{Name: m.Name})
	}
	prom.Interval(declared) // every series, at 0
	since := time.Now()
	awaitExporter(ctx, t, api, exporter, len(declared.Modes))

	for k := range 100 {
		d := 300*time.Millisecond + time.Duration(k)*10*time.Millisecond
		prom.Ended(caseSSE, load.TaskEnd{OK: true, TTFP: d / 5, TTR: d + 20*time.Millisecond})
		prom.Ended(casePoll, load.TaskEnd{OK: true, TTFP: d / 5, TTR: d + time.Duration(k*37%100)*10*time.Millisecond})
	}
	res, err := load.Run(ctx, cfg, load.Options{Targets: []load.Target{{URL: referenceServer(t), Label: "in-process"}}, Observer: prom})
	if err != nil {
		t.Fatal(err)
	}
	awaitExporter(ctx, t, api, exporter, len(declared.Modes))
	// A rate window that holds every sample since the zero one.
	window := fmt.Sprintf("%ds", int(time.Since(since)/time.Second)+60)

	quantile := regexp.MustCompile(`^histogram_quantile\(([0-9.]+),.*\b(tasksim_load_[a-z_]+)_bucket\b`)
	checked := 0
	for path, expr := range dashboardQueries(t, GrafanaLoad()) {
		m := quantile.FindStringSubmatch(expr)
		if m == nil {
			continue
		}
		q, _ := strconv.ParseFloat(m[1], 64)
		pick := map[string]func(*load.ModeResult) load.Stats{
			load.PromTTR:       func(r *load.ModeResult) load.Stats { return r.TTR },
			load.PromTTFP:      func(r *load.ModeResult) load.Stats { return r.TTFP },
			load.PromDiscovery: func(r *load.ModeResult) load.Stats { return r.Discovery },
			load.PromLag:       func(r *load.ModeResult) load.Stats { return r.Lag },
		}[m[2]]
		if pick == nil {
			t.Errorf("%s: no HDR figure for %s", path, m[2])
			continue
		}
		// Grafana's variables: every mode, a rate window over the run.
		e := strings.NewReplacer(`"$mode"`, `".*"`, "$mode", ".*", "$__rate_interval", window).Replace(expr)
		got := query(ctx, t, api, e)
		for i := range res.Modes {
			mr := &res.Modes[i]
			st := pick(mr)
			if st.Count == 0 {
				continue
			}
			want := st.P50
			if q == 0.99 {
				want = st.P99
			} else if q != 0.5 {
				t.Fatalf("%s: quantile %g: the test knows 0.5 and 0.99", path, q)
			}
			want /= 1000 // ms -> s
			v, ok := got[mr.Name]
			if !ok {
				t.Errorf("%s: no value for %s", e, mr.Name)
				continue
			}
			// Both in one bucket [b, b·f]: they differ by under (f-1)·b;
			// the first bucket starts at 0.
			tol := (load.PromBucketFactor-1)*math.Max(v, want) + load.PromBuckets()[0]
			if math.Abs(v-want) > tol {
				t.Errorf("%s %s p%g: Prometheus %.4gs, HDR %.4gs (tolerance %.3gs)", mr.Name, m[2], q*100, v, want, tol)
			}
			checked++
		}
	}
	if checked < 12 {
		t.Errorf("%d quantiles checked, want every quantile panel for every mode", checked)
	}
	p99 := query(ctx, t, api, `histogram_quantile(0.99, sum by (mode, le) (rate(`+load.PromTTR+`_bucket[`+window+`])))`)
	if p99[caseSSE] >= p99[casePoll]*0.8 {
		t.Errorf("p99 time to result: sse %.3gs, poll:1s %.3gs: the buckets do not tell them apart", p99[caseSSE], p99[casePoll])
	}
}

// awaitExporter waits until Prometheus holds what the exporter serves
// now: for every metric of load.Prom (a histogram's _count), its sum over
// the series and their number, modes of them.
func awaitExporter(ctx context.Context, t *testing.T, api, exporter string, modes int) {
	t.Helper()
	sums := scrape(t, exporter+"/metrics")
	var conds []string
	for _, name := range load.PromMetrics() {
		if _, hist := sums[name+"_count"]; hist {
			name += "_count"
		}
		v, ok := sums[name]
		if !ok {
			t.Fatalf("the exporter serves no %s", name)
		}
		conds = append(conds, fmt.Sprintf("sum(%s) == %s and count(%s) == %d", name, strconv.FormatFloat(v, 'g', -1, 64), name, modes))
	}
	awaitQuery(ctx, t, api, strings.Join(conds, " and "))
}

// startPrometheus runs prometheus on a free loopback port, scraping target
// every 500 ms, and returns its API's base URL once it is ready. Its
// cleanup stops it and waits for it to exit.
func startPrometheus(ctx context.Context, t *testing.T, bin, target string) string {
	t.Helper()
	dir := t.TempDir()
	cfg := fmt.Sprintf("global:\n  scrape_interval: 500ms\n  scrape_timeout: 500ms\nscrape_configs:\n  - job_name: tasksim\n    static_configs:\n      - targets: [%q]\n", target)
	if err := os.WriteFile(filepath.Join(dir, "prometheus.yml"), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	stop, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(stop, bin, "--config.file="+filepath.Join(dir, "prometheus.yml"), "--storage.tsdb.path="+filepath.Join(dir, "data"),
		"--web.listen-address="+addr, "--log.level=warn")
	cmd.Cancel = func() error { return cmd.Process.Signal(os.Interrupt) }
	cmd.WaitDelay = 10 * time.Second // then killed
	if testing.Verbose() {
		cmd.Stderr = os.Stderr
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cancel(); _ = cmd.Wait() })
	api := "http://" + addr
	await(ctx, t, "prometheus ready at "+api, func() bool {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, api+"/-/ready", nil)
		if err != nil {
			t.Fatal(err)
		}
		r, err := http.DefaultClient.Do(req)
		if err != nil {
			return false
		}
		r.Body.Close()
		return r.StatusCode == http.StatusOK
	})
	return api
}

// await polls cond until it holds, or fails the test once ctx ends.
func await(ctx context.Context, t *testing.T, what string, cond func() bool) {
	t.Helper()
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for !cond() {
		select {
		case <-ctx.Done():
			t.Fatalf("never saw %s: %v", what, context.Cause(ctx))
		case <-tick.C:
		}
	}
}

// awaitQuery polls a PromQL condition until it returns a sample.
func awaitQuery(ctx context.Context, t *testing.T, api, cond string) {
	t.Helper()
	await(ctx, t, "in prometheus: "+cond, func() bool { return len(query(ctx, t, api, cond)) > 0 })
}

// query evaluates expr now and returns its samples by mode label.
func query(ctx context.Context, t *testing.T, api, expr string) map[string]float64 {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, api+"/api/v1/query?query="+url.QueryEscape(expr), nil)
	if err != nil {
		t.Fatal(err)
	}
	r, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Body.Close()
	var body struct {
		Status string `json:"status"`
		Error  string `json:"error"`
		Data   struct {
			Result []struct {
				Metric map[string]string `json:"metric"`
				Value  [2]any            `json:"value"`
			} `json:"result"`
		} `json:"data"`
	}
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
		t.Fatal(err)
	}
	if body.Status != "success" {
		t.Fatalf("query %s: %s", expr, body.Error)
	}
	out := map[string]float64{}
	for _, s := range body.Data.Result {
		str, _ := s.Value[1].(string)
		v, err := strconv.ParseFloat(str, 64)
		if err != nil {
			t.Fatalf("query %s: value %v", expr, s.Value[1])
		}
		k := s.Metric["mode"]
		if k == "" {
			k = s.Metric["__name__"]
		}
		out[k] = v
	}
	return out
}
