package load

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Stats a threshold may name.
const (
	StatP50  = "p50"
	StatP90  = "p90"
	StatP99  = "p99"
	StatP999 = "p999"
	StatMax  = "max"
	StatMean = "mean"
)

var allStats = []string{StatP50, StatP90, StatP99, StatP999, StatMax, StatMean}

// thresholdMetrics are the names a threshold gives a metric: the table's
// column names (first, result, discovery, req, bytes, cpu, lag; req/task
// reads as requests), and the metrics' own names (ttfp and ttr, the
// names before the table's, are kept so that old thresholds still run).
var thresholdMetrics = map[string]Metric{
	"first": MetricTTFP, "result": MetricTTR, "req": MetricRequests,
	string(MetricTTFP): MetricTTFP, string(MetricTTR): MetricTTR, string(MetricDiscovery): MetricDiscovery,
	string(MetricLag): MetricLag, string(MetricRequests): MetricRequests, string(MetricBytes): MetricBytes, string(MetricCPU): MetricCPU,
}

// Threshold is a pass/fail condition on a run: MODE.METRIC.STAT OP VALUE,
// e.g. sse.result.p99<50ms, sse.first.p99<2s, poll:1s.requests.mean<=13,
// partial.bytes.mean<4KiB.
//
// METRIC is a column of the table: first (time to first content),
// result (time to the whole result), discovery, lag, requests (or req),
// bytes, cpu; ttfp and ttr are older names of first and result. STAT one of p50, p90, p99, p999, max, mean
// (bytes and cpu have mean only); OP one of < <= > >=. VALUE is a number
// in the metric's unit: for latencies and cpu a duration (50ms, 1.5s,
// 200us) or a plain number of milliseconds; for requests a plain number;
// for bytes a number with an optional B, kB, KiB, MB or MiB.
type Threshold struct {
	Expr   string  `json:"expr"`
	Mode   string  `json:"mode"`
	Metric Metric  `json:"metric"`
	Stat   string  `json:"stat"`
	Op     string  `json:"op"`
	Value  float64 `json:"value"` // in the metric's unit: ms, requests or bytes
}

// ParseThreshold reads a threshold expression.
func ParseThreshold(expr string) (Threshold, error) {
	t, err := parseThreshold(strings.Join(strings.Fields(expr), ""))
	if err != nil {
		return Threshold{}, fmt.Errorf("threshold %q: %w", expr, err)
	}
	t.Expr = expr
	return t, nil
}

// parseThreshold reads a threshold expression with no spaces in it: the
// comparison, then the name before it, then the value after it.
func parseThreshold(s string) (Threshold, error) {
	left, op, value, err := splitComparison(s)
	if err != nil {
		return Threshold{}, err
	}
	t, err := parseThresholdName(left, op)
	if err != nil {
		return Threshold{}, err
	}
	t.Op = op
	if value == "" {
		return Threshold{}, fmt.Errorf("no value after %s", op)
	}
	if t.Value, err = parseThresholdValue(t.Metric, value); err != nil {
		return Threshold{}, err
	}
	return t, nil
}

// splitComparison splits s at its one comparison operator.
func splitComparison(s string) (left, op, value string, err error) {
	i := strings.IndexAny(s, "<>=!")
	if i < 0 {
		return "", "", "", errors.New("no comparison (want MODE.METRIC.STAT<VALUE, e.g. sse.result.p99<50ms)")
	}
	op = s[i : i+1]
	if i+1 < len(s) && s[i+1] == '=' {
		op += "="
	}
	if op != "<" && op != "<=" && op != ">" && op != ">=" {
		return "", "", "", fmt.Errorf("comparison %q: want <, <=, > or >=", op)
	}
	left, value = s[:i], s[i+len(op):]
	if strings.ContainsAny(value, "<>=!") {
		return "", "", "", errors.New("more than one comparison")
	}
	return left, op, value, nil
}

// parseThresholdName reads MODE.METRIC.STAT, the name before op.
func parseThresholdName(left, op string) (Threshold, error) {
	j := strings.LastIndexByte(left, '.')
	if j < 0 {
		return Threshold{}, fmt.Errorf("want MODE.METRIC.STAT before %s", op)
	}
	stat := left[j+1:]
	left = left[:j]
	j = strings.LastIndexByte(left, '.')
	if j < 0 {
		return Threshold{}, fmt.Errorf("want MODE.METRIC.STAT before %s", op)
	}
	metric, known := thresholdMetrics[left[j+1:]]
	mode, err := ParseMode(left[:j])
	if err != nil {
		return Threshold{}, err
	}
	if !known {
		return Threshold{}, fmt.Errorf("unknown metric %q (want first, result, discovery, lag, requests, bytes or cpu: the table's columns)", left[j+1:])
	}
	if !slices.Contains(allStats, stat) {
		return Threshold{}, fmt.Errorf("unknown statistic %q (want p50, p90, p99, p999, max or mean)", stat)
	}
	if (metric == MetricBytes || metric == MetricCPU) && stat != StatMean {
		return Threshold{}, fmt.Errorf("%s is measured as a mean per task only: use %s.mean", metric, metric)
	}
	return Threshold{Mode: mode.Name, Metric: metric, Stat: stat}, nil
}

