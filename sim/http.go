package sim

import (
	"fmt"
	"net/http"
	"strings"

	"github.com/tasksim/tasksim/clock"
	"github.com/tasksim/tasksim/faults"
	"github.com/tasksim/tasksim/traces"
)

// The HTTP place of a run over Streamable HTTP. Most faults act on the
// client's mcp.Conn (faults.Conn), where a message is a message whatever
// the transport; a fault that only the HTTP place takes (http-status: it
// answers an HTTP request with an error status, and a Conn has no status)
// acts in the faults' HTTP middleware (faults.Handler) around the server,
// inside the in-memory transport:
//
//	client ─ faults.Conn ─ streamhttp.ClientTransport ─ memory RoundTripper ─ faults.Handler ─ node
//	         (Conn place)                                                      (HTTP place: http-status)
//
// Each place has a Set of its own faults, both seeded by the run's seed and
// observed into one trace: a fault acts at one place only, never twice on
// one message.

// atHTTP reports whether a bound fault acts at the HTTP place: the Conn
// place cannot take it (faults.Bound.Place), the HTTP place can.
func atHTTP(b *faults.Bound) bool {
	return b.Place(places(TransportHTTP)...) == faults.PlaceHTTP
}

// byPlace splits bound faults into those of the Conn place and those of
// the HTTP place.
func byPlace(bound []*faults.Bound) (conn, httpPlace []*faults.Bound) {
	for _, b := range bound {
		if atHTTP(b) {
			httpPlace = append(httpPlace, b)
		} else {
			conn = append(conn, b)
		}
	}
	return conn, httpPlace
}

// httpFaults wraps the server in the HTTP place of set's faults; with no
// fault in set it returns h itself.
func httpFaults(h http.Handler, set *faults.Set, c clock.Clock) http.Handler {
	return faults.Handler(h, set, &faults.HTTPOptions{PlaceOptions: faults.PlaceOptions{Clock: c}, SplitRequests: splitRequest})
}

// splitRequest names the logical stream of a request within its session,
// for faults.HTTPOptions.SplitRequests: a request by its id, a
// notification by its method, a GET or DELETE (no body) as "other". The
// middleware names sessions s1, s2, ... in the order it first sees their
// ids, which is the order the simulation connects them in: a decision's
// stream "request:s2/id:7" is of session 1, as on the Conn.
func splitRequest(rpc *traces.RPCFields) string {
	switch {
	case rpc == nil:
		return "other"
	case rpc.Type != "notification" && rpc.ID != "":
		return "id:" + rpc.ID
	}
	return rpc.Method
}

// needsHTTP returns the first spec of bound whose fault acts only at the
// HTTP place, or "".
func needsHTTP(bound []*faults.Bound) string {
	for _, b := range bound {
		if atHTTP(b) {
			return b.Spec.String()
		}
	}
	return ""
}

// checkTransport refuses a fault that only the HTTP place takes in a run
// over stdio.
func checkTransport(reg *faults.Registry, bound []*faults.Bound, transport string) error {
	if transport != TransportHTTP {
		if spec := needsHTTP(bound); spec != "" {
			return fmt.Errorf("fault %q needs HTTP; this run is over %s (faults over stdio: %s)", spec, transport, strings.Join(faultNames(reg, TransportStdio), ", "))
		}
	}
	return nil
}
