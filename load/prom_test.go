package load

import (
	"io"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/tasksim/tasksim/mcp"
)

// TestProm: observations land in the per-mode series; interval totals add
// only their growth; every metric is declared at 0 for a new mode; the
// handler serves the dedicated registry (no Go runtime metrics).
func TestProm(t *testing.T) {
	p := NewProm()
	p.Started("sse", 2*time.Millisecond)
	p.Started("sse", time.Millisecond)
	p.Ended("sse", TaskEnd{OK: true, TTFP: 50 * time.Millisecond, TTR: 400 * time.Millisecond, Discovery: 3 * time.Millisecond, HasDiscovery: true, Requests: 2})
	p.Ended("sse", TaskEnd{ErrKind: ErrKindTimeout})
	for _, w := range []int64{100, 250} {
		p.Interval(Progress{Modes: []ModeProgress{{Name: "sse", Segments: w / 10, Wire: mcp.WireStats{HTTPRequests: w / 50, BytesSent: w, BytesReceived: 2 * w}}}})
	}
	ts := httptest.NewServer(p.Handler())
	defer ts.Close()
	resp, err := ts.Client().Get(ts.URL)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	body := string(b)
	for _, want := range []string{
		`tasksim_load_tasks_started_total{mode="sse"} 2`,
		`tasksim_load_tasks_completed_total{mode="sse"} 1`,
		`tasksim_load_tasks_failed_total{mode="sse"} 1`,
		`tasksim_load_tasks_in_flight{mode="sse"} 0`,
		`tasksim_load_time_to_result_seconds_bucket{mode="sse",le="0.25"} 0`,
		`tasksim_load_time_to_result_seconds_bucket{mode="sse",le="0.5"} 1`,
		`tasksim_load_time_to_first_content_seconds_sum{mode="sse"} 0.05`,
		`tasksim_load_discovery_delay_seconds_count{mode="sse"} 1`,
		`tasksim_load_start_lag_seconds_count{mode="sse"} 2`,
		`tasksim_load_http_requests_total{mode="sse"} 5`,
		`tasksim_load_bytes_sent_total{mode="sse"} 250`,
		`tasksim_load_bytes_received_total{mode="sse"} 500`,
		`tasksim_load_segments_total{mode="sse"} 25`,
		`tasksim_load_partials_total{mode="sse"} 0`,
	} {
		if !strings.Contains(body, want+"\n") {
			t.Errorf("exposition lacks %q", want)
		}
	}
	for _, name := range PromMetrics() {
		if !strings.HasPrefix(name, "tasksim_load_") || !strings.Contains(body, "# TYPE "+name+" ") {
			t.Errorf("metric %s not exported under the tasksim_load_ prefix", name)
		}
	}
	if strings.Contains(body, "go_goroutines") {
		t.Error("the exporter serves the global registry's metrics")
	}
}
