package sim

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/tasksim/tasksim/faults"
	"github.com/tasksim/tasksim/mcp/server"
)

// A fault or selector whose meaning is 2025-11-25's alone is refused in a
// run of 2026-07-28, with one line that names it and the faults the
// revision takes; a run of 2025-11-25 takes it as before.
func TestRevisionRefusesLegacyFaults(t *testing.T) {
	for _, tc := range []struct{ spec, why string }{
		{"duplicate-seqnr:p=0.1", "SEP-1905 segment"},
		{"drop-partial", "SEP-2679 partial"},
		{"server-restart:count=1", "loss of the sessions"},
		{"drop-response:seqnr=2", "seqnr="},
		{"delay:seq=1,d=10ms", "seq="},
		{"disconnect:stream=get", "stream=get"},
		{"ttl-expiry:ttl=100ms", "ttl="},
		{"ttl-expiry", "without advance="},
	} {
		err := (&FaultOptions{Specs: []string{tc.spec}, Revision: Revision20260728}).Check("")
		if err == nil || strings.Contains(err.Error(), "\n") || !strings.Contains(err.Error(), tc.why) ||
			!strings.Contains(err.Error(), "faults of a 2026-07-28 run: delay, disconnect, drop-response, drop-sse-event, http-status, reorder, stall, ttl-expiry)") {
			t.Errorf("%s: %v, want one line saying %q and the revision's faults", tc.spec, err, tc.why)
		}
		if err := (&FaultOptions{Specs: []string{tc.spec}}).Check(""); err != nil {
			t.Errorf("%s in a run of 2025-11-25: %v", tc.spec, err)
		}
	}
	for _, spec := range []string{"delay:d=10ms", "disconnect:stream=post,at=mid", "drop-response:method=tasks/get", "drop-sse-event", "http-status:code=503", "reorder", "stall", "ttl-expiry:advance=2s,count=1"} {
		if err := (&FaultOptions{Specs: []string{spec}, Revision: Revision20260728}).Check(""); err != nil {
			t.Errorf("%s: %v", spec, err)
		}
	}
	// A schedule file says its revision: its faults are read with it.
	s := draw26(1)
	s.Faults = []string{"drop-partial"}
	b, _ := MarshalSchedule(s)
	if _, err := ParseSchedule("x.json", b); err == nil || !strings.Contains(err.Error(), "drop-partial") {
		t.Errorf("a 2026-07-28 schedule with drop-partial: %v", err)
	}
	if _, err := Run(context.Background(), s, nil); err == nil {
		t.Error("Run took drop-partial in a run of 2026-07-28")
	}
}

// The schedules of 2026-07-28 draw only the faults the revision takes,
// every one of them, with parameters it takes; both servers, both
// deliveries and every tool of the workload; and a schedule of 2025-11-25
// says no revision, as before runs had one.
func TestDraw26(t *testing.T) {
	reg := faults.Builtin()
	want := revisionFaultNames(reg, TransportHTTP, Revision20260728)
	seen := map[string]bool{}
	for seed := uint64(1); seed <= 1000; seed++ {
		s := draw26(seed)
		if err := s.Workload.Validate(); err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		if err := (&FaultOptions{Specs: s.Faults, Revision: Revision20260728}).Check(s.Workload.Transport); err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		for _, f := range s.Faults {
			name, _, _ := strings.Cut(f, ":")
			seen["fault "+name] = true
		}
		seen["server "+s.Workload.Server] = true
		seen["transport "+s.Workload.Transport] = true
		for _, c := range s.Workload.Calls {
			seen["delivery "+c.Delivery] = true
			seen["tool "+c.Tool] = true
			seen["noTasks "+strconvBool(c.NoTasks)] = true
		}
	}
	var missing []string
	for _, name := range want {
		if !seen["fault "+name] {
			missing = append(missing, "fault "+name)
		}
	}
	for _, k := range []string{"server both", "server 2026-07-28", "transport http", "transport stdio", "delivery poll", "delivery listen",
		"tool " + server.ToolSlowText, "tool " + server.ToolInstant, "tool " + toolConfirm, "tool " + toolMRTRTask, "noTasks true", "noTasks false"} {
		if !seen[k] {
			missing = append(missing, k)
		}
	}
	if len(missing) > 0 {
		t.Errorf("1000 seeds of 2026-07-28 never drew %v", missing)
	}
	for name := range legacyFaults {
		if seen["fault "+name] || slices.Contains(want, name) {
			t.Errorf("a run of 2026-07-28 drew %s", name)
		}
	}
	b, _ := MarshalSchedule(Draw(1, nil, nil))
	if strings.Contains(string(b), "revision") || strings.Contains(string(b), "delivery") {
		t.Errorf("a schedule of 2025-11-25 says a revision: %s", b)
	}
}

