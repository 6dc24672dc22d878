package mcp

import (
	"math"
	"time"
)

// MaxDuration is the longest time.Duration, about 292 years.
const MaxDuration = time.Duration(math.MaxInt64)

// Millis converts a count of milliseconds from the wire (a task's ttl or
// pollInterval, a tool argument) to a Duration of at most limit; zero and
// negative counts give 0.
//
// It compares in milliseconds before converting: time.Duration(ms) *
// time.Millisecond overflows above about 9.2e12 ms, and a ttl of 1e13 ms
// would become a negative duration, that is a task expired at once.
func Millis(ms int64, limit time.Duration) time.Duration {
	switch {
	case ms <= 0 || limit <= 0:
		return 0
	case ms >= limit.Milliseconds():
		return limit
	}
	return time.Duration(ms) * time.Millisecond
}

// MillisFloat is Millis for a number that JSON gave as a float. ok is
// false for a negative, NaN or infinite count or one above limit, which a
// caller should refuse rather than cap.
func MillisFloat(ms float64, limit time.Duration) (d time.Duration, ok bool) {
	if math.IsNaN(ms) || ms < 0 || ms > float64(limit.Milliseconds()) {
		return 0, false
	}
	return min(time.Duration(ms*float64(time.Millisecond)), limit), true
}
