package sim

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"

	"github.com/tasksim/tasksim/faults"
	"github.com/tasksim/tasksim/mcp"
)

// The revision a run speaks (Workload.Revision). A run of 2025-11-25 is
// the reference pair with sessions (initialize, tasks/result, SEP-1905,
// SEP-2679); a run of 2026-07-28 is the stateless client
// (client.Stateless) against the reference server serving that revision
// alone or both (Workload.Server), following its tasks by polling or by
// listening (run26.go). "" in a schedule is 2025-11-25, so that schedules
// written before runs had a revision read as they ran.

// Revisions a run may speak, by name.
const (
	Revision20251125 = string(mcp.Revision20251125)
	Revision20260728 = string(mcp.Revision20260728)
)

// Servers a run of 2026-07-28 may draw (Workload.Server): the dual-era
// reference server, or one that serves 2026-07-28 alone.
const (
	ServerBoth      = "both"
	ServerStateless = Revision20260728
)

// revisionOf returns the revision a workload speaks, "" read as
// 2025-11-25.
func revisionOf(w Workload) string {
	if w.Revision == "" {
		return Revision20251125
	}
	return w.Revision
}

// stateless reports whether the workload speaks 2026-07-28.
func (w Workload) stateless() bool { return w.Revision == Revision20260728 }

// CheckRevision reports a revision tasksim sim cannot run, on one line.
func CheckRevision(r string) error {
	switch r {
	case "", Revision20251125, Revision20260728:
		return nil
	}
	return fmt.Errorf("revision %q: want %s or %s", r, Revision20251125, Revision20260728)
}

// legacyFaults are the faults whose meaning is 2025-11-25's alone: a
// SEP-1905 segment number, a SEP-2679 partial, and a restart whose point
// is the loss of the sessions (2026-07-28 has none). legacySelectors are
// the selector keys likewise: seqnr= and seq= address SEP-1905 segments
// and SEP-2679 partials, stream=get the standalone GET stream, which a
// 2026-07-28 server does not open (its GET is 405).
var (
	legacyFaults = map[string]string{
		"duplicate-seqnr": "it duplicates a SEP-1905 segment (seqNr), which 2026-07-28 results do not carry",
		"drop-partial":    "it drops a SEP-2679 partial notification, which 2026-07-28 does not send",
		"server-restart":  "its point is the loss of the sessions, and 2026-07-28 has none",
	}
	legacySelectors = map[string]string{
		"seqnr": "seqnr= addresses SEP-1905 segments, which 2026-07-28 results do not carry",
		"seq":   "seq= addresses SEP-2679 partials, which 2026-07-28 does not send",
	}
)

// checkRevisionFaults refuses, in a run of revision r, a fault or a
// selector whose meaning is 2025-11-25's alone; an error is one line
// and names the faults the revision takes.
func checkRevisionFaults(reg *faults.Registry, bound []*faults.Bound, r string) error {
	if r != Revision20260728 {
		return nil
	}
	for _, b := range bound {
		if err := revisionRefuses(b); err != "" {
			return fmt.Errorf("fault %q has no meaning on %s: %s (faults of a %s run: %s)", b.Spec.String(), r, err, r, strings.Join(revisionFaultNames(reg, TransportHTTP, r), ", "))
		}
	}
	return nil
}

// revisionRefuses says why a 2026-07-28 run refuses b, "" when it
// takes it.
func revisionRefuses(b *faults.Bound) string {
	if why, ok := legacyFaults[b.Spec.Name]; ok {
		return why
	}
	for _, p := range b.Spec.Params {
		if why, ok := legacySelectors[p.Key]; ok {
			return why
		}
		if p.Key == "stream" && p.Value == faults.StreamGet {
			return "stream=get addresses the standalone GET stream, which a 2026-07-28 server does not open"
		}
		if b.Spec.Name == "ttl-expiry" && p.Key == "ttl" {
			return "ttl= rewrites params.task.ttl, which 2026-07-28 requests do not carry (the server sets the ttl); advance= jumps the clock"
		}
	}
	if b.Spec.Name == "ttl-expiry" && !slices.ContainsFunc(b.Spec.Params, func(p faults.Param) bool { return p.Key == "advance" }) {
		return "without advance= it rewrites params.task.ttl, which 2026-07-28 requests do not carry (the server sets the ttl)"
	}
	return ""
}

// revisionKinds returns the kinds a run over transport of revision r
// can draw, sorted by name.
func revisionKinds(reg *faults.Registry, transport, r string) []faults.Kind {
	kinds := reg.For(places(transport)...)
	if r != Revision20260728 {
		return kinds
	}
	return slices.DeleteFunc(kinds, func(k faults.Kind) bool { _, ok := legacyFaults[k.Name]; return ok })
}

// revisionFaultNames returns the names of revisionKinds.
func revisionFaultNames(reg *faults.Registry, transport, r string) []string {
	return faults.Names(revisionKinds(reg, transport, r))
}

// drawRevisionSpec draws a spec of k that a run of revision r takes:
// a spec k.DrawSpec draws with a parameter of another revision's (a
// ttl-expiry's ttl=) is drawn again, at most a few times; "" when none
// fits.
func drawRevisionSpec(r *rand.Rand, reg *faults.Registry, k faults.Kind, rate float64, at []string, rev string) string {
	for range 8 {
		spec := k.DrawSpec(r, rate, at)
		b, err := reg.ParseAll([]string{spec})
		if err != nil {
			return ""
		}
		if rev != Revision20260728 || revisionRefuses(b[0]) == "" {
			return spec
		}
	}
	return ""
}
