package ratelimit

import (
	"testing"
	"time"
)

// TestBucket: a bucket starts full, empties, refills at Max per Per on
// the times it is given, never beyond Max; Max 0 means no limit.
func TestBucket(t *testing.T) {
	t0 := time.Unix(1_700_000_000, 0)
	type take struct {
		at   time.Duration // after t0
		want bool
	}
	for _, tc := range []struct {
		name  string
		b     Bucket
		takes []take
	}{
		{"starts full, then empty", Bucket{Max: 2, Per: time.Second}, []take{{0, true}, {0, true}, {0, false}}},
		{"refills at its rate", Bucket{Max: 2, Per: time.Second}, []take{{0, true}, {0, true}, {0, false}, {499 * time.Millisecond, false}, {500 * time.Millisecond, true}, {500 * time.Millisecond, false}}},
		{"never beyond Max", Bucket{Max: 2, Per: time.Second}, []take{{0, true}, {time.Hour, true}, {time.Hour, true}, {time.Hour, false}}},
		{"per minute", Bucket{Max: 3, Per: time.Minute}, []take{{0, true}, {0, true}, {0, true}, {19 * time.Second, false}, {20 * time.Second, true}}},
		{"no limit", Bucket{}, []take{{0, true}, {0, true}, {0, true}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := tc.b
			for i, tk := range tc.takes {
				if got := b.Take(t0.Add(tk.at)); got != tk.want {
					t.Fatalf("take %d at +%s: %v, want %v", i, tk.at, got, tk.want)
				}
			}
		})
	}
}
