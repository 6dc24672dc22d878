package load

import (
	"strings"
	"testing"
)

func TestParseThreshold(t *testing.T) {
	cases := []struct {
		name string
		expr string
		want Threshold
	}{
		{"sse ttr p99 in ms", "sse.ttr.p99<50ms", Threshold{Mode: "sse", Metric: MetricTTR, Stat: StatP99, Op: "<", Value: 50}},
		{"seconds", "partial.ttfp.p50<=1.5s", Threshold{Mode: "partial", Metric: MetricTTFP, Stat: StatP50, Op: "<=", Value: 1500}},
		{"microseconds", "sse.lag.max<200us", Threshold{Mode: "sse", Metric: MetricLag, Stat: StatMax, Op: "<", Value: 0.2}},
		{"plain number is ms", "sse.discovery.mean<2", Threshold{Mode: "sse", Metric: MetricDiscovery, Stat: StatMean, Op: "<", Value: 2}},
		{"poll mode with a dotted interval", "poll:1.5s.discovery.p999>=100ms", Threshold{Mode: "poll:1.5s", Metric: MetricDiscovery, Stat: StatP999, Op: ">=", Value: 100}},
		{"poll interval normalised", "poll:1000ms.requests.mean<13", Threshold{Mode: "poll:1s", Metric: MetricRequests, Stat: StatMean, Op: "<", Value: 13}},
		{"requests p90", "poll:100ms.requests.p90>2", Threshold{Mode: "poll:100ms", Metric: MetricRequests, Stat: StatP90, Op: ">", Value: 2}},
		{"bytes in KiB", "partial.bytes.mean<4KiB", Threshold{Mode: "partial", Metric: MetricBytes, Stat: StatMean, Op: "<", Value: 4096}},
		{"bytes in kB", "sse.bytes.mean<=2.5kB", Threshold{Mode: "sse", Metric: MetricBytes, Stat: StatMean, Op: "<=", Value: 2500}},
		{"plain bytes", "sse.bytes.mean<900", Threshold{Mode: "sse", Metric: MetricBytes, Stat: StatMean, Op: "<", Value: 900}},
		{"cpu mean", "immediate.cpu.mean<1ms", Threshold{Mode: "immediate", Metric: MetricCPU, Stat: StatMean, Op: "<", Value: 1}},
		{"spaces ignored", " sse.ttr.p99 < 50ms ", Threshold{Mode: "sse", Metric: MetricTTR, Stat: StatP99, Op: "<", Value: 50}},
		{"streaming alias", "streaming.ttr.p50<1s", Threshold{Mode: "sse", Metric: MetricTTR, Stat: StatP50, Op: "<", Value: 1000}},
		// The table's column names; ttfp and ttr stay as aliases.
		{"first, as the table says", "sse.first.p99<2s", Threshold{Mode: "sse", Metric: MetricTTFP, Stat: StatP99, Op: "<", Value: 2000}},
		{"result, as the table says", "poll:1s.result.p50<=2s", Threshold{Mode: "poll:1s", Metric: MetricTTR, Stat: StatP50, Op: "<=", Value: 2000}},
		{"req, as the table says", "sse.req.mean<=1", Threshold{Mode: "sse", Metric: MetricRequests, Stat: StatMean, Op: "<=", Value: 1}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseThreshold(tc.expr)
			if err != nil {
				t.Fatal(err)
			}
			tc.want.Expr = tc.expr
			if got != tc.want {
				t.Errorf("ParseThreshold(%q) = %+v, want %+v", tc.expr, got, tc.want)
			}
		})
	}
}

func TestParseThresholdErrors(t *testing.T) {
	cases := []struct {
		name, expr, want string
	}{
		{"empty", "", "no comparison"},
		{"no comparison", "sse.ttr.p99", "no comparison"},
		{"equality", "sse.ttr.p99=50ms", `comparison "="`},
		{"not equal", "sse.ttr.p99!=50ms", `comparison "!="`},
		{"double comparison", "sse.ttr.p99<<50ms", "more than one comparison"},
		{"range", "10ms<sse.ttr.p99<50ms", "more than one comparison"},
		{"value first", "50ms>sse.ttr.p99", "want MODE.METRIC.STAT"},
		{"no value", "sse.ttr.p99<", "no value"},
		{"missing stat", "sse.ttr<50ms", "want MODE.METRIC.STAT"},
		{"unknown mode", "warp.ttr.p99<50ms", `unknown mode "warp"`},
		{"bad poll interval", "poll:fast.ttr.p99<50ms", "poll interval"},
		{"unknown metric", "sse.latency.p99<50ms", `unknown metric "latency"`},
		{"unknown stat", "sse.ttr.p95<50ms", `unknown statistic "p95"`},
		{"bytes percentile", "sse.bytes.p99<4KiB", "use bytes.mean"},
		{"cpu max", "sse.cpu.max<1ms", "use cpu.mean"},
		{"bad duration", "sse.ttr.p99<50 parsecs", "want a duration"},
		{"negative", "sse.ttr.p99<-5", "must not be negative"},
		{"requests with a unit", "sse.requests.mean<3ms", "plain number of requests"},
		{"bad bytes unit", "sse.bytes.mean<3Kb", "number of bytes"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseThreshold(tc.expr)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("ParseThreshold(%q) error %v, want one mentioning %q", tc.expr, err, tc.want)
			}
		})
	}
}

func TestCheckThresholds(t *testing.T) {
	r := &Result{Modes: []ModeResult{
		{Name: "sse", Completed: 10, TTR: Stats{Count: 10, P99: 40, Mean: 20}, Wire: Wire{BytesPerTask: 3000}},
		{Name: "poll:1s", Completed: 0},
	}}
	cases := []struct {
		name     string
		expr     string
		wantPass bool
		wantNote string
	}{
		{"below", "sse.ttr.p99<50ms", true, ""},
		{"above", "sse.ttr.p99<30ms", false, ""},
		{"equal with <=", "sse.ttr.p99<=40ms", true, ""},
		{"equal with <", "sse.ttr.p99<40", false, ""},
		{"greater", "sse.ttr.mean>10ms", true, ""},
		{"bytes", "sse.bytes.mean<2.9kB", false, ""},
		{"no data fails", "poll:1s.ttr.p99<1h", false, "no completed task"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			th, err := ParseThreshold(tc.expr)
			if err != nil {
				t.Fatal(err)
			}
			got, err := CheckThresholds(r, []Threshold{th})
			if err != nil {
				t.Fatal(err)
			}
			if got[0].Pass != tc.wantPass || !strings.Contains(got[0].Note, tc.wantNote) {
				t.Errorf("%s: %+v, want pass %v note %q", tc.expr, got[0], tc.wantPass, tc.wantNote)
			}
		})
	}
	for _, expr := range []string{"partial.ttr.p99<1s", "sse.cpu.mean<1ms"} {
		th, _ := ParseThreshold(expr)
		if _, err := CheckThresholds(r, []Threshold{th}); err == nil {
			t.Errorf("%s: no error for a mode or metric the run lacks", expr)
		}
	}
}