func strconvBool(b bool) string {
	if b {
		return "true"
	}
	return "false"
}

// Every tool of a 2026-07-28 workload, followed either way, ends with its
// result over both transports against both servers, fault-free. Over
// stdio the transport found no stateless endpoint in the run's node, and
// served the requests as a session's, where the tools of 2026-07-28 alone
// are unknown.
func TestStatelessToolsEachTransport(t *testing.T) {
	for _, tr := range []string{TransportStdio, TransportHTTP} {
		for _, sv := range []string{ServerBoth, ServerStateless} {
			var calls []Call
			at := int64(0)
			for _, tool := range []string{toolConfirm, toolMRTRTask, server.ToolInstant, server.ToolSlowText} {
				for _, d := range Deliveries() {
					calls = append(calls, Call{StartMs: at, Tool: tool, Delivery: d, Chunks: 2, IntervalMs: 50, FailAfter: -1})
					at += 7
				}
			}
			for i := range calls {
				if calls[i].Tool != server.ToolSlowText {
					calls[i].Chunks, calls[i].IntervalMs = 0, 0
				}
			}
			s := Schedule{Seed: 1, Faults: []string{}, Workload: Workload{Revision: Revision20260728, Transport: tr, Server: sv, Sessions: 1, Calls: calls}}
			res, err := Run(context.Background(), s, nil)
			if err != nil {
				t.Fatalf("%s %s: %v", tr, sv, err)
			}
			for i, c := range res.Calls {
				if c.Got != OutcomeOK {
					t.Errorf("%s, server %s: %s by %s ended %s: %s", tr, sv, calls[i].Tool, calls[i].Delivery, c.Got, c.Detail)
				}
			}
			for _, f := range res.Liveness {
				t.Errorf("%s, server %s: %s: %s", tr, sv, f.Rule, f.Message)
			}
		}
	}
}

// Runs of 2026-07-28 under drawn faults: every call ends as it must or as
// a fault explains, tasks/get recovers what the faults left once they
// stop, and a fresh connection's call completes (the simulator's own
// rules, SIM-LIVENESS and SIM-RESULT).
func TestRevision26Live(t *testing.T) {
	fired := map[string]int{}
	for seed := uint64(1); seed <= 200; seed++ {
		s := draw26(seed)
		res, err := Run(context.Background(), s, nil)
		if err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		for _, f := range res.Liveness {
			t.Errorf("seed %d (%s, %v): %s: %s", seed, s.Workload.Transport, s.Faults, f.Rule, f.Message)
		}
		// The reference pair breaks no MUST of the revision: a rule that
		// fails here blames it wrongly (a request id reused on a fresh
		// connection, a cancelled one, judged as a collision).
		for _, id := range res.FailedRules() {
			t.Errorf("seed %d (%s, %v): the reference pair fails %s: %s", seed, s.Workload.Transport, s.Faults, id, res.Finding(id))
		}
		for _, a := range res.Applied {
			fired[a.Name]++
		}
		if !strings.Contains(string(res.Trace), `"2026-07-28"`) {
			t.Fatalf("seed %d: the trace carries no request of 2026-07-28", seed)
		}
	}
	for _, name := range revisionFaultNames(faults.Builtin(), TransportHTTP, Revision20260728) {
		if fired[name] == 0 {
			t.Errorf("%s never acted in 200 seeds", name)
		}
	}
}
