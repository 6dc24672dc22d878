package ratelimit

import "time"

// Bucket is a token bucket that holds up to Max tokens and refills at Max
// per Per, on the time its caller gives it: Take is a pure function of
// the times it is called at, so a bucket follows whatever clock its owner
// runs on (the wall clock, or a simulated one). It starts full. It is not
// safe for concurrent use: its owner guards it with its own lock.
type Bucket struct {
	// Max is the bucket's capacity and its refill per Per; 0 or less
	// means no limit.
	Max int
	// Per is the refill period.
	Per time.Duration

	tokens float64
	at     time.Time // when tokens was last brought up to date; zero: never
}

// Take takes one token as of now and reports whether there was one. A
// bucket without a limit always has one.
func (b *Bucket) Take(now time.Time) bool {
	max := float64(b.Max)
	if max <= 0 {
		return true
	}
	if b.at.IsZero() {
		b.tokens = max
	} else {
		b.tokens = min(max, b.tokens+now.Sub(b.at).Seconds()/b.Per.Seconds()*max)
	}
	b.at = now
	if b.tokens < 1 {
		return false
	}
	b.tokens--
	return true
}
