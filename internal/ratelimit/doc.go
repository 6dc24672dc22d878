// Package ratelimit is the token bucket the reference server and its
// Streamable HTTP transport share: the server's rate of task operations
// per session (2025-11-25 Tasks › Security Considerations: receivers
// SHOULD rate-limit task operations) and the transport's resumes per
// session and minute.
//
//	b := ratelimit.Bucket{Max: 5000, Per: time.Second}
//	if !b.Take(clock.Now()) {
//		// over the rate: refuse
//	}
package ratelimit
