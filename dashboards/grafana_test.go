package dashboards

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tasksim/tasksim/internal/refserver"
	"github.com/tasksim/tasksim/load"
)

// referenceServer serves the reference server in-process.
func referenceServer(t *testing.T) string {
	t.Helper()
	url, _ := refserver.Start(t, nil)
	return url
}

// testModes are every kind of mode, so that every metric has a mode that
// moves it (segments: sse; partials: partial; discovery: poll).
const testModes = "poll:100ms,sse,partial"

// shortRun is a real run of testModes for d against the in-process
// reference server.
// Tasks take 80 to 400ms and time out after 300ms, so that some fail.
func shortRun(t *testing.T, d time.Duration, opts load.Options) *load.Result {
	t.Helper()
	// A task timeout shorter than some tasks, so the failure counter moves.
	res, err := runLoad(referenceServer(t), d, 300*time.Millisecond, opts)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// runLoad runs a short load against url, each task given timeout; it may
// run off the test's goroutine, so it reports errors instead of failing the
// test.
func runLoad(url string, d, timeout time.Duration, opts load.Options) (*load.Result, error) {
	modes, err := load.ParseModes(testModes)
	if err != nil {
		return nil, err
	}
	interval, err := load.ParseDurationDist("20ms..100ms")
	if err != nil {
		return nil, err
	}
	cfg := load.Config{
		Modes: modes, Rate: 20, Duration: load.Duration(d), Sessions: 2, Seed: 3, Timeout: load.Duration(timeout),
		Interval: load.Duration(250 * time.Millisecond),
		Shape:    load.Shape{Chunks: load.FixedInt(4), ChunkSize: load.FixedInt(16), Interval: interval},
	}
	opts.Targets = []load.Target{{URL: url, Label: "in-process"}}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	return load.Run(ctx, cfg, opts)
}

// dashboardQueries returns every PromQL expression of a Grafana dashboard:
// panel targets' expr and templating queries, by JSON path.
func dashboardQueries(t *testing.T, model []byte) map[string]string {
	t.Helper()
	var v any
	if err := json.Unmarshal(model, &v); err != nil {
		t.Fatalf("grafana-load.json: %v", err)
	}
	out := map[string]string{}
	var walk func(path string, v any)
	walk = func(path string, v any) {
		switch x := v.(type) {
		case map[string]any:
			for k, c := range x {
				s, isStr := c.(string)
				switch {
				case isStr && k == "expr", isStr && k == "definition" && strings.Contains(path, "templating"):
					out[path+"."+k] = s
				case k == "query" && strings.Contains(path, "templating"):
					if m, ok := c.(map[string]any); ok {
						if q, ok := m["query"].(string); ok {
							out[path+".query"] = q
						}
					}
				}
				walk(path+"."+k, c)
			}
		case []any:
			for i, c := range x {
				walk(path+"["+strconv.Itoa(i)+"]", c)
			}
		}
	}
	walk("$", v)
	return out
}

var (
	promStrings  = regexp.MustCompile(`"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'`)
	promMatchers = regexp.MustCompile(`\{[^{}]*\}`)
	promRanges   = regexp.MustCompile(`\[[^\[\]]*\]`)
	promNumbers  = regexp.MustCompile(`\b[0-9][0-9A-Za-z_.]*`)
	promGrouping = regexp.MustCompile(`\b(?:by|without|on|ignoring|group_left|group_right)\s*\([^()]*\)`)
	promIdent    = regexp.MustCompile(`[A-Za-z_:][A-Za-z0-9_:]*(\s*\()?`)
	promKeywords = []string{"by", "without", "on", "ignoring", "group_left", "group_right", "offset", "bool", "and", "or", "unless", "inf", "nan"}
)

// metricNames are the metric names a PromQL expression selects: the
// identifiers left once strings, label matchers, ranges, grouping
// clauses, function names and keywords are taken out.
func metricNames(expr string) []string {
	s := promStrings.ReplaceAllString(expr, " ")
	s = promMatchers.ReplaceAllString(s, " ")
	s = promRanges.ReplaceAllString(s, " ")
	s = promNumbers.ReplaceAllString(s, " ")
	s = promGrouping.ReplaceAllString(s, " ")
	var names []string
	for _, m := range promIdent.FindAllStringSubmatch(s, -1) {
		if m[1] != "" || slices.Contains(promKeywords, strings.ToLower(m[0])) {
			continue // a function call, or a keyword
		}
		if !slices.Contains(names, m[0]) {
			names = append(names, m[0])
		}
	}
	return names
}

func TestMetricNames(t *testing.T) {
	for _, tc := range []struct{ name, expr, want string }{
		{"quantile", `histogram_quantile(0.99, sum by (mode, le) (rate(a_seconds_bucket{mode=~"$mode"}[$__rate_interval])))`, "a_seconds_bucket"},
		{"ratio", `rate(x_sum[1m]) / rate(x_count[1m])`, "x_sum,x_count"},
		{"gauge", `sum without (instance) (g{job="j", mode!="a,b"})`, "g"},
		{"label_values", `label_values(c_total, mode)`, "c_total,mode"},
		{"keywords", `a offset 5m unless on (mode) b > bool 1`, "a,b"},
		{"number", `x2_total * 1e3 + 0.5`, "x2_total"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := strings.Join(metricNames(tc.expr), ","); got != tc.want {
				t.Errorf("metricNames(%q) = %q, want %q", tc.expr, got, tc.want)
			}
		})
	}
}

