package server

import "time"

// expiredIDs remembers the ids of expired tasks for expiredMemory, so that
// a lookup of one says "expired" rather than "not found". The ids are kept
// in the order they expired, so forgetting the old ones costs only what is
// forgotten: a store that sees many tasks expire at once (a burst created
// together) must not scan every remembered id at each removal.
type expiredIDs struct {
	at    map[string]time.Time
	order []expiredID // oldest first; on the server's clock, times never decrease
}

type expiredID struct {
	id string
	at time.Time
}

func newExpiredIDs() expiredIDs { return expiredIDs{at: map[string]time.Time{}} }

// add remembers id as expired at now.
func (e *expiredIDs) add(id string, now time.Time) {
	e.at[id] = now
	e.order = append(e.order, expiredID{id, now})
}

// has reports whether id is remembered as expired.
func (e *expiredIDs) has(id string) bool {
	_, ok := e.at[id]
	return ok
}

// forget drops the ids that expired more than expiredMemory before now.
func (e *expiredIDs) forget(now time.Time) {
	n := 0
	for n < len(e.order) && now.Sub(e.order[n].at) > expiredMemory {
		delete(e.at, e.order[n].id)
		n++
	}
	if n == 0 {
		return
	}
	// Copy the rest down so the array does not keep growing at its end.
	e.order = e.order[:copy(e.order, e.order[n:])]
}

// len returns how many ids are remembered.
func (e *expiredIDs) len() int { return len(e.at) }
