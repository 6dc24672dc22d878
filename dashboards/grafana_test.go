package dashboards

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
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
	"github.com/tasksim/tasksim/mcp/server"
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

// testConfig is a run of testModes: tasks tasks per mode at 20 a second,
// each with a drawn shape. The run is bounded by its task count, not by a
// duration, and no start lag or task timeout is one a slow machine can
// reach: a loaded machine runs the same tasks, only later.
func testConfig(tasks int64) (load.Config, error) {
	modes, err := load.ParseModes(testModes)
	if err != nil {
		return load.Config{}, err
	}
	interval, err := load.ParseDurationDist("20ms..100ms")
	if err != nil {
		return load.Config{}, err
	}
	return load.Config{
		Modes: modes, Rate: 20, Tasks: tasks, Sessions: 2, Seed: 3,
		Timeout: load.Duration(time.Hour), MaxLag: load.Duration(time.Hour),
		Interval: load.Duration(250 * time.Millisecond),
		Shape:    load.Shape{Chunks: load.FixedInt(4), ChunkSize: load.FixedInt(16), Interval: interval},
	}, nil
}

// runLoad runs cfg against url; it may run off the test's goroutine, so
// it reports errors instead of failing the test.
func runLoad(ctx context.Context, url string, cfg load.Config, opts load.Options) (*load.Result, error) {
	opts.Targets = []load.Target{{URL: url, Label: "in-process"}}
	return load.Run(ctx, cfg, opts)
}

// testContext ends a little before the test binary's deadline (go test
// -timeout), so that a run or a wait that hangs fails with its own message
// and the test's cleanups still run. It bounds a hang; it is no bound on
// how long a slow machine may take.
func testContext(t *testing.T) context.Context {
	t.Helper()
	deadline, ok := t.Deadline()
	if !ok {
		deadline = time.Now().Add(time.Hour)
	}
	margin := min(time.Until(deadline)/4, 30*time.Second)
	ctx, cancel := context.WithDeadline(t.Context(), deadline.Add(-margin))
	t.Cleanup(cancel)
	return ctx
}

// serveExporter serves a Prom's metrics on loopback. Its cleanup closes
// every client connection before Close, so that no scrape in progress (of
// a scraper stopped, or never to read its answer) can block Close;
// cleanups registered after it (a Prometheus scraping it) run before it.
func serveExporter(t *testing.T, prom *load.Prom) string {
	t.Helper()
	exporter := httptest.NewServer(prom.Handler())
	t.Cleanup(func() {
		exporter.CloseClientConnections()
		exporter.Close()
	})
	return exporter.URL
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
	sums, err := scrapeSums(url)
	if err != nil {
		t.Fatal(err)
	}
	return sums
}

// scrapeSums is scrape for any goroutine: it returns its error.
func scrapeSums(url string) (map[string]float64, error) {
	resp, err := http.Get(url)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET %s: %s", url, resp.Status)
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
			return nil, fmt.Errorf("exposition line %q", line)
		}
		v, err := strconv.ParseFloat(f[0], 64)
		if err != nil {
			return nil, fmt.Errorf("exposition line %q: %v", line, err)
		}
		sums[name] += v
	}
	return sums, sc.Err()
}

// scrapeAtFirstStart is a load.Observer that, when each mode's first task
// has started, scrapes the exporter before going on: the in-flight gauge
// is then above 0 in that scrape, however fast or slow the tasks run.
type scrapeAtFirstStart struct {
	*load.Prom
	started sync.Map // mode -> struct{}
	scrape  func()
}

func (o *scrapeAtFirstStart) Started(mode string, lag time.Duration) {
	o.Prom.Started(mode, lag)
	if _, again := o.started.LoadOrStore(mode, struct{}{}); !again {
		o.scrape()
	}
}

// TestGrafanaMetricsMove: every metric that a query of grafana-load.json
// names is one load.Prom exports, and after a real run against the
// in-process reference server it exists on the exporter and moved (was
// non-zero in some scrape: in flight is back to 0 at the end, so the
// exporter is also scraped while each mode's first task runs). Every
// other task fails (slow_text's failAfter), so that the failed counter
// moves whatever the machine's speed. The dashboard uses every exported
// metric.
func TestGrafanaMetricsMove(t *testing.T) {
	queries := dashboardQueries(t, GrafanaLoad())
	if len(queries) < 10 {
		t.Fatalf("%d queries in grafana-load.json: %v", len(queries), queries)
	}
	prom := load.NewProm()
	exporter := serveExporter(t, prom)

	moved := map[string]bool{}
	seen := map[string]bool{}
	var scrapeErrs []error
	var mu sync.Mutex
	record := func() {
		s, err := scrapeSums(exporter + "/metrics")
		mu.Lock()
		defer mu.Unlock()
		if err != nil {
			scrapeErrs = append(scrapeErrs, err)
			return
		}
		for name, v := range s {
			seen[name] = true
			moved[name] = moved[name] || v != 0
		}
	}
	cfg, err := testConfig(30)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Tool = server.ToolSlowText
	cfg.ArgSets = []json.RawMessage{
		json.RawMessage(`{"chunks":4,"chunkSize":16,"intervalMs":50}`),
		json.RawMessage(`{"chunks":4,"chunkSize":16,"intervalMs":50,"failAfter":2}`),
	}
	res, err := runLoad(testContext(t), referenceServer(t), cfg, load.Options{Observer: &scrapeAtFirstStart{Prom: prom, scrape: record}})
	if err != nil {
		t.Fatal(err)
	}
	record()
	if len(scrapeErrs) > 0 {
		t.Fatalf("scraping the exporter: %v", errors.Join(scrapeErrs...))
	}
	for _, m := range res.Modes {
		if m.Completed == 0 || m.Failed == 0 {
			t.Fatalf("%s: %d tasks completed and %d failed, want some of each: %+v", m.Name, m.Completed, m.Failed, m)
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
			if !slices.Contains(load.PromMetrics(), name) && !slices.Contains(load.PromMetrics(), family) {
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
	for _, name := range load.PromMetrics() {
		if !used[name] {
			t.Errorf("grafana-load.json has no panel over %s", name)
		}
	}
}