// scrape reads an exposition in text format and sums every series by
// metric name (histogram series keep their _bucket, _sum, _count names).
func scrape(t *testing.T, url string) map[string]float64 {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %s", url, resp.Status)
	}
	sums := map[string]float64{}
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		name := line[:strings.IndexAny(line, "{ ")]
		f := strings.Fields(line[strings.LastIndex(line, "}")+1:])
		if len(f) == 0 {
			t.Fatalf("exposition line %q", line)
		}
		v, err := strconv.ParseFloat(f[0], 64)
		if err != nil {
			t.Fatalf("exposition line %q: %v", line, err)
		}
		sums[name] += v
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return sums
}

// TestGrafanaMetricsMove: every metric that a query of grafana-load.json
// names is one load.Prom exports, and after a real run against the
// in-process reference server it exists on the exporter and moved (was
// non-zero in some scrape: in flight is back to 0 at the end); some
// tasks time out, so that the failed counter moves too. The
// dashboard uses every exported metric.
func TestGrafanaMetricsMove(t *testing.T) {
	queries := dashboardQueries(t, GrafanaLoad)
	if len(queries) < 10 {
		t.Fatalf("%d queries in grafana-load.json: %v", len(queries), queries)
	}
	prom := load.NewProm()
	exporter := httptest.NewServer(prom.Handler())
	defer exporter.Close()

	moved := map[string]bool{}
	seen := map[string]bool{}
	var mu sync.Mutex
	record := func() {
		s := scrape(t, exporter.URL+"/metrics")
		mu.Lock()
		defer mu.Unlock()
		for name, v := range s {
			seen[name] = true
			moved[name] = moved[name] || v != 0
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() {
		tick := time.NewTicker(100 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
				record()
			}
		}
	})
	res := shortRun(t, 1500*time.Millisecond, load.Options{Observer: prom})
	cancel()
	wg.Wait()
	record()
	for _, m := range res.Modes {
		if m.Completed == 0 || m.Failed == 0 {
			t.Fatalf("%s: no task completed: %+v", m.Name, m)
		}
	}

	used := map[string]bool{}
	for path, q := range queries {
		names := metricNames(q)
		if len(names) == 0 {
			t.Errorf("%s: no metric in %q", path, q)
		}
		for _, name := range names {
			if name == "mode" && strings.HasPrefix(q, "label_values(") {
				continue // label_values' label argument
			}
			family := strings.TrimSuffix(strings.TrimSuffix(strings.TrimSuffix(name, "_bucket"), "_sum"), "_count")
			if !slices.Contains(load.PromMetrics, name) && !slices.Contains(load.PromMetrics, family) {
				t.Errorf("%s: %q queries %s, which load.Prom does not export", path, q, name)
				continue
			}
			used[family] = true
			switch {
			case !seen[name]:
				t.Errorf("%s: %s does not exist on the exporter after the run", path, name)
			case !moved[name]:
				t.Errorf("%s: %s never moved during the run", path, name)
			}
		}
	}
	for _, name := range load.PromMetrics {
		if !used[name] {
			t.Errorf("grafana-load.json has no panel over %s", name)
		}
	}
}
