package faults

import (
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"

	"github.com/tasksim/tasksim/mcp"
)

// Drawn is a fault drawn for a generated schedule (tasksim sim): its own
// parameters and its weight.
type Drawn struct {
	// Params are the fault's own parameters, "key=value", in spec order.
	Params []string
	// Weight multiplies a run's fault rate into the fault's probability
	// on each message it addresses: a fault that addresses few messages
	// (partials, segments, responses only) or acts once weighs more, so
	// that every fault acts about as often.
	Weight float64
}

// weight is the Draw of a fault drawn without parameters, at weight w.
func weight(w float64) func(*rand.Rand, []string) Drawn {
	return func(*rand.Rand, []string) Drawn { return Drawn{Weight: w} }
}

// DrawSpec draws a spec of k for a generated schedule from r: its own
// parameters (Kind.Draw, given the places the run has) and p=, the
// probability of acting on each message it addresses: rate times its
// weight, at most 1. No count=: which messages a count lets through
// depends on the order they arrive in, which over HTTP is partly the
// scheduler's; a probability is drawn per message.
func (k Kind) DrawSpec(r *rand.Rand, rate float64, places []string) string {
	d := Drawn{Weight: 1}
	if k.Draw != nil {
		d = k.Draw(r, places)
	}
	p := rate
	if d.Weight != 1 {
		p = min(1, d.Weight*rate)
	}
	params := append(slices.Clip(d.Params), "p="+strconv.FormatFloat(p, 'g', 3, 64))
	return k.Name + ":" + strings.Join(params, ",")
}

// At reports whether k acts at any of places.
func (k Kind) At(places ...string) bool {
	return slices.ContainsFunc(places, func(p string) bool { return slices.Contains(k.Places, p) })
}

// For returns the registered kinds of 2025-11-25 traffic that act at any
// of places, sorted by name: For(PlaceConn) are the faults an in-process
// mcp.Conn of that revision takes. It is ForRevision of 2025-11-25, the
// catalog the schedules of that revision draw from: a fault of
// 2026-07-28 alone is not among them.
func (r *Registry) For(places ...string) []Kind {
	return r.ForRevision(mcp.Revision20251125, places...)
}

// ForRevision returns the registered kinds that have a meaning on
// messages of revision rev (Kind.Takes) and act at any of places, sorted
// by name.
func (r *Registry) ForRevision(rev mcp.Revision, places ...string) []Kind {
	var out []Kind
	for _, k := range r.Kinds() {
		if k.At(places...) && k.Takes(rev) {
			out = append(out, k)
		}
	}
	return out
}

// Names returns the names of kinds, in their order.
func Names(kinds []Kind) []string {
	var out []string
	for _, k := range kinds {
		out = append(out, k.Name)
	}
	return out
}

// Place returns the first of places at which b acts, or "": its kind acts
// there, and its stream= (if given) is one that place has. The streams of
// HTTP exchanges (request, post, get) only the HTTP place has:
// disconnect:stream=post cuts one POST's SSE stream while the connection
// lives, which an mcp.Conn cannot do.
func (b *Bound) Place(places ...string) string {
	for _, p := range places {
		if b.Kind.At(p) && (p == PlaceHTTP || !httpStream(b.Selector.Stream)) {
			return p
		}
	}
	return ""
}

// httpStream reports whether a stream kind is one of an HTTP exchange.
func httpStream(stream string) bool {
	return stream == StreamRequest || stream == StreamPost || stream == StreamGet
}

// ms formats a whole number of milliseconds as a duration parameter.
func ms(n int64) string { return strconv.FormatInt(n, 10) + "ms" }
