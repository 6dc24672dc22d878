package load

import (
	"bytes"
	"context"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/tasksim/tasksim/mcp"
	"github.com/tasksim/tasksim/mcp/server"
)

// TestRunStatelessModes: a short run of the 2026-07-28 modes against the
// in-process reference server (dual-era): every task completes as a task,
// discovery from the inlined result's completion time, requests counted
// per call and equal to the connections' own (every POST is a call's),
// tasks/get round trips only where there are polls, the pacing the table
// states. As TestRunModes, on the wall clock: counts and exact request
// numbers, no latency bound.
func TestRunStatelessModes(t *testing.T) {
	url := referenceServer(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cfg := Config{
		Modes: mustModes(t, "poll:100ms,poll:server,listen"), Revision: mcp.Revision20260728,
		Rate: 20, Tasks: 10, Sessions: 2, Seed: 7, Interval: Duration(100 * time.Millisecond),
		MaxLag: Duration(time.Hour),
		Shape:  Shape{Chunks: FixedInt(4), ChunkSize: FixedInt(16), Interval: mustDurationDist(t, "20ms..80ms")},
	}
	res, err := Run(ctx, cfg, Options{Targets: []Target{{URL: url, Label: "in-process"}}})
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range res.Modes {
		if m.Revision != mcp.Revision20260728 || m.Started != 10 || m.Completed != 10 || m.Failed != 0 || m.Answers["task"] != 10 {
			t.Errorf("%s: revision %s, started %d, completed %d, failed %d (%v), answers %v; want 2026-07-28, 10, 10, 0, 10 task",
				m.Name, m.Revision, m.Started, m.Completed, m.Failed, m.ErrorSamples, m.Answers)
		}
		if m.Discovery.Count != 10 || m.DiscoveryFromLastUpdated != 0 || m.NegativeDiscovery != 0 {
			t.Errorf("%s: discovery %+v, from lastUpdatedAt %d, negative %d: want 10 from the result's completion time", m.Name, m.Discovery, m.DiscoveryFromLastUpdated, m.NegativeDiscovery)
		}
		if math.Abs(float64(m.Wire.HTTPRequests)-m.Requests.Mean*10) > 0.01 {
			t.Errorf("%s: requests %+v, wire %+v: every POST of the mode's connections is a call's", m.Name, m.Requests, m.Wire)
		}
		if m.ServerPollIntervalMs != float64(server.DefaultPollInterval.Milliseconds()) {
			t.Errorf("%s: the server's pollIntervalMs seen %v, want %v", m.Name, m.ServerPollIntervalMs, server.DefaultPollInterval)
		}
	}
	for _, name := range []string{"poll:100ms", "poll:server"} {
		m := res.Mode(name)
		// tools/call and at least one tasks/get, each a round trip.
		if m.Requests.Mean < 2 || m.GetRoundTrip == nil || float64(m.GetRoundTrip.Count) != m.Requests.Mean*10-10 {
			t.Errorf("%s: requests %+v, tasks/get round trips %+v: want one per tasks/get", name, m.Requests, m.GetRoundTrip)
		}
	}
	listen := res.Mode("listen")
	if listen.Requests.Mean != 2 || listen.Requests.Max != 2 || listen.GetRoundTrip != nil || listen.ListenFallbacks != 0 {
		t.Errorf("listen: requests %+v, tasks/get %+v, fallbacks %d: want tools/call and subscriptions/listen alone", listen.Requests, listen.GetRoundTrip, listen.ListenFallbacks)
	}
	var table bytes.Buffer
	if err := TableReporter(res)(&table); err != nil {
		t.Fatal(err)
	}
	t.Logf("\n%s", table.String())
	for _, want := range []string{"tasks/get every", "get rtt p50", "discovery p50", "100ms, not server's 500ms", "500ms (server's)", "fallback only"} {
		if !strings.Contains(table.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, table.String())
		}
	}
}

// A 2025-11-25 run may hold 2026-07-28 modes beside its own (tasksim demo
// does): listen, and polling named with @2026-07-28, speak 2026-07-28 to
// the same dual-era server.
func TestRunMixedEras(t *testing.T) {
	url := referenceServer(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cfg := Config{
		Modes: mustModes(t, "poll:100ms,poll:100ms@2026-07-28,listen"), Rate: 20, Tasks: 5, Sessions: 1, Seed: 7,
		MaxLag: Duration(time.Hour),
		Shape:  Shape{Chunks: FixedInt(2), ChunkSize: FixedInt(16), Interval: mustDurationDist(t, "20ms..40ms")},
	}
	res, err := Run(ctx, cfg, Options{Targets: []Target{{URL: url, Label: "in-process"}}})
	if err != nil {
		t.Fatal(err)
	}
	poll, listen := res.Mode("poll:100ms"), res.Mode("listen")
	if poll.Revision != mcp.Revision20251125 || poll.Completed != 5 || poll.GetRoundTrip != nil {
		t.Errorf("poll:100ms: %+v", poll)
	}
	if listen.Revision != mcp.Revision20260728 || listen.Completed != 5 || listen.Requests.Mean != 2 {
		t.Errorf("listen: %+v", listen)
	}
	poll26 := res.Mode("poll:100ms@2026-07-28")
	if poll26 == nil || poll26.Revision != mcp.Revision20260728 || poll26.Kind != KindPoll || poll26.PollIntervalMs != 100 ||
		poll26.Completed != 5 || poll26.GetRoundTrip == nil {
		t.Errorf("poll:100ms@2026-07-28: %+v, want 5 tasks polled with tasks/get in 2026-07-28", poll26)
	}
}

// The revision decides which modes exist; poll:server names the server's
// interval.
func TestStatelessModesConfig(t *testing.T) {
	m, err := ParseMode("poll:server")
	if err != nil || m.Name != "poll:server" || m.Kind != KindPoll || m.PollInterval != 0 {
		t.Fatalf("poll:server: %+v, %v", m, err)
	}
	for _, tc := range []struct {
		modes    string
		revision mcp.Revision
		bad      string
	}{
		{"poll:1s,poll:server,listen", mcp.Revision20260728, ""},
		{"poll:1s,sse,partial,immediate,listen", mcp.Revision20251125, ""},
		{"poll:1s,sse", mcp.Revision20260728, "mode sse does not exist in 2026-07-28"},
		{"poll:1s,poll:1s@2026-07-28,listen", mcp.Revision20251125, ""},
		{"poll:1s,sse@2025-11-25", mcp.Revision20260728, ""},
		{"partial", mcp.Revision20260728, "mode partial does not exist"},
		{"poll:1s", "2024-11-05", "revision \"2024-11-05\""},
	} {
		cfg := Config{Modes: mustModes(t, tc.modes), Revision: tc.revision, Rate: 1}.WithDefaults()
		err := cfg.Validate()
		if (tc.bad == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tc.bad)) {
			t.Errorf("%s in %s: %v, want %q", tc.modes, tc.revision, err, tc.bad)
		}
	}
	if cfg := (Config{Modes: mustModes(t, "poll")}).WithDefaults(); cfg.Revision != mcp.Revision20251125 {
		t.Errorf("default revision %q", cfg.Revision)
	}
}
