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
	// Specs, when given, are every run's faults (--fault), instead of
	// drawn ones.
	Specs []string
	// Rate is the probability of each drawn fault on each message it
	// addresses; 0 means DefaultFaultRate.
	Rate float64
	// None runs without faults.
	None bool
}

// ConnFaults returns the catalog's faults that can act in-process, on an
// mcp.Conn, sorted by name: every fault but those that need HTTP.
func ConnFaults() []string {
	var out []string
	for _, k := range faults.Builtin().Kinds() {
		if slices.Contains(k.Places, faults.PlaceConn) {
			out = append(out, k.Name)
		}
	}
	return out
}

// Faults returns the catalog's faults a run over transport can apply,
// sorted by name: over HTTP the whole catalog, over stdio every fault but
// those that need the HTTP place.
func Faults(transport string) []string {
	if transport != TransportHTTP {
		return ConnFaults()
	}
	var out []string
	for _, k := range faults.Builtin().Kinds() {
		if slices.Contains(k.Places, faults.PlaceConn) || httpOnly(k) {
			out = append(out, k.Name)
		}
	}
	return out
}

// drawFaults draws none (one seed in ten) or one to three faults of the
// catalog the transport can apply, each with its parameters, acting with
// probability rate on each message it addresses.
func drawFaults(r *rand.Rand, rate float64, transport string) []string {
	kinds := Faults(transport)
	out := []string{}
	n := 0
	if r.IntN(10) > 0 {
		n = 1 + r.IntN(3)
	}
	for len(out) < n {
		name := kinds[r.IntN(len(kinds))]
		if slices.ContainsFunc(out, func(s string) bool { return strings.HasPrefix(s, name+":") }) {
			continue
		}
		params := faultParams(r, name, transport)
		p := rate
		switch name {
		case "drop-partial", "duplicate-seqnr", "ttl-expiry":
			p = min(1, 4*rate) // they address few messages: partials, segments, task requests (or count= limits them)
		case "server-restart":
			p = min(1, 3*rate) // at most count times
		case "drop-response", "stall", "disconnect", "http-status":
			p = min(1, 2*rate) // responses or requests only; a stall or a cut acts once
			if slices.Contains(params, "stream=post") {
				p = min(1, 4*rate) // the events of POST streams only
			}
		case "drop-sse-event":
			p = min(1, 1.5*rate) // messages from the server only
		}
		// No count=: which messages a count lets through depends on the
		// order they arrive in, which over HTTP is partly the
		// scheduler's; a probability is drawn per message.
		params = append(params, "p="+strconv.FormatFloat(p, 'g', 3, 64))
		out = append(out, name+":"+strings.Join(params, ","))
	}
	return out
}

// faultParams draws a fault's own parameters.
func faultParams(r *rand.Rand, name, transport string) []string {
	switch name {
	case "delay":
		return []string{"d=" + ms(10+r.Int64N(500)), "jitter=" + ms(r.Int64N(100))}
	case "server-restart":
		return []string{"count=" + strconv.Itoa(1+r.IntN(3))} // acts on client messages, one at a time
	case "disconnect":
		at := "at=" + []string{"before", "mid", "after"}[r.IntN(3)]
		if transport == TransportHTTP && r.IntN(2) == 0 {
			// One POST's SSE stream cut while the connection lives, at
			// the HTTP place: the client resumes it (GET, Last-Event-ID).
			return []string{"stream=post", at}
		}
		return []string{at}
	case "http-status":
		// Errors a server or a proxy in front of it answers with; not 404,
		// which says the session is gone (a restart shows that).
		return []string{"code=" + []string{"500", "502", "503", "429"}[r.IntN(4)]}
	case "ttl-expiry":
		if r.IntN(2) == 0 {
			// One jump, before a message of the client: the time of a
			// request is the simulation's, where two server messages
			// may pass at one instant.
			return []string{"advance=" + ms(1000*(1+r.Int64N(10))), "stream=stdin", "count=" + strconv.Itoa(1+r.IntN(3))}
		}
		return []string{"ttl=" + ms(50+r.Int64N(500))}
	}
	return nil
}

func ms(n int64) string { return strconv.FormatInt(n, 10) + "ms" }

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
func checkSpecs(specs []string) ([]*faults.Bound, error) {
	bound, err := faults.Builtin().ParseAll(specs)
	if err != nil {
		return nil, err
	}
	for _, b := range bound {
		if !slices.Contains(b.Kind.Places, faults.PlaceConn) && !httpOnly(*b.Kind) {
			return nil, fmt.Errorf("fault %q acts at %s; tasksim sim has the places conn and http (faults: %s)", b.Spec.String(), strings.Join(b.Kind.Places, ", "), strings.Join(Faults(TransportHTTP), ", "))
		}
	}
	return bound, nil
}

// CheckFaults reports the first spec that does not parse, or that a run
// over transport cannot apply ("" for either transport).
func CheckFaults(specs []string, transport string) error {
	bound, err := checkSpecs(specs)
	if err != nil {
		return err
	}
	if transport != "" {
		return checkTransport(bound, transport)
	}
	return nil
}

// NeedsHTTP returns the first of specs that only a run over HTTP can
// apply, or "" (a spec that does not parse is not one).
func NeedsHTTP(specs []string) string {
	bound, err := checkSpecs(specs)
	if err != nil {
		return ""
	}
	return needsHTTP(bound)
}
