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
		if dropped, _ := r.push(ev(n)); dropped {
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
		if dropped, _ := r.push(ev(n)); dropped != (n > 4) {
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

func TestEventRingCountsBytes(t *testing.T) {
	r := newEventRing(3, 1)
	for _, ev := range []string{"aa", "bbb", "c"} {
		r.push([]byte(ev))
	}
	if r.bytes != 6 {
		t.Fatalf("bytes %d, want 6", r.bytes)
	}
	if dropped, n := r.push([]byte("dddd")); !dropped || n != 2 || r.bytes != 8 {
		t.Fatalf("push over capacity: dropped %v %d bytes, holds %d", dropped, n, r.bytes)
	}
	if n := r.dropOldest(); n != 3 || r.bytes != 5 || r.first != 3 {
		t.Fatalf("dropOldest: %d, holds %d, first %d", n, r.bytes, r.first)
	}
	if n := r.clear(); n != 5 || r.bytes != 0 || r.next() != 5 || r.buf != nil {
		t.Fatalf("clear: %d, holds %d, next %d", n, r.bytes, r.next())
	}
	r.push([]byte("e"))
	if got, next, gap := r.since(5, nil); len(got) != 1 || next != 6 || gap {
		t.Fatalf("after clear: since(5) = %q, %d, %v", got, next, gap)
	}
}
