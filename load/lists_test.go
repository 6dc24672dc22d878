package load

import (
	"math"
	"testing"
)

// TestListsAreCopies checks that the exported lists cannot be changed by
// a caller: each call returns a slice of the caller's own.
func TestListsAreCopies(t *testing.T) {
	m := Metrics()
	m[0] = "changed"
	if got := Metrics()[0]; got != MetricTTFP {
		t.Errorf("Metrics()[0] = %q after a caller changed its copy, want %q", got, MetricTTFP)
	}
	p := PromMetrics()
	p[0] = "changed"
	if got := PromMetrics()[0]; got != PromTasksStarted {
		t.Errorf("PromMetrics()[0] = %q after a caller changed its copy, want %q", got, PromTasksStarted)
	}
	b := PromBuckets()
	b[0] = -1
	if got, want := PromBuckets()[0], math.Pow(2, -106.0/8); got != want {
		t.Errorf("PromBuckets()[0] = %v after a caller changed its copy, want %v", got, want)
	}
	if len(Metrics()) != 7 || len(PromMetrics()) != 13 || len(PromBuckets()) != 155 {
		t.Errorf("lists have %d, %d, %d entries, want 7, 13, 155", len(Metrics()), len(PromMetrics()), len(PromBuckets()))
	}
}
