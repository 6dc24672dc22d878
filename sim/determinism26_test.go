package sim

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tasksim/tasksim/clock"
	"github.com/tasksim/tasksim/mcp/server"
	"github.com/tasksim/tasksim/traces"
)

// draw26 is the schedule of a seed of 2026-07-28, as tasksim sim
// --revision 2026-07-28 draws it.
func draw26(seed uint64) Schedule {
	return Draw(seed, &WorkloadOptions{Revision: Revision20260728}, &FaultOptions{Revision: Revision20260728})
}

// TestDeterminism26 runs 200 seeds of 2026-07-28 twice
// (SIM_DETERMINISM_SEEDS=N for more): the same seed gives the same
// verdict, schedule, decisions, task ids and outcomes, and the same trace
// digest, but where docs/sim.md ("Determinism") says the scheduler still
// chooses (racy): there the verdict alone must repeat.
func TestDeterminism26(t *testing.T) {
	n := uint64(200)
	if s := os.Getenv("SIM_DETERMINISM_SEEDS"); s != "" {
		n, _ = strconv.ParseUint(s, 10, 64)
	}
	historyDiffs, traceDiffs := 0, 0
	for seed := uint64(1); seed <= n; seed++ {
		s := draw26(seed)
		va, _, ha, ta, _ := fingerprintOf(t, s)
		vb, _, hb, tb, _ := fingerprintOf(t, s)
		if !racy26(s) && va != vb || simFindings(va) != simFindings(vb) {
			t.Errorf("seed %d (%s, %v): two runs gave different verdicts: %s", seed, s.Workload.Transport, s.Faults, firstDiff(va, vb))
		}
		if ha != hb {
			historyDiffs++
			if !racy26(s) {
				t.Errorf("seed %d (%s, %v): two runs differ: %s", seed, s.Workload.Transport, s.Faults, firstDiff(ha, hb))
			}
			continue
		}
		if traceDigest(t, ta) != traceDigest(t, tb) {
			traceDiffs++
			if !racy26(s) {
				t.Errorf("seed %d (%s, %v): two runs wrote traces of different digests: %s", seed, s.Workload.Transport, s.Faults, firstDiff(string(ta), string(tb)))
			}
		}
	}
	t.Logf("%d seeds of %s twice: verdicts equal; %d histories and %d more trace digests differ, all of racy schedules", n, Revision20260728, historyDiffs, traceDiffs)
	_, _, h1, _, _ := fingerprintOf(t, draw26(1))
	_, _, h2, _, _ := fingerprintOf(t, draw26(2))
	if h1 == h2 {
		t.Error("seeds 1 and 2 ran the same")
	}
}

// TestNothingWakesTheRunFromOutside26 is TestNothingWakesTheRunFromOutside
// for runs of 2026-07-28: polls, listens and input rounds over both
// transports, with faults, every idle verdict of the clock verified.
func TestNothingWakesTheRunFromOutside26(t *testing.T) {
	t.Setenv(clock.VerifyEnv, "1")
	for seed := uint64(1); seed <= 12; seed++ {
		s := draw26(seed)
		s.Workload.Transport = []string{TransportHTTP, TransportStdio}[seed%2]
		if _, err := Run(context.Background(), s, nil); err != nil {
			t.Errorf("seed %d (%s): %v", seed, s.Workload.Transport, err)
		}
	}
}

// simFindings is the simulator's findings of a fingerprint's verdict.
// Of a racy schedule only they must repeat: the calls may end otherwise
// in the two runs (as faults explain), and a rule of 2025-11-25 that
// judges these traces too (TASK-FIELDS on a task without ttl,
// TASK-ISOLATION on a task asked from a new connection) finds more or
// less (docs/sim.md, "Runs of 2026-07-28").
func simFindings(verdict string) string {
	var out []string
	for line := range strings.Lines(verdict) {
		if strings.HasPrefix(line, "SIM-") {
			out = append(out, line)
		}
	}
	return strings.Join(out, "")
}

// traceDigest is the digest two runs of a seed must share: SHA-256 over
// the trace's header and records, the records of each simulated instant
// taken as a set (sorted), file positions left out. Within one instant
// the order of records from two goroutines is the scheduler's
// (docs/sim.md, "Determinism", case 1): over HTTP a listen's stream and a
// poll's, over stdio the server's writes from a task and from a listen.
func traceDigest(t *testing.T, trace []byte) [32]byte {
	t.Helper()
	rd, err := traces.NewReader(bytes.NewReader(trace))
	if err != nil {
		t.Fatal(err)
	}
	h := sha256.New()
	head, _ := json.Marshal(rd.Header())
	h.Write(head)
	var instant []string
	at := time.Duration(-1)
	flush := func() {
		slices.Sort(instant)
		for _, r := range instant {
			h.Write([]byte(r))
		}
		instant = instant[:0]
	}
	for rec, err := range rd.Records() {
		if err != nil {
			t.Fatal(err)
		}
		if rec.Offset != at {
			flush()
			at = rec.Offset
		}
		rec.Index = 0
		b, _ := json.Marshal(rec)
		instant = append(instant, string(b)+"\n")
	}
	flush()
	return [32]byte(h.Sum(nil))
}

// racy26 reports whether a schedule of 2026-07-28 may let the scheduler
// choose what a fault catches or what the server sends (docs/sim.md,
// "Determinism"): a disconnect (every request on the connection wakes at
// once); over either transport a fault that holds the connection (stall,
// delay, reorder), since the server writes from several goroutines at
// one instant (a task's answers, a listen's notifications) over stdio
// too; a clock jump; and a call that listens to a task whose status
// changes at the instant the listen opens (an instant tool, one that
// asks for input at once, a slow_text without chunks or failing at
// once): the listen shows it working first or not; and a listening call
// cancelled, whose client closes the listen at the instant the server
// pushes the cancelled status on it.
func racy26(s Schedule) bool {
	for _, f := range s.Faults {
		name, _, _ := strings.Cut(f, ":")
		switch name {
		case "disconnect", "stall", "delay", "reorder", "ttl-expiry":
			return true
		}
	}
	return slices.ContainsFunc(s.Workload.Calls, func(c Call) bool {
		return c.Delivery == DeliveryListen && (c.Tool != server.ToolSlowText || c.durationMs() == 0 || c.FailAfter == 0 || c.CancelAfterMs > 0)
	})
}

// TestDeterminism26Quiet runs 100 seeds of 2026-07-28 whose schedules
// leave the scheduler nothing to choose (not racy26: 28 of seeds 1–200
// are such), twice each: the verdicts, histories and trace digests are
// equal, every one.
func TestDeterminism26Quiet(t *testing.T) {
	n := 0
	for seed := uint64(1); n < 100 && seed <= 10_000; seed++ {
		s := draw26(seed)
		if racy26(s) {
			continue
		}
		n++
		va, _, ha, ta, _ := fingerprintOf(t, s)
		vb, _, hb, tb, _ := fingerprintOf(t, s)
		switch {
		case va != vb:
			t.Errorf("seed %d (%s, %v): two runs gave different verdicts: %s", seed, s.Workload.Transport, s.Faults, firstDiff(va, vb))
		case ha != hb:
			t.Errorf("seed %d (%s, %v): two runs differ: %s", seed, s.Workload.Transport, s.Faults, firstDiff(ha, hb))
		case traceDigest(t, ta) != traceDigest(t, tb):
			t.Errorf("seed %d (%s, %v): two runs wrote traces of different digests", seed, s.Workload.Transport, s.Faults)
		}
	}
	if n < 100 {
		t.Fatalf("only %d quiet seeds in 10,000", n)
	}
}
