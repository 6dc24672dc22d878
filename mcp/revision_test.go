package mcp

import (
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"
)

func TestParseRevision(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		want     Revision
		ok       bool
	}{
		{"legacy", "2025-11-25", Revision20251125, true},
		{"modern", "2026-07-28", Revision20260728, true},
		{"an older version is not a revision", "2025-06-18", "", false},
		{"draft", "DRAFT-2026-v1", "", false},
		{"empty", "", "", false},
		{"padded", " 2026-07-28", "", false},
		{"case", "2026-07-28T00:00:00Z", "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseRevision(tc.in)
			if tc.ok {
				if err != nil || got != tc.want {
					t.Fatalf("ParseRevision(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
				}
				return
			}
			if !errors.Is(err, ErrUnknownRevision) || got != "" {
				t.Fatalf("ParseRevision(%q) = %q, %v; want ErrUnknownRevision", tc.in, got, err)
			}
			for _, k := range Revisions() {
				if !strings.Contains(err.Error(), string(k)) {
					t.Errorf("error %q does not list %s", err, k)
				}
			}
		})
	}
}

func TestRevisionPredicates(t *testing.T) {
	for _, tc := range []struct {
		r                          Revision
		known, stateless, sessions bool
	}{
		{Revision20251125, true, false, true},
		{Revision20260728, true, true, false},
		{"", false, false, false},
		{"2025-06-18", false, false, false},
	} {
		if got := tc.r.IsKnown(); got != tc.known {
			t.Errorf("%q.IsKnown() = %v", tc.r, got)
		}
		if got := tc.r.IsStateless(); got != tc.stateless {
			t.Errorf("%q.IsStateless() = %v", tc.r, got)
		}
		if got := tc.r.HasSessions(); got != tc.sessions {
			t.Errorf("%q.HasSessions() = %v", tc.r, got)
		}
	}
}

func TestRevisionsNewestFirstAndOwned(t *testing.T) {
	got := Revisions()
	if !slices.Equal(got, []Revision{Revision20260728, Revision20251125}) {
		t.Fatalf("Revisions() = %v", got)
	}
	got[0] = "x"
	if Revisions()[0] != Revision20260728 {
		t.Fatal("Revisions shares its slice with the caller")
	}
}

func TestRevisionOf(t *testing.T) {
	for _, v := range SupportedProtocolVersions() {
		if r, ok := RevisionOf(v); !ok || r != Revision20251125 {
			t.Errorf("RevisionOf(%q) = %q, %v; want 2025-11-25", v, r, ok)
		}
	}
	if r, ok := RevisionOf("2026-07-28"); !ok || r != Revision20260728 {
		t.Errorf("RevisionOf(2026-07-28) = %q, %v", r, ok)
	}
	for _, v := range []string{"", "1900-01-01", "2026-07-29"} {
		if r, ok := RevisionOf(v); ok {
			t.Errorf("RevisionOf(%q) = %q, true; want not ok", v, r)
		}
	}
	// The legacy list keeps its meaning: 2026-07-28 is not negotiable by
	// initialize.
	if IsSupportedProtocolVersion("2026-07-28") {
		t.Error("2026-07-28 became an initialize version")
	}
	if v := Revision20260728.ProtocolVersions(); !slices.Equal(v, []string{"2026-07-28"}) {
		t.Errorf("2026-07-28 ProtocolVersions = %v", v)
	}
	if v := Revision("x").ProtocolVersions(); v != nil {
		t.Errorf("unknown ProtocolVersions = %v", v)
	}
}

func TestRevisionJSON(t *testing.T) {
	type rec struct {
		Revision Revision `json:"revision"`
	}
	b, err := json.Marshal(rec{Revision20260728})
	if err != nil || string(b) != `{"revision":"2026-07-28"}` {
		t.Fatalf("marshal = %s, %v", b, err)
	}
	var r rec
	if err := json.Unmarshal([]byte(`{"revision":"2025-11-25"}`), &r); err != nil || r.Revision != Revision20251125 {
		t.Fatalf("unmarshal = %+v, %v", r, err)
	}
	if err := json.Unmarshal([]byte(`{"revision":"2027-01-01"}`), &r); !errors.Is(err, ErrUnknownRevision) {
		t.Fatalf("unmarshal of an unknown revision: %v", err)
	}
	if _, err := json.Marshal(rec{"bogus"}); !errors.Is(err, ErrUnknownRevision) {
		t.Fatalf("marshal of an unknown revision: %v", err)
	}
}
