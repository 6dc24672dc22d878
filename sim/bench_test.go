package sim

import (
	"context"
	"testing"
	"time"

	"github.com/tasksim/tasksim/mcp/client"
)

// BenchmarkRun runs drawn seeds one after the other, as tasksim sim does,
// and reports runs per minute of wall time.
//
//	go test ./sim -run '^$' -bench BenchmarkRun -benchtime 1000x
func BenchmarkRun(b *testing.B) {
	ctx := context.Background()
	start := time.Now()
	for i := range b.N {
		if _, err := Run(ctx, Draw(uint64(i+1), nil, nil), nil); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/time.Since(start).Minutes(), "runs/min")
}

// ttlSchedule is SEP-1905 test scenario 9 as a schedule: a streaming call
// producing a chunk a second for 100 s with a ttl of 60 s, which expires
// in the middle of the stream.
func ttlSchedule() Schedule {
	return Schedule{Seed: 7, Faults: []string{}, Workload: Workload{Transport: TransportHTTP, Sessions: 1, Calls: []Call{{
		Tool: "slow_text", Mode: client.ModeStreaming, Chunks: 100, IntervalMs: 1000, TTLMs: 60_000, FailAfter: -1,
	}}}}
}

// TestTTLExpiresMidStream: the 60 s ttl ends the stream after 60 s of
// simulated time, the call ends expired, the run passes.
func TestTTLExpiresMidStream(t *testing.T) {
	res, err := Run(context.Background(), ttlSchedule(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.Failed() || res.Calls[0].Got != OutcomeExpired {
		t.Fatalf("outcome %+v, failed %v", res.Calls[0], res.FailedRules())
	}
	if res.SimTime < 60*time.Second {
		t.Errorf("simulated %v, want at least the 60 s ttl", res.SimTime)
	}
}

// BenchmarkTTLExpiresMidStream is the wall time of that run: 60 s of
// simulated time, 60 segments, the expiry, the probe after it.
//
//	go test ./sim -run '^$' -bench BenchmarkTTLExpiresMidStream
func BenchmarkTTLExpiresMidStream(b *testing.B) {
	s := ttlSchedule()
	for range b.N {
		res, err := Run(context.Background(), s, nil)
		if err != nil || res.Calls[0].Got != OutcomeExpired {
			b.Fatalf("%v %+v", err, res.Calls[0])
		}
	}
}

// BenchmarkShrink shrinks the first drawn seed that fails with the
// client's planted no-dedup bug (the reference passes every seed).
//
//	go test ./sim -run '^$' -bench BenchmarkShrink -benchtime 20x
func BenchmarkShrink(b *testing.B) {
	ctx := context.Background()
	s, rule, ro := firstPlantedFailure(b, "client-no-dedup", 1000)
	b.ResetTimer()
	runs := 0
	for range b.N {
		sh, err := Shrink(ctx, s, rule, &ShrinkOptions{Run: ro})
		if err != nil {
			b.Fatal(err)
		}
		runs += sh.Runs
	}
	b.ReportMetric(float64(runs)/float64(b.N), "runs/shrink")
}
