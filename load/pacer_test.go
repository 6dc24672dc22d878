package load

import (
	"testing"
	"time"
)

func TestPacerPace(t *testing.T) {
	ms := time.Millisecond
	cases := []struct {
		name     string
		p        Pacer
		elapsed  time.Duration
		sent     int64
		wantWait time.Duration
		wantStop bool
	}{
		{"first arrival is due at once", Pacer{Rate: 10}, 0, 0, 0, false},
		{"second waits one period", Pacer{Rate: 10}, 0, 1, 100 * ms, false},
		{"part of a period elapsed", Pacer{Rate: 10}, 30 * ms, 1, 70 * ms, false},
		{"behind schedule: due now", Pacer{Rate: 10}, 1000 * ms, 3, 0, false},
		{"exactly on time", Pacer{Rate: 10}, 300 * ms, 3, 0, false},
		{"high rate", Pacer{Rate: 20000}, 0, 3, 150 * time.Microsecond, false},
		{"count reached", Pacer{Rate: 10, Count: 5}, 0, 5, 0, true},
		{"count not reached", Pacer{Rate: 10, Count: 5}, 0, 4, 400 * ms, false},
		{"next arrival at the duration", Pacer{Rate: 10, Duration: time.Second}, 0, 10, 0, true},
		{"last arrival before the duration", Pacer{Rate: 10, Duration: time.Second}, 0, 9, 900 * ms, false},
		{"duration and count: count first", Pacer{Rate: 10, Duration: time.Second, Count: 3}, 0, 3, 0, true},
		{"zero rate stops", Pacer{}, 0, 0, 0, true},
		{"negative rate stops", Pacer{Rate: -1}, 0, 0, 0, true},
		// Ramp-up 10/s over 2 s: 10 arrivals during the ramp, arrival n
		// at sqrt(2·n·2/10) s.
		{"ramp: first at once", Pacer{Rate: 10, RampUp: 2 * time.Second}, 0, 0, 0, false},
		{"ramp: second at sqrt(0.4) s", Pacer{Rate: 10, RampUp: 2 * time.Second}, 0, 1, 632455532 * time.Nanosecond, false},
		{"ramp: fifth at sqrt(2) s", Pacer{Rate: 10, RampUp: 2 * time.Second}, time.Second, 5, 414213562 * time.Nanosecond, false},
		{"ramp: the ramp's end", Pacer{Rate: 10, RampUp: 2 * time.Second}, 0, 10, 2 * time.Second, false},
		{"ramp: constant after", Pacer{Rate: 10, RampUp: 2 * time.Second}, 2 * time.Second, 11, 100 * ms, false},
		{"ramp longer than the run", Pacer{Rate: 10, RampUp: 10 * time.Second, Duration: time.Second}, 0, 1, time.Second, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			wait, stop := tc.p.Pace(tc.elapsed, tc.sent)
			if stop != tc.wantStop || (!stop && wait != tc.wantWait) {
				t.Errorf("Pace(%v, %d) = %v, %v; want %v, %v", tc.elapsed, tc.sent, wait, stop, tc.wantWait, tc.wantStop)
			}
		})
	}
}

// TestPacerRate: over a schedule, the arrivals due by t match the rate's
// integral: Rate·t after the ramp, Rate·t²/(2·RampUp) during it.
func TestPacerRate(t *testing.T) {
	cases := []struct {
		name    string
		p       Pacer
		at      time.Duration
		wantDue int64
	}{
		{"1000/s for 1 s", Pacer{Rate: 1000}, time.Second, 1001},
		{"3/s for 10 s", Pacer{Rate: 3}, 10 * time.Second, 31},
		{"ramp 100/s over 4 s, at 2 s", Pacer{Rate: 100, RampUp: 4 * time.Second}, 2 * time.Second, 51},
		{"ramp 100/s over 4 s, at 4 s", Pacer{Rate: 100, RampUp: 4 * time.Second}, 4 * time.Second, 201},
		{"ramp 100/s over 4 s, at 5 s", Pacer{Rate: 100, RampUp: 4 * time.Second}, 5 * time.Second, 301},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			// Arrivals 0..n-1 are due by tc.at when Pace(tc.at, k) says
			// 0 wait for each k < n.
			var due int64
			for {
				wait, stop := tc.p.Pace(tc.at, due)
				if stop || wait > 0 {
					break
				}
				due++
			}
			if due != tc.wantDue {
				t.Errorf("%d arrivals due by %v, want %d", due, tc.at, tc.wantDue)
			}
		})
	}
}

func TestPacerTotal(t *testing.T) {
	cases := []struct {
		name string
		p    Pacer
		want int64
	}{
		{"by duration", Pacer{Rate: 10, Duration: time.Second}, 10},
		{"by count", Pacer{Rate: 10, Count: 7}, 7},
		{"count before duration", Pacer{Rate: 10, Duration: time.Second, Count: 4}, 4},
		{"duration before count", Pacer{Rate: 10, Duration: time.Second, Count: 400}, 10},
		{"ramp-up halves the ramp's arrivals", Pacer{Rate: 10, RampUp: 2 * time.Second, Duration: 4 * time.Second}, 30},
		{"unbounded", Pacer{Rate: 10}, -1},
		{"no rate", Pacer{Duration: time.Second}, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.p.Total(); got != tc.want {
				t.Errorf("Total() = %d, want %d", got, tc.want)
			}
		})
	}
}
