package faults

import (
	"slices"

	"github.com/tasksim/tasksim/mcp"
)

// Revisions of the faults. Each kind says which revisions' messages it
// has a meaning on (Kind.Revisions): the faults of SEP-1905 segments and
// SEP-2679 partials and the restart that loses the sessions are
// 2025-11-25's, the faults of the tasks extension's wire (a request's
// stream that is its cancellation, notifications/tasks, the listen
// acknowledgement, routing by Mcp-Name) 2026-07-28's, the rest every
// revision's. A spec confined with revision= to a revision its fault or
// one of its selectors has no meaning on is refused when it is bound, on
// one line; an unconfined one acts only on the messages it has a meaning
// on (a fault of 2026-07-28 lets every 2025-11-25 message pass).

// rev20251125 and rev20260728 are the Revisions of a kind of one era.
var (
	rev20251125 = []mcp.Revision{mcp.Revision20251125}
	rev20260728 = []mcp.Revision{mcp.Revision20260728}
)

// selectorNotOn says, for a selector key (and value) that has a meaning
// on 2025-11-25 alone, why 2026-07-28 has none: 2026-07-28 results carry
// no SEP-1905 segments, its servers send no SEP-2679 partials and open no
// GET stream (Streamable HTTP of 2026-07-28: GET is 405).
func selectorNotOn(key, value string) string {
	switch {
	case key == "seqnr":
		return "seqnr= addresses SEP-1905 segments, which 2026-07-28 results do not carry"
	case key == "seq":
		return "seq= addresses SEP-2679 partials, which 2026-07-28 does not send"
	case key == "stream" && value == StreamGet:
		return "stream=get addresses the GET stream, which a 2026-07-28 server does not open (GET is 405)"
	}
	return ""
}

// checkRevision refuses a spec confined (revision=) to a revision on
// which its fault, one of its parameters or one of its selectors has no
// meaning.
func checkRevision(s Spec, k *Kind, r mcp.Revision) error {
	if r == "" {
		return nil
	}
	part := "revision=" + string(r)
	if k.Revisions != nil && !slices.Contains(k.Revisions, r) {
		return &SpecError{Spec: s.String(), Part: part, Why: k.Name + " has no meaning on " + string(r) + ": " + k.NotOn}
	}
	for _, p := range s.Params {
		if r != mcp.Revision20260728 {
			break
		}
		if why := selectorNotOn(p.Key, p.Value); why != "" {
			return &SpecError{Spec: s.String(), Part: p.Key + "=" + p.Value + " and " + part, Why: "no meaning on " + string(r) + ": " + why}
		}
	}
	for _, d := range k.Params {
		if d.Revisions == nil || slices.Contains(d.Revisions, r) || !inForce(s, k, d) {
			continue
		}
		v, _ := s.Get(d.Key)
		if v == "" {
			v = d.Default
		}
		return &SpecError{Spec: s.String(), Part: d.Key + "=" + v + " and " + part, Why: "no meaning on " + string(r) + ": " + d.NotOn}
	}
	return nil
}

// inForce reports whether parameter d of k acts in s: it is given, or
// it has a default and no parameter given excludes it (ttl-expiry
// rewrites the ttl unless advance= is given).
func inForce(s Spec, k *Kind, d ParamDoc) bool {
	if _, ok := s.Get(d.Key); ok {
		return true
	}
	if d.Default == "" {
		return false
	}
	for _, o := range k.Params {
		if _, given := s.Get(o.Key); given && slices.Contains(o.Excludes, d.Key) {
			return false
		}
	}
	return true
}

// Takes reports whether k has a meaning on messages of revision r.
func (k Kind) Takes(r mcp.Revision) bool {
	return k.Revisions == nil || slices.Contains(k.Revisions, r)
}

// takes reports whether b's fault has a meaning on m's revision: a fault
// of one revision lets a message of another pass (a message whose
// revision is not known reaches every fault, as before faults had
// revisions).
func (b *Bound) takes(m *Msg) bool {
	return m.Revision == "" || b.Kind == nil || b.Kind.Takes(m.Revision)
}

// of20260728 reports whether m is a message of 2026-07-28, the only
// revision the faults of its wire act on.
func of20260728(m *Msg) bool { return m.Revision == mcp.Revision20260728 && m.RPC != nil }
