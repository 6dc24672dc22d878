package faults

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/tasksim/tasksim/mcp"
)

// TestRegistryFor: the faults of a place are those whose kind names it;
// For keeps to the faults of 2025-11-25, ForRevision to a revision's.
func TestRegistryFor(t *testing.T) {
	reg := Builtin()
	var of2025 []string
	for _, k := range reg.Kinds() {
		if k.Takes(mcp.Revision20251125) {
			of2025 = append(of2025, k.Name)
		}
	}
	conn := Names(reg.For(PlaceConn))
	if slices.Contains(conn, "http-status") || !slices.Contains(conn, "drop-sse-event") || len(conn) != len(of2025)-1 {
		t.Errorf("For(conn) = %v, want every fault of 2025-11-25 but http-status", conn)
	}
	if got := Names(reg.For(PlaceConn, PlaceHTTP)); !slices.Equal(got, of2025) {
		t.Errorf("For(conn, http) = %v, want %v", got, of2025)
	}
	var all []string
	for _, r := range mcp.Revisions() {
		all = append(all, Names(reg.ForRevision(r, PlaceConn, PlaceHTTP, PlaceStdio))...)
	}
	slices.Sort(all)
	if all = slices.Compact(all); !slices.Equal(all, reg.Names()) {
		t.Errorf("ForRevision over the revisions = %v, want every fault %v", all, reg.Names())
	}
	got26 := Names(reg.ForRevision(mcp.Revision20260728, PlaceConn, PlaceHTTP))
	for _, name := range []string{"drop-partial", "duplicate-seqnr", "server-restart"} {
		if slices.Contains(got26, name) {
			t.Errorf("ForRevision(2026-07-28) = %v, has %s", got26, name)
		}
	}
	if !slices.Contains(got26, "wrong-replica") || !slices.Contains(got26, "delay") {
		t.Errorf("ForRevision(2026-07-28) = %v, want wrong-replica and delay among them", got26)
	}
	if got := Names(reg.For(PlaceStdio)); slices.Contains(got, "server-restart") || slices.Contains(got, "drop-sse-event") {
		t.Errorf("For(stdio) = %v, want no server-restart, drop-sse-event", got)
	}
	if got := NewRegistry().For(PlaceConn); len(got) != 0 {
		t.Errorf("an empty registry has faults %v", got)
	}
}

// TestBoundPlace: a fault acts at the first place that takes its kind and
// has its stream.
func TestBoundPlace(t *testing.T) {
	for _, c := range []struct{ spec, want string }{
		{"delay:d=1ms", PlaceConn},
		{"delay:d=1ms,stream=stdout", PlaceConn},
		{"disconnect:stream=post", PlaceHTTP},
		{"reorder:stream=get", PlaceHTTP},
		{"disconnect:stream=request", PlaceHTTP},
		{"http-status:code=503", PlaceHTTP},
	} {
		b, err := Builtin().Parse(c.spec)
		if err != nil {
			t.Fatal(err)
		}
		if got := b.Place(PlaceConn, PlaceHTTP); got != c.want {
			t.Errorf("%s: Place(conn, http) = %q, want %q", c.spec, got, c.want)
		}
		if c.want == PlaceHTTP {
			if got := b.Place(PlaceConn); got != "" {
				t.Errorf("%s: Place(conn) = %q, want none", c.spec, got)
			}
		}
	}
}

// TestDrawSpec: every drawn spec parses, acts at the places it was drawn
// for, carries its weighted probability, and the same seed draws it
// again.
func TestDrawSpec(t *testing.T) {
	reg := Builtin()
	for _, places := range [][]string{{PlaceConn}, {PlaceConn, PlaceHTTP}} {
		for _, k := range reg.For(places...) {
			for seed := range uint64(50) {
				spec := k.DrawSpec(rand.New(rand.NewPCG(seed, 1)), 0.1, places)
				if again := k.DrawSpec(rand.New(rand.NewPCG(seed, 1)), 0.1, places); again != spec {
					t.Fatalf("seed %d drew %q, then %q", seed, spec, again)
				}
				b, err := reg.Parse(spec)
				if err != nil {
					t.Fatalf("%s: %v", spec, err)
				}
				if b.Place(places...) == "" {
					t.Errorf("%s drawn for %v acts at none of them", spec, places)
				}
				if !strings.Contains(spec, ",p=") && !strings.Contains(spec, ":p=") {
					t.Errorf("%s: no p=", spec)
				}
			}
		}
	}
	k := Kind{Name: "x", Draw: weight(30)}
	if got := k.DrawSpec(nil, 0.1, nil); got != "x:p=1" {
		t.Errorf("a weight past 1/rate: %q, want x:p=1", got)
	}
	if got := (Kind{Name: "y"}).DrawSpec(nil, 0.05, nil); got != "y:p=0.05" {
		t.Errorf("no Draw: %q, want y:p=0.05", got)
	}
}
