package streamhttp

import (
	"fmt"
	"testing"
)

func TestEventRing(t *testing.T) {
	r := newEventRing(4, 1)
	ev := func(n int) []byte { return []byte(fmt.Sprint(n)) }
	names := func(evs [][]byte) string { return fmt.Sprintf("%s", evs) }
	for n := 1; n <= 3; n++ {
		if r.push(ev(n)) {
			t.Fatalf("push %d dropped an event", n)
		}
	}
	if got, next, gap := r.since(1, nil); names(got) != "[1 2 3]" || next != 4 || gap {
		t.Fatalf("since(1) = %s, %d, %v", names(got), next, gap)
	}
	if got, next, gap := r.since(4, nil); len(got) != 0 || next != 4 || gap {
		t.Fatalf("since(4) = %s, %d, %v", names(got), next, gap)
	}
	for n := 4; n <= 6; n++ {
		if dropped := r.push(ev(n)); dropped != (n > 4) {
			t.Fatalf("push %d: dropped %v", n, dropped)
		}
	}
	if r.first != 3 || r.next() != 7 || len(r.buf) != 4 {
		t.Fatalf("first %d next %d capacity %d", r.first, r.next(), len(r.buf))
	}
	if got, next, gap := r.since(2, nil); len(got) != 0 || next != 2 || !gap {
		t.Fatalf("since(2) = %s, %d, %v; want a gap", names(got), next, gap)
	}
	if got, next, gap := r.since(4, nil); names(got) != "[4 5 6]" || next != 7 || gap {
		t.Fatalf("since(4) = %s, %d, %v", names(got), next, gap)
	}
}

func TestEventRingGrowsOnDemand(t *testing.T) {
	r := newEventRing(4096, 1)
	r.push([]byte("a"))
	if len(r.buf) > 4 {
		t.Fatalf("one event took %d slots", len(r.buf))
	}
	for range 5000 {
		r.push([]byte("b"))
	}
	if len(r.buf) != 4096 || r.n != 4096 || r.next() != 5002 {
		t.Fatalf("capacity %d, held %d, next %d", len(r.buf), r.n, r.next())
	}
}
