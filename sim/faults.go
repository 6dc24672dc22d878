package sim

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"

	"github.com/tasksim/tasksim/faults"
	"github.com/tasksim/tasksim/traces"
)

// DefaultFaultRate is the probability with which a drawn fault acts on a
// message it addresses, when FaultOptions.Rate is 0.
const DefaultFaultRate = 0.05

// FaultOptions say how a seed's fault schedule is made. Zero values are
// defaults.
type FaultOptions struct {
	// Registry is the fault catalog to draw from and to read Specs with;
	// nil is faults.Builtin().
	Registry *faults.Registry
	// Specs, when given, are every run's faults (--fault), instead of
	// drawn ones.
	Specs []string
	// Rate is the probability of each drawn fault on each message it
	// addresses; 0 means DefaultFaultRate.
	Rate float64
	// None runs without faults.
	None bool
	// Revision is the revision of the runs ("" is 2025-11-25): Check
	// refuses the faults and selectors whose meaning is another
	// revision's, and drawn faults are of those it takes.
	Revision string
}

// Check reports the first of Specs that does not parse, or that a run
// over transport cannot apply ("" for either transport).
func (o *FaultOptions) Check(transport string) error {
	bound, err := checkSpecs(registry(o.Registry), o.Specs)
	if err != nil {
		return err
	}
	if err := checkRevisionFaults(registry(o.Registry), bound, o.Revision); err != nil {
		return err
	}
	if transport != "" {
		return checkTransport(registry(o.Registry), bound, transport)
	}
	return nil
}

// Transport returns the transport Specs need: TransportHTTP when one of
// them acts only at the HTTP place, else "" (either). Specs that do not
// parse need none.
func (o *FaultOptions) Transport() string {
	bound, err := checkSpecs(registry(o.Registry), o.Specs)
	if err != nil || needsHTTP(bound) == "" {
		return ""
	}
	return TransportHTTP
}

// registry returns r, or the built-in catalog when r is nil.
func registry(r *faults.Registry) *faults.Registry {
	if r == nil {
		return faults.Builtin()
	}
	return r
}

// places returns the places where the faults of a run over transport act,
// in the order a fault is put at the first it can act at: the client's
// mcp.Conn (every transport), then over HTTP the faults' HTTP middleware
// around the server (http.go).
func places(transport string) []string {
	if transport == TransportHTTP {
		return []string{faults.PlaceConn, faults.PlaceHTTP}
	}
	return []string{faults.PlaceConn}
}

// faultNames returns the names of the catalog's faults a run over
// transport can apply, sorted.
func faultNames(reg *faults.Registry, transport string) []string {
	return faults.Names(reg.For(places(transport)...))
}

// drawFaults draws none (one seed in ten) or one to three faults of the
// catalog the transport can apply, each with its parameters, acting with
// about probability rate on each message it addresses
// (faults.Kind.DrawSpec).
//
// A run of 2026-07-28 draws from the faults that revision takes
// (revisionKinds), each spec with parameters it takes (drawRevisionSpec).
func drawFaults(r *rand.Rand, reg *faults.Registry, rate float64, transport, rev string) []string {
	at := places(transport)
	kinds := revisionKinds(reg, transport, rev)
	out := []string{}
	n := 0
	if r.IntN(10) > 0 {
		n = min(1+r.IntN(3), len(kinds))
	}
	var drawn []string
	for len(out) < n {
		k := kinds[r.IntN(len(kinds))]
		if slices.Contains(drawn, k.Name) {
			continue
		}
		drawn = append(drawn, k.Name)
		if rev != Revision20260728 {
			out = append(out, k.DrawSpec(r, rate, at))
		} else if spec := drawRevisionSpec(r, reg, k, rate, at, rev); spec != "" {
			out = append(out, spec)
		} else {
			n-- // no spec of k fits the revision
		}
	}
	return out
}

// pin turns a decision into a spec that takes it again, on the same
// message of the same run and on no other: the fault with its own
// parameters, addressed by stream, method, id or task and position.
func pin(a faults.Applied) string {
	s, err := faults.ParseSpec(a.Spec)
	if err != nil {
		return a.Spec
	}
	var parts []string
	for _, p := range s.Params {
		switch p.Key {
		case "stream", "method", "id", "task", "seqnr", "seq", "nth", "p", "count":
		default:
			parts = append(parts, p.Key+"="+p.Value)
		}
	}
	t := a.Target
	kind, _, _ := strings.Cut(t.Stream, ":")
	if kind != "" {
		parts = append(parts, "stream="+kind)
	}
	if t.Method != "" {
		parts = append(parts, "method="+t.Method)
	}
	switch {
	case t.RPCID != "":
		parts = append(parts, "id="+strings.Trim(t.RPCID, `"`))
	case t.TaskID != "":
		parts = append(parts, "task="+t.TaskID)
	}
	if t.HasSeq {
		parts = append(parts, "seq="+strconv.FormatInt(t.Seq, 10))
	}
	parts = append(parts, "nth="+strconv.Itoa(t.N), "count=1")
	return s.Name + ":" + strings.Join(parts, ",")
}

// split names the logical stream of a message of session sess, for
// faults.ConnOptions.Split: a response by its id, a notification by its
// task, anything else by its method.
func split(sess int) func(traces.Direction, *traces.RPCFields) string {
	p := "s" + strconv.Itoa(sess+1) + "/"
	return func(_ traces.Direction, rpc *traces.RPCFields) string {
		switch {
		case rpc == nil:
			return p + "other"
		case rpc.Type != "notification" && rpc.ID != "":
			return p + "id:" + rpc.ID
		case rpc.TaskID != "":
			return p + "task:" + rpc.TaskID
		}
		return p + rpc.Method
	}
}

// sessionOf reads the session index from a logical stream name
// ("stdout:s2/id:7" is session 1), or -1.
func sessionOf(stream string) int {
	_, rest, ok := strings.Cut(stream, ":s")
	if !ok {
		return -1
	}
	num, _, _ := strings.Cut(rest, "/")
	n, err := strconv.Atoi(num)
	if err != nil {
		return -1
	}
	return n - 1
}

// checkSpecs parses specs with the catalog, refusing faults that act at
// neither the Conn place nor the HTTP place.
func checkSpecs(reg *faults.Registry, specs []string) ([]*faults.Bound, error) {
	bound, err := reg.ParseAll(specs)
	if err != nil {
		return nil, err
	}
	for _, b := range bound {
		if !b.Kind.At(places(TransportHTTP)...) {
			return nil, fmt.Errorf("fault %q acts at %s; tasksim sim has the places conn and http (faults: %s)", b.Spec.String(), strings.Join(b.Kind.Places, ", "), strings.Join(faultNames(reg, TransportHTTP), ", "))
		}
	}
	return bound, nil
}
