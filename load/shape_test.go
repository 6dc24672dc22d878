package load

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/tasksim/tasksim/mcp"
)

func TestParseMode(t *testing.T) {
	cases := []struct {
		in   string
		want ModeSpec
	}{
		{"poll:1s", ModeSpec{Name: "poll:1s", Kind: KindPoll, PollInterval: time.Second}},
		{"poll:100ms", ModeSpec{Name: "poll:100ms", Kind: KindPoll, PollInterval: 100 * time.Millisecond}},
		{"poll:1000ms", ModeSpec{Name: "poll:1s", Kind: KindPoll, PollInterval: time.Second}},
		{"poll", ModeSpec{Name: "poll", Kind: KindPoll}},
		{"sse", ModeSpec{Name: "sse", Kind: KindSSE}},
		{"streaming", ModeSpec{Name: "sse", Kind: KindSSE}},
		{" partial ", ModeSpec{Name: "partial", Kind: KindPartial}},
		{"immediate", ModeSpec{Name: "immediate", Kind: KindImmediate}},
		// @REVISION: the mode's tasks speak that revision whatever the
		// run's; listen's name needs none.
		{"poll:1000ms@2026-07-28", ModeSpec{Name: "poll:1s@2026-07-28", Kind: KindPoll, PollInterval: time.Second, Revision: mcp.Revision20260728}},
		{"poll:server@2026-07-28", ModeSpec{Name: "poll:server@2026-07-28", Kind: KindPoll, Revision: mcp.Revision20260728}},
		{"sse@2025-11-25", ModeSpec{Name: "sse@2025-11-25", Kind: KindSSE, Revision: mcp.Revision20251125}},
		{"listen@2026-07-28", ModeSpec{Name: "listen", Kind: KindListen}},
	}
	for _, tc := range cases {
		t.Run(tc.in, func(t *testing.T) {
			got, err := ParseMode(tc.in)
			if err != nil || got != tc.want {
				t.Errorf("ParseMode(%q) = %+v, %v; want %+v", tc.in, got, err, tc.want)
			}
		})
	}
	for _, bad := range []string{"", "warp", "poll:", "poll:0s", "poll:-1s", "sse:1s", "poll:soon",
		"sse@2026-07-28", "partial@2026-07-28", "listen@2025-11-25", "poll:1s@1999-01-01", "poll:1s@", "@2026-07-28"} {
		if _, err := ParseMode(bad); err == nil {
			t.Errorf("ParseMode(%q): no error", bad)
		}
	}
	if _, err := ParseModes("sse,poll:1s,streaming"); err == nil || !strings.Contains(err.Error(), "twice") {
		t.Errorf("a mode given twice: %v", err)
	}
}

func TestDists(t *testing.T) {
	cases := []struct {
		name     string
		in       string
		duration bool
		mean     float64
		lo, hi   float64 // every draw within
	}{
		{"fixed duration", "100ms", true, 1e8, 1e8, 1e8},
		{"uniform duration", "50ms..150ms", true, 1e8, 5e7, 1.5e8},
		{"exponential duration", "exp:10ms", true, 1e7 * (1 - 4.54e-5), 0, 1e8},
		{"fixed int", "10", false, 10, 10, 10},
		{"uniform int", "5..15", false, 10, 5, 15},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var s Shape
			var err error
			if tc.duration {
				s = Shape{Chunks: FixedInt(1), ChunkSize: FixedInt(1)}
				s.Duration, err = ParseDurationDist(tc.in)
			} else {
				s = Shape{Interval: FixedDuration(time.Millisecond), ChunkSize: FixedInt(1)}
				s.Chunks, err = ParseIntDist(tc.in)
			}
			if err != nil {
				t.Fatal(err)
			}
			var sum float64
			const n = 20000
			for k := range int64(n) {
				d := s.draw(42, k)
				v := float64(d.duration)
				if !tc.duration {
					v = float64(d.chunks)
				}
				if v < tc.lo || v > tc.hi {
					t.Fatalf("draw %d = %v, outside [%v, %v]", k, v, tc.lo, tc.hi)
				}
				sum += v
			}
			if m := sum / n; m < tc.mean*0.97 || m > tc.mean*1.03 {
				t.Errorf("mean of %d draws %v, want %v ± 3%%", n, m, tc.mean)
			}
			if s.draw(42, 7) != s.draw(42, 7) {
				t.Errorf("the same seed and task drew different shapes")
			}
		})
	}
	for _, bad := range []string{"", "fast", "150ms..50ms", "exp:0s", "-1s", "exp:"} {
		if _, err := ParseDurationDist(bad); err == nil {
			t.Errorf("ParseDurationDist(%q): no error", bad)
		}
	}
	for _, bad := range []string{"", "x", "9..3", "-1", "exp:3", "1.5"} {
		if _, err := ParseIntDist(bad); err == nil {
			t.Errorf("ParseIntDist(%q): no error", bad)
		}
	}
}

