package load

import (
	"math"
	"time"
)

// Pacer schedules the arrivals of an open-model run: a constant Rate after
// a linear ramp-up, during which the rate grows from 0 to Rate. It is a
// pure function of time: At gives arrival n's intended offset from the
// start, Pace what the scheduler should do now. The scheduler sends every
// arrival that is due at each wake-up, so timer resolution (about 1 ms)
// delays arrivals a little but never drops or merges them.
//
//	rate ▲      ________ Rate
//	     │     /
//	     │    /
//	     │___/______________▶ elapsed
//	       RampUp    Duration
type Pacer struct {
	// Rate is arrivals per second after the ramp-up.
	Rate float64
	// RampUp is how long the rate takes to grow linearly from 0 to Rate;
	// 0 starts at Rate.
	RampUp time.Duration
	// Duration, when positive, ends the schedule: no arrival is due at
	// or after it.
	Duration time.Duration
	// Count, when positive, is the number of arrivals.
	Count int64
}

// At returns the intended offset of arrival n (counted from 0) from the
// start of the schedule. During the ramp-up, n arrivals are due by t when
// n = Rate·t²/(2·RampUp); after it, one every 1/Rate seconds.
func (p Pacer) At(n int64) time.Duration {
	if p.Rate <= 0 {
		return time.Duration(math.MaxInt64)
	}
	r := p.RampUp.Seconds()
	x := float64(n)
	if r > 0 {
		rampN := p.Rate * r / 2 // arrivals during the ramp-up
		if x < rampN {
			return seconds(math.Sqrt(2 * x * r / p.Rate))
		}
		return seconds(r + (x-rampN)/p.Rate)
	}
	return seconds(x / p.Rate)
}

// Pace says what to do after sent arrivals, elapsed into the schedule:
// wait that long before the next one (0: it is due now), or stop.
func (p Pacer) Pace(elapsed time.Duration, sent int64) (wait time.Duration, stop bool) {
	if p.Rate <= 0 || p.Count > 0 && sent >= p.Count {
		return 0, true
	}
	at := p.At(sent)
	if p.Duration > 0 && at >= p.Duration {
		return 0, true
	}
	if at <= elapsed {
		return 0, false
	}
	return at - elapsed, false
}

// Total returns how many arrivals the schedule has, -1 when unbounded.
func (p Pacer) Total() int64 {
	if p.Rate <= 0 {
		return 0
	}
	if p.Duration <= 0 {
		if p.Count > 0 {
			return p.Count
		}
		return -1
	}
	// The first n with At(n) >= Duration, found by bisection: At is
	// monotonic.
	lo, hi := int64(0), int64(1)
	for p.At(hi) < p.Duration {
		lo, hi = hi, hi*2
	}
	for lo < hi {
		mid := lo + (hi-lo)/2
		if p.At(mid) < p.Duration {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	if p.Count > 0 && p.Count < lo {
		return p.Count
	}
	return lo
}

func seconds(s float64) time.Duration {
	return time.Duration(math.Round(s * float64(time.Second)))
}
