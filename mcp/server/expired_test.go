package server

import (
	"strconv"
	"testing"
	"time"

	"github.com/tasksim/tasksim/clock"
)

// An expired id is remembered for expiredMemory after it expired, not a
// moment longer, and forgetting drops only the old ones.
func TestExpiredIDsForget(t *testing.T) {
	t0 := time.Date(2026, 7, 28, 0, 0, 0, 0, time.UTC)
	e := newExpiredIDs()
	e.add("a", t0)
	e.add("b", t0.Add(time.Minute))
	e.forget(t0.Add(expiredMemory))
	if !e.has("a") || !e.has("b") {
		t.Fatalf("at expiredMemory after a: a %v, b %v; want both remembered", e.has("a"), e.has("b"))
	}
	e.forget(t0.Add(expiredMemory + time.Nanosecond))
	if e.has("a") || !e.has("b") || e.len() != 1 {
		t.Fatalf("just past a's memory: a %v, b %v, %d ids; want only b", e.has("a"), e.has("b"), e.len())
	}
	e.forget(t0.Add(time.Minute + expiredMemory + time.Nanosecond))
	if e.has("b") || e.len() != 0 || len(e.order) != 0 {
		t.Fatalf("past b's memory: %d ids, %d in order; want none", e.len(), len(e.order))
	}
}

// Removing n expired tasks costs O(n), not O(n²): a burst of tasks that
// expire together must not hold the store's lock for a scan of every
// remembered id at each removal. Compare with -bench before a change:
// the cost per removal must not grow with the ids remembered.
func BenchmarkBoardRemoveExpired(b *testing.B) {
	for _, n := range []int{1000, 20000} {
		b.Run(strconv.Itoa(n), func(b *testing.B) {
			for b.Loop() {
				bd := newBoard(clock.NewSim(time.Unix(0, 0)), newBudget(1<<40, 1<<40), new(storedCount))
				ts := make([]*statelessTask, n)
				for i := range ts {
					ts[i] = &statelessTask{board: bd, id: strconv.Itoa(i)}
					bd.tasks[ts[i].id] = ts[i]
				}
				for _, t := range ts {
					bd.remove(t)
				}
			}
		})
	}
}