func parseThresholdValue(metric Metric, s string) (float64, error) {
	switch metric {
	case MetricRequests:
		v, err := strconv.ParseFloat(s, 64)
		if err != nil || v < 0 {
			return 0, fmt.Errorf("value %q: want a plain number of requests", s)
		}
		return v, nil
	case MetricBytes:
		num := strings.TrimRight(s, "BbKkMmGgi")
		unit := s[len(num):]
		scale, ok := map[string]float64{"": 1, "B": 1, "kB": 1e3, "KB": 1e3, "KiB": 1 << 10, "MB": 1e6, "MiB": 1 << 20, "GB": 1e9, "GiB": 1 << 30}[unit]
		v, err := strconv.ParseFloat(num, 64)
		if !ok || err != nil || v < 0 {
			return 0, fmt.Errorf("value %q: want a number of bytes, optionally with B, kB, KiB, MB or MiB", s)
		}
		return v * scale, nil
	}
	if v, err := strconv.ParseFloat(s, 64); err == nil {
		if v < 0 {
			return 0, fmt.Errorf("value %q must not be negative", s)
		}
		return v, nil // milliseconds
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < 0 {
		return 0, fmt.Errorf("value %q: want a duration such as 50ms, 1.5s or 200us (or a number of milliseconds)", s)
	}
	return float64(d) / 1e6, nil
}

// String returns the expression as given.
func (t Threshold) String() string { return t.Expr }

// unit is the unit of t.Value, for messages.
func (t Threshold) format(v float64) string {
	switch t.Metric {
	case MetricRequests:
		return strconv.FormatFloat(v, 'f', -1, 64)
	case MetricBytes:
		return FormatBytes(v)
	}
	return FormatMs(v)
}

// ThresholdResult is a threshold checked against a run.
type ThresholdResult struct {
	Threshold Threshold `json:"threshold"`
	// Got is the measured value in the metric's unit; Pass whether the
	// comparison held. A mode without data fails.
	Got  float64 `json:"got"`
	Pass bool    `json:"pass"`
	// Note explains a failure without a value.
	Note string `json:"note,omitempty"`
}

func (c ThresholdResult) String() string {
	verdict := "ok"
	if !c.Pass {
		verdict = "MISSED"
	}
	if c.Note != "" {
		return fmt.Sprintf("%s: %s (%s)", c.Threshold.Expr, verdict, c.Note)
	}
	return fmt.Sprintf("%s: %s (measured %s)", c.Threshold.Expr, verdict, c.Threshold.format(c.Got))
}

// CheckThresholds checks every threshold against r. It fails (before any
// check) when a threshold names a mode the run did not have or a metric it
// did not measure.
func CheckThresholds(r *Result, ts []Threshold) ([]ThresholdResult, error) {
	out := make([]ThresholdResult, 0, len(ts))
	for _, t := range ts {
		m := r.Mode(t.Mode)
		if m == nil {
			return nil, fmt.Errorf("threshold %q: the run has no mode %s", t.Expr, t.Mode)
		}
		if t.Metric == MetricCPU && m.ServerCPU == nil {
			return nil, fmt.Errorf("threshold %q: server CPU was not measured (it is measured only for the embedded server in its own process)", t.Expr)
		}
		c := ThresholdResult{Threshold: t}
		got, n := t.measured(m)
		if n == 0 {
			c.Note = "no completed task to measure"
		} else {
			c.Got = got
			switch t.Op {
			case "<":
				c.Pass = got < t.Value
			case "<=":
				c.Pass = got <= t.Value
			case ">":
				c.Pass = got > t.Value
			case ">=":
				c.Pass = got >= t.Value
			}
		}
		out = append(out, c)
	}
	return out, nil
}

// ValidateThresholds checks that every threshold names one of modes.
func ValidateThresholds(ts []Threshold, modes []ModeSpec) error {
	for _, t := range ts {
		found := false
		for _, m := range modes {
			found = found || m.Name == t.Mode
		}
		if !found {
			names := make([]string, len(modes))
			for i, m := range modes {
				names[i] = m.Name
			}
			return fmt.Errorf("threshold %q: no mode %s in this run (modes: %s)", t.Expr, t.Mode, strings.Join(names, ", "))
		}
	}
	return nil
}

// measured returns the value t compares and the number of tasks behind it.
func (t Threshold) measured(m *ModeResult) (float64, int64) {
	switch t.Metric {
	case MetricBytes:
		return m.Wire.BytesPerTask, m.Completed + m.Failed
	case MetricCPU:
		return m.ServerCPU.PerTaskMs, m.Completed + m.Failed
	}
	var st Stats
	switch t.Metric {
	case MetricTTFP:
		st = m.TTFP
	case MetricTTR:
		st = m.TTR
	case MetricDiscovery:
		st = m.Discovery
	case MetricLag:
		st = m.Lag
	case MetricRequests:
		st = m.Requests
	}
	switch t.Stat {
	case StatP50:
		return st.P50, st.Count
	case StatP90:
		return st.P90, st.Count
	case StatP99:
		return st.P99, st.Count
	case StatP999:
		return st.P999, st.Count
	case StatMax:
		return st.Max, st.Count
	}
	return st.Mean, st.Count
}

// FormatBytes prints a byte count: 812B, 2.1kB, 3.4MB.
func FormatBytes(v float64) string {
	switch {
	case v >= 1e6:
		return trimFloat(v/1e6) + "MB"
	case v >= 1e3:
		return trimFloat(v/1e3) + "kB"
	}
	return strconv.FormatFloat(v, 'f', 0, 64) + "B"
}
