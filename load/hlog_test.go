package load

import (
	"bytes"
	"math/rand/v2"
	"testing"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
)

// synthRun feeds samples into a runner's shards and flushes them every
// second of a synthetic clock, as a run would, writing the interval log.
type synthRun struct {
	r   *runner
	buf bytes.Buffer
}

func newSynthRun(t *testing.T, start time.Time) *synthRun {
	t.Helper()
	cfg := Config{Modes: mustModes(t, "poll:100ms,sse"), Rate: 1}.WithDefaults()
	s := &synthRun{}
	s.r = newRunner(cfg, Options{Targets: []Target{{URL: "http://127.0.0.1:1/mcp"}}})
	s.r.start, s.r.lastFlush = start, start
	s.r.hlog = newHlogWriter(&s.buf, start, "")
	return s
}

// synthSample is sample i of a seeded stream: its second, mode and values.
func synthSample(rng *rand.Rand) (second int, mode int, lag time.Duration, x sample) {
	second = rng.IntN(10)
	mode = rng.IntN(2)
	x = sample{
		ok: rng.IntN(20) > 0, errKind: ErrKindTimeout,
		ttfp: time.Duration(rng.ExpFloat64() * 5e7), ttr: time.Duration(rng.ExpFloat64() * 1e9),
		discovery: time.Duration(rng.Float64() * 1e8), hasDiscovery: true, requests: int64(2 + rng.IntN(20)),
	}
	return second, mode, time.Duration(rng.ExpFloat64() * 1e6), x
}

// TestHlogMergeHalves: the interval logs of two half-runs, merged, hold
// the same histograms as the log of the whole run: both for halves one
// after the other and for two generators running side by side.
func TestHlogMergeHalves(t *testing.T) {
	start := time.UnixMilli(1_767_225_600_000)
	cases := []struct {
		name string
		// half says which half-run sample i of second s belongs to.
		half func(i, second int) int
	}{
		{"one after the other", func(_, second int) int { return second / 5 }},
		{"side by side", func(i, _ int) int { return i % 2 }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			whole := newSynthRun(t, start)
			halves := []*synthRun{newSynthRun(t, start), newSynthRun(t, start)}
			rng := rand.New(rand.NewPCG(1, 2))
			bySecond := make([][]func(*synthRun), 10)
			for i := range 5000 {
				sec, mode, lag, x := synthSample(rng)
				h := tc.half(i, sec)
				bySecond[sec] = append(bySecond[sec], func(s *synthRun) {
					if s == whole || s == halves[h] {
						s.r.shards[i%len(s.r.shards)].recordStart(mode, lag)
						s.r.shards[i%len(s.r.shards)].record(mode, &x)
					}
				})
			}
			for sec, fs := range bySecond {
				for _, s := range append([]*synthRun{whole}, halves...) {
					for _, f := range fs {
						f(s)
					}
					s.r.flush(start.Add(time.Duration(sec+1)*time.Second), false)
				}
			}
			var merged bytes.Buffer
			if err := MergeHlogs(&merged, time.Second, bytes.NewReader(halves[0].buf.Bytes()), bytes.NewReader(halves[1].buf.Bytes())); err != nil {
				t.Fatal(err)
			}
			want, err := HlogTotals(bytes.NewReader(whole.buf.Bytes()))
			if err != nil {
				t.Fatal(err)
			}
			got, err := HlogTotals(&merged)
			if err != nil {
				t.Fatal(err)
			}
			if len(want) != 2*nHist || len(got) != len(want) {
				t.Fatalf("%d tags in the whole run's log, %d in the merged log; want %d", len(want), len(got), 2*nHist)
			}
			for tag, w := range want {
				if !got[tag].Equals(w) {
					t.Errorf("%s: merged halves have %d values (p99 %d), the whole run %d (p99 %d)",
						tag, got[tag].TotalCount(), got[tag].ValueAtPercentile(99), w.TotalCount(), w.ValueAtPercentile(99))
				}
			}
			// The log's totals are the run's own totals.
			if w := want["sse.ttr"]; !w.Equals(whole.r.total[1][iTTR]) {
				t.Errorf("sse.ttr: the log's total differs from the run's")
			}
			// Interval by interval too: every second of the merged log
			// is that second of the whole run.
			wantIv := intervalsByKey(t, whole.buf.Bytes())
			merged2 := bytes.Buffer{}
			_ = MergeHlogs(&merged2, time.Second, bytes.NewReader(halves[0].buf.Bytes()), bytes.NewReader(halves[1].buf.Bytes()))
			gotIv := intervalsByKey(t, merged2.Bytes())
			if len(gotIv) != len(wantIv) {
				t.Errorf("%d non-empty intervals merged, %d in the whole run", len(gotIv), len(wantIv))
			}
			for k, h := range gotIv {
				if w := wantIv[k]; w == nil || !w.Equals(h) {
					t.Errorf("interval %v: merged differs from the whole run", k)
				}
			}
		})
	}
}

type ivKey struct {
	startMs int64
	tag     string
}

func intervalsByKey(t *testing.T, log []byte) map[ivKey]*hdr.Histogram {
	t.Helper()
	out := map[ivKey]*hdr.Histogram{}
	for h, err := range HlogIntervals(bytes.NewReader(log)) {
		if err != nil {
			t.Fatal(err)
		}
		if h.TotalCount() > 0 {
			out[ivKey{h.StartTimeMs(), h.Tag()}] = h
		}
	}
	return out
}

// TestHlogRoundTrip: a histogram written to the log reads back equal,
// with its tag and times.
func TestHlogRoundTrip(t *testing.T) {
	start := time.UnixMilli(1_767_225_600_250)
	var buf bytes.Buffer
	w := newHlogWriter(&buf, start, "[test]")
	h := newHistogram(iTTR)
	for v := range int64(1000) {
		_ = h.RecordValue(v * 1_000_003)
	}
	w.write(h, "sse.ttr", start, start.Add(time.Second))
	if w.err != nil {
		t.Fatal(w.err)
	}
	n := 0
	for got, err := range HlogIntervals(&buf) {
		if err != nil {
			t.Fatal(err)
		}
		n++
		if !got.Equals(h) || got.Tag() != "sse.ttr" || got.StartTimeMs() != start.UnixMilli() || got.EndTimeMs() != start.Add(time.Second).UnixMilli() {
			t.Errorf("read back %s %d..%d, %d values", got.Tag(), got.StartTimeMs(), got.EndTimeMs(), got.TotalCount())
		}
	}
	if n != 1 {
		t.Errorf("%d intervals read, want 1", n)
	}
}
