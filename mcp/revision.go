package mcp

import (
	"errors"
	"fmt"
	"slices"
	"strings"
)

// Revision names a revision of the Model Context Protocol that tasksim
// speaks as a whole: a wire, a vocabulary and a set of rules. It is the
// "era" of a connection or a message, not the protocolVersion string a
// message carries: the 2025-11-25 revision accepts the older versions an
// initialize request may negotiate (see [SupportedProtocolVersions]),
// while 2026-07-28 accepts only itself.
//
// The spec calls revisions that establish a session with initialize
// "legacy" and those that carry version and capabilities in every
// request's _meta "modern"; an endpoint that serves both is "dual-era"
// (2026-07-28 Versioning, "Terminology"). The vocabulary of 2025-11-25 is
// this package; that of 2026-07-28 is package mcp/rev20260728.
//
// The zero Revision is unknown. A Revision marshals as its name and
// unmarshals only from a known name.
type Revision string

// The revisions tasksim knows.
const (
	// Revision20251125 is the legacy era: initialize, sessions
	// (Mcp-Session-Id), resumable SSE streams and the Tasks primitive in
	// the core (2025-11-25 Lifecycle, Transports, Tasks).
	Revision20251125 Revision = "2025-11-25"
	// Revision20260728 is the modern era: stateless, with the protocol
	// version and client capabilities in every request's _meta and tasks in
	// the io.modelcontextprotocol/tasks extension (2026-07-28 Overview,
	// "Statelessness"; changelog items 1–2 and 6).
	Revision20260728 Revision = "2026-07-28"
)

// revisions is the list Revisions copies, newest first.
var revisions = []Revision{Revision20260728, Revision20251125}

// ErrUnknownRevision is matched by the error of ParseRevision and of
// Revision.UnmarshalText.
var ErrUnknownRevision = errors.New("unknown protocol revision")

// Revisions lists the revisions tasksim knows, newest first, in a slice of
// the caller's own.
func Revisions() []Revision { return slices.Clone(revisions) }

// ParseRevision returns the revision named s. An unknown name is an error
// that matches ErrUnknownRevision and lists the known ones.
func ParseRevision(s string) (Revision, error) {
	r := Revision(s)
	if !r.IsKnown() {
		names := make([]string, len(revisions))
		for i, k := range revisions {
			names[i] = string(k)
		}
		return "", fmt.Errorf("%w %q (known: %s)", ErrUnknownRevision, s, strings.Join(names, ", "))
	}
	return r, nil
}

// RevisionOf returns the revision a protocolVersion string belongs to: a
// version an initialize request may negotiate belongs to 2025-11-25, and
// "2026-07-28" to itself. ok is false for any other string.
func RevisionOf(protocolVersion string) (r Revision, ok bool) {
	for _, k := range revisions {
		if slices.Contains(k.ProtocolVersions(), protocolVersion) {
			return k, true
		}
	}
	return "", false
}

// String returns the revision's name.
func (r Revision) String() string { return string(r) }

// IsKnown reports whether r is one of Revisions.
func (r Revision) IsKnown() bool { return slices.Contains(revisions, r) }

// IsStateless reports whether r carries the protocol version and client
// capabilities in every request rather than in a session: true for
// 2026-07-28 (2026-07-28 Overview, "Statelessness"), false for 2025-11-25
// and for an unknown revision.
func (r Revision) IsStateless() bool { return r == Revision20260728 }

// HasSessions reports whether r opens with initialize and keeps a session
// (2025-11-25 Lifecycle; Transports, "Session Management"): true for
// 2025-11-25, false for 2026-07-28 and for an unknown revision.
func (r Revision) HasSessions() bool { return r == Revision20251125 }

// ProtocolVersions lists the protocolVersion strings a peer of revision r
// may send, newest first, in a slice of the caller's own: for 2025-11-25
// those of SupportedProtocolVersions, for 2026-07-28 only "2026-07-28",
// and none for an unknown revision.
func (r Revision) ProtocolVersions() []string {
	switch r {
	case Revision20251125:
		return SupportedProtocolVersions()
	case Revision20260728:
		return []string{string(Revision20260728)}
	}
	return nil
}

// MarshalText implements encoding.TextMarshaler. An unknown revision is an
// error, so that no record carries a revision tasksim cannot read back.
func (r Revision) MarshalText() ([]byte, error) {
	if !r.IsKnown() {
		_, err := ParseRevision(string(r))
		return nil, err
	}
	return []byte(r), nil
}

// UnmarshalText implements encoding.TextUnmarshaler with ParseRevision.
func (r *Revision) UnmarshalText(b []byte) error {
	got, err := ParseRevision(string(b))
	if err != nil {
		return err
	}
	*r = got
	return nil
}
