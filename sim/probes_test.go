package sim

import (
	"context"
	"testing"

	"github.com/tasksim/tasksim/check"
)

// TestProbesJudged: on the reference implementation, the probes after the
// faults stop make the trace's rules judge what the drawn workload never
// asks, and they pass, over both transports, with a workload shrunk to
// nothing and with a drawn one (faults included).
func TestProbesJudged(t *testing.T) {
	schedules := []Schedule{
		{Seed: 1, Faults: []string{}, Workload: Workload{Transport: TransportHTTP, Sessions: 1}},
		{Seed: 1, Faults: []string{}, Workload: Workload{Transport: TransportStdio, Sessions: 1}},
		Draw(10, nil, nil),
	}
	for _, s := range schedules {
		res, err := Run(context.Background(), s, nil)
		if err != nil {
			t.Fatalf("seed %d over %s: %v", s.Seed, s.Workload.Transport, err)
		}
		if res.Failed() {
			t.Errorf("seed %d over %s failed %v: %v", s.Seed, s.Workload.Transport, res.FailedRules(), res.Liveness)
		}
		for _, id := range []string{"TASK-NOT-FOUND", "TASK-ISOLATION", "S2679-NEGOTIATION", "S1905-RESUME"} {
			r, ok := res.Verdict.Result(id)
			if !ok || r.Status != check.Pass || r.Checked+r.Excused == 0 {
				t.Errorf("seed %d over %s: %s is %+v, want passed and judged", s.Seed, s.Workload.Transport, id, r)
			}
		}
	}
}
