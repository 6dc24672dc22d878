package load

import (
	"context"
	"strings"
	"testing"
	"time"
)

// TestOverloadStartsNothingLate: once the lag bound breaks, no task of the
// open schedule starts: not the late one (the scheduler already refuses
// it), nor one dispatched before that gets to run only after. The run used
// to start them, so its table showed a worse lag than its stop message
// ("started 1.01s late" against a table's 1.67 s) and tasks started after
// the moment the message named.
func TestOverloadStartsNothingLate(t *testing.T) {
	cfg := Config{Modes: []ModeSpec{{Name: "sse", Kind: KindSSE}}, Rate: 10, MaxLag: Duration(50 * time.Millisecond)}
	r := newRunner(cfg.WithDefaults(), Options{Targets: []Target{{URL: "http://127.0.0.1:1/mcp"}}})
	ctx, stop := context.WithCancel(t.Context())
	defer stop()
	r.stop = stop
	r.start = time.Now()
	m := r.modes[0]

	r.runTask(ctx, m, 0, time.Now().Add(-time.Second), true) // 1 s late: breaks the bound
	o := r.overload.Load()
	if o == nil || o.LagMs < 1000 {
		t.Fatalf("overload %+v: want one at a lag of 1 s or more", o)
	}
	r.runTask(ctx, m, 1, time.Now(), true) // on time, but after the stop
	if n := m.started.Load(); n != 0 {
		t.Errorf("%d tasks started after the lag bound broke, want 0", n)
	}
	if r.overload.Load() != o {
		t.Error("the first overload was replaced")
	}
}

// TestProgressLagMaxSoFar: the progress's lag max is the largest start
// lag since the start, the table's worst lag, not only the last
// interval's (which a line printed every few intervals would miss).
func TestProgressLagMaxSoFar(t *testing.T) {
	cfg := Config{Modes: []ModeSpec{{Name: "sse", Kind: KindSSE}}, Rate: 10}
	var got []time.Duration
	r := newRunner(cfg.WithDefaults(), Options{Targets: []Target{{URL: "http://127.0.0.1:1/mcp"}},
		Progress: func(p Progress) { got = append(got, p.LagMax) }})
	r.start = time.Now()
	r.lastFlush = r.start
	r.shards[0].recordStart(0, 40*time.Millisecond)
	r.flush(r.start.Add(time.Second), true)
	r.shards[0].recordStart(0, 2*time.Millisecond)
	r.flush(r.start.Add(2*time.Second), true)
	if len(got) != 2 || got[0] < 39*time.Millisecond || got[1] != got[0] {
		t.Errorf("lag max per interval %v, want the first interval's ~40ms twice", got)
	}
}

// TestValidateDurationWithoutChunks: a task duration with 0 chunks (or a
// range from 0) is refused; it used to turn every task into an instant
// one, silently.
func TestValidateDurationWithoutChunks(t *testing.T) {
	for _, chunks := range []string{"0", "0..4"} {
		c, err := ParseIntDist(chunks)
		if err != nil {
			t.Fatal(err)
		}
		cfg := Config{Modes: []ModeSpec{{Name: "sse", Kind: KindSSE}}, Rate: 1,
			Shape: Shape{Chunks: c, ChunkSize: FixedInt(8), Duration: FixedDuration(time.Second)}}.WithDefaults()
		if err := cfg.Validate(); err == nil || !strings.Contains(err.Error(), "at least 1 chunk") {
			t.Errorf("chunks %s with a duration: %v, want refused", chunks, err)
		}
	}
}