func TestShapeArgs(t *testing.T) {
	s := Shape{Chunks: FixedInt(10), ChunkSize: FixedInt(32), Interval: FixedDuration(100 * time.Millisecond)}
	if got, want := string(s.draw(1, 0).args()), `{"chunks":10,"chunkSize":32,"progress":false,"intervalMs":100}`; got != want {
		t.Errorf("args %s, want %s", got, want)
	}
	s.Duration = FixedDuration(1500 * time.Millisecond)
	if got, want := string(s.draw(1, 0).args()), `{"chunks":10,"chunkSize":32,"progress":false,"durationMs":1500}`; got != want {
		t.Errorf("args %s, want %s", got, want)
	}
	if d := s.MeanDuration(); d != 1500*time.Millisecond {
		t.Errorf("mean duration %v", d)
	}
}

// TestConfigJSON: a config survives JSON, distributions and modes as text.
func TestConfigJSON(t *testing.T) {
	in := Config{Modes: mustModes(t, "poll:1s,sse"), Rate: 20, Duration: Duration(20 * time.Second), Seed: 3,
		Shape: Shape{Chunks: FixedInt(10), ChunkSize: FixedInt(32), Interval: mustDurationDist(t, "50ms..150ms")}}.WithDefaults()
	b, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"modes":["poll:1s","sse"]`, `"interval":"50ms..150ms"`, `"duration":"20s"`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("JSON %s lacks %s", b, want)
		}
	}
	var out Config
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	if out.Shape.Interval.String() != "50ms..150ms" || len(out.Modes) != 2 || out.Modes[0].PollInterval != time.Second || out.Duration != in.Duration {
		t.Errorf("round trip: %+v", out)
	}
}

func TestParseStat(t *testing.T) {
	line := "1234 (tasksim (serve)) S 1 1234 1234 0 -1 4194560 2000 0 0 0 150 25 0 0 20 0 12 0 100 0 0"
	got, err := parseStat(line)
	if err != nil || got != 1750*time.Millisecond {
		t.Errorf("parseStat = %v, %v; want 1.75s", got, err)
	}
	if _, err := parseStat("garbage"); err == nil {
		t.Error("no error for a malformed line")
	}
	if _, err := ProcessCPU(0); err != nil {
		t.Logf("this process's CPU time cannot be read here: %v", err)
	}
	if rss, err := PeakRSS(0); err != nil {
		t.Logf("this process's peak memory cannot be read here: %v", err)
	} else if rss <= 0 {
		t.Errorf("PeakRSS = %d", rss)
	}
}

// TestDefaultShapeNoPhaseLock: with the default shape, the ideal discovery
// delay of poll:P (polls every P from the start, the result found at the
// first poll after the task's end) averages P/2 over the tasks, as it does
// in real traffic. With the old fixed 1 s tasks every task ended on a poll
// and the mean was 0 (a measured run gave 5 ms for poll:200ms).
func TestDefaultShapeNoPhaseLock(t *testing.T) {
	s := DefaultShape()
	for _, p := range []time.Duration{100 * time.Millisecond, 200 * time.Millisecond, time.Second} {
		var sum time.Duration
		const n = 2000
		for k := range int64(n) {
			d := s.draw(1, k).duration
			polls := (d + p - 1) / p // the first poll at or after the end
			sum += polls*p - d
		}
		mean := sum / n
		if lo, hi := p*45/100, p*55/100; mean < lo || mean > hi {
			t.Errorf("poll:%v: ideal mean discovery %v, want about %v (P/2)", p, mean, p/2)
		}
	}
	if m := s.MeanDuration(); m != time.Second {
		t.Errorf("mean task duration %v, want 1s", m)
	}
}
