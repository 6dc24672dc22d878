package server

import "sync/atomic"

// storedCount counts the tasks the server stores, of either era: the
// session store and the stateless board take from one count, so that
// Options.MaxTasks caps the server, not each era (2025-11-25 Tasks,
// "Security Considerations", kept by the tasks extension: receivers
// SHOULD limit concurrent tasks).
type storedCount struct{ n atomic.Int64 }

// take counts one more task unless max are stored, and reports whether it
// did. Two takes racing at the limit may both be refused; never both
// succeed past it.
func (c *storedCount) take(max int) bool {
	if c.n.Add(1) > int64(max) {
		c.n.Add(-1)
		return false
	}
	return true
}

// give uncounts k deleted tasks.
func (c *storedCount) give(k int) { c.n.Add(-int64(k)) }
