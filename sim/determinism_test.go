package sim

import (
	"bytes"
	"context"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/tasksim/tasksim/check"
	"github.com/tasksim/tasksim/clock"
)

// fingerprint is what must repeat for a seed: the verdict (the failed
// rules with their findings, and the simulator's findings), and the
// history: the schedule, every fault decision with its target, the calls'
// outcomes and task ids. observed is every rule's status, PASS and SKIP
// included: whether a rule saw what it needs can depend on the order of
// two things at one instant (docs/sim.md, "Determinism").
func fingerprint(t *testing.T, seed uint64) (verdict, observed, history string, trace []byte, s Schedule) {
	t.Helper()
	return fingerprintOf(t, Draw(seed, nil, nil))
}

// fingerprintOf is fingerprint of a schedule's run.
func fingerprintOf(t *testing.T, s Schedule) (verdict, observed, history string, trace []byte, _ Schedule) {
	t.Helper()
	res, err := Run(context.Background(), s, nil)
	if err != nil {
		t.Fatalf("seed %d: %v", s.Seed, err)
	}
	var v, o, h strings.Builder
	for _, r := range res.Verdict.Rules {
		o.WriteString(r.Rule.ID + " " + string(r.Status) + "\n")
		if r.Status == check.Fail {
			v.WriteString(r.Rule.ID + " FAIL")
			for _, f := range r.Findings {
				v.WriteString(" " + f.Message)
			}
			v.WriteString("\n")
		}
	}
	for _, f := range res.Liveness {
		v.WriteString(f.Rule + " " + f.Message + "\n")
	}
	sch, _ := MarshalSchedule(res.Schedule)
	h.Write(sch)
	// The decisions as a set: two taken at one instant on two HTTP
	// streams are taken in the scheduler's order.
	var ds []string
	for _, a := range res.Applied {
		ds = append(ds, pin(a)+" "+a.Action.String())
	}
	slices.Sort(ds)
	h.WriteString(strings.Join(ds, "\n") + "\n")
	for _, c := range res.Calls {
		h.WriteString(c.Got + " " + c.TaskID + " " + c.Recovered + "\n")
	}
	return v.String(), o.String(), h.String(), res.Trace, s
}

// racy reports whether a schedule may let the scheduler choose what a
// fault catches (docs/sim.md, "Determinism"): a disconnect (every call on
// the connection wakes at once), or over HTTP a server restart (every
// stream of the session ends at once) or a fault that holds the whole
// connection (stall, delay, reorder), which catches whichever of two
// streams' messages of one instant the merge reads first.
func racy(s Schedule) bool {
	for _, f := range s.Faults {
		name, _, _ := strings.Cut(f, ":")
		switch name {
		case "disconnect":
			return true
		case "server-restart", "stall", "delay", "reorder":
			if s.Workload.Transport == TransportHTTP {
				return true
			}
		}
	}
	return false
}

// TestDeterminism runs 200 seeds twice (SIM_DETERMINISM_SEEDS=N for
// more): the same seed gives the same verdict, always; and the same
// schedule, decisions, ids and outcomes, except where docs/sim.md says the
// scheduler still chooses. It holds under the race detector too.
func TestDeterminism(t *testing.T) {
	n := uint64(200)
	if s := os.Getenv("SIM_DETERMINISM_SEEDS"); s != "" {
		n, _ = strconv.ParseUint(s, 10, 64)
	}
	traceDiffs, historyDiffs, observedDiffs := 0, 0, 0
	for seed := uint64(1); seed <= n; seed++ {
		va, oa, ha, ta, s := fingerprint(t, seed)
		vb, ob, hb, tb, _ := fingerprint(t, seed)
		if va != vb {
			t.Errorf("seed %d (%s, %v): two runs gave different verdicts: %s", seed, s.Workload.Transport, s.Faults, firstDiff(va, vb))
		}
		if oa != ob {
			observedDiffs++
			t.Logf("seed %d (%s, %v): a rule saw what it needs in one run only: %s", seed, s.Workload.Transport, s.Faults, firstDiff(oa, ob))
		}
		if ha != hb {
			historyDiffs++
			if !racy(s) {
				t.Errorf("seed %d (%s, %v): two runs differ: %s", seed, s.Workload.Transport, s.Faults, firstDiff(ha, hb))
			}
			continue
		}
		if !bytes.Equal(ta, tb) {
			traceDiffs++
		}
	}
	t.Logf("%d seeds twice: verdicts equal; %d histories differ (cut connections; over HTTP restarts and faults that hold the connection); %d PASS/SKIP differ; %d traces not byte-identical besides", n, historyDiffs, observedDiffs, traceDiffs)
	_, _, h1, _, _ := fingerprint(t, 1)
	_, _, h2, _, _ := fingerprint(t, 2)
	if h1 == h2 {
		t.Error("seeds 1 and 2 ran the same")
	}
}

func firstDiff(a, b string) string {
	al, bl := strings.Split(a, "\n"), strings.Split(b, "\n")
	for i := range min(len(al), len(bl)) {
		if al[i] != bl[i] {
			return "line " + strconv.Itoa(i) + ":\n" + al[i] + "\n" + bl[i]
		}
	}
	return "lengths differ"
}

// TestNothingWakesTheRunFromOutside runs seeds of both transports, with
// faults, with every idle verdict of the clock verified (clock.VerifyEnv):
// no goroutine of a run is woken by something outside it (a wall-clock
// timer's goroutine, a goroutine started before the run) while the clock
// could move. Such a wake makes runs of one seed differ: the proxy of the
// HTTP record, when httputil.ReverseProxy flushed a response head from a
// wall-clock timer, had the client's wait for its standalone stream time
// out at one run and not the next.
func TestNothingWakesTheRunFromOutside(t *testing.T) {
	t.Setenv(clock.VerifyEnv, "1")
	for seed := uint64(1); seed <= 12; seed++ {
		s := Draw(seed, nil, nil)
		s.Workload.Transport = []string{TransportHTTP, TransportStdio}[seed%2]
		if _, err := Run(context.Background(), s, nil); err != nil {
			t.Errorf("seed %d (%s): %v", seed, s.Workload.Transport, err)
		}
	}
}
