package mcp_test

import (
	"math"
	"testing"
	"time"

	"github.com/tasksim/tasksim/mcp"
)

func TestMillis(t *testing.T) {
	hour := time.Hour
	cases := []struct {
		name  string
		ms    int64
		limit time.Duration
		want  time.Duration
	}{
		{"zero", 0, hour, 0},
		{"negative", -5, hour, 0},
		{"in range", 1500, hour, 1500 * time.Millisecond},
		{"at the limit", 3_600_000, hour, hour},
		{"above the limit", 3_600_001, hour, hour},
		{"overflows a Duration", 10_000_000_000_000, hour, hour},
		{"max int64", math.MaxInt64, hour, hour},
		{"overflow, no real limit", 10_000_000_000_000, mcp.MaxDuration, mcp.MaxDuration},
		{"just under the overflow", 9_223_372_036_853, mcp.MaxDuration, 9_223_372_036_853 * time.Millisecond},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := mcp.Millis(tc.ms, tc.limit); got != tc.want || got < 0 {
				t.Errorf("Millis(%d, %v) = %v, want %v", tc.ms, tc.limit, got, tc.want)
			}
		})
	}
}

func TestMillisFloat(t *testing.T) {
	day := 24 * time.Hour
	cases := []struct {
		ms   float64
		want time.Duration
		ok   bool
	}{
		{0, 0, true},
		{1.5, 1500 * time.Microsecond, true},
		{86_400_000, day, true},
		{86_400_001, 0, false},
		{1e18, 0, false},
		{math.Inf(1), 0, false},
		{math.NaN(), 0, false},
		{-1, 0, false},
	}
	for _, tc := range cases {
		if got, ok := mcp.MillisFloat(tc.ms, day); got != tc.want || ok != tc.ok {
			t.Errorf("MillisFloat(%g) = %v, %v; want %v, %v", tc.ms, got, ok, tc.want, tc.ok)
		}
	}
}

func TestDecodeMessageRefusesInvalidUTF8(t *testing.T) {
	for _, in := range []string{"{\"jsonrpc\":\"2.0\",\"id\":\"\xc3(\",\"method\":\"ping\"}", "\xff", "{\"jsonrpc\":\"2.0\",\"method\":\"a\xed\xa0\x80\"}"} {
		_, err := mcp.DecodeMessage([]byte(in))
		if errorCode(err) != mcp.CodeParseError {
			t.Errorf("DecodeMessage(%q) = %v, want a %d error", in, err, mcp.CodeParseError)
		}
	}
}
