package sim

import (
	"math"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestSeedSet: seeds are kept as ranges, so a run of consecutive seeds
// takes one range however many they are.
func TestSeedSet(t *testing.T) {
	for _, tc := range []struct {
		name  string
		seeds []uint64
		want  []SeedRange
	}{
		{"none", nil, nil},
		{"consecutive", []uint64{5, 6, 7, 8}, []SeedRange{{5, 8}}},
		{"a corpus, unsorted, one twice", []uint64{9, 3, 4, 9, 1}, []SeedRange{{1, 1}, {3, 4}, {9, 9}}},
		{"past the last seed", []uint64{math.MaxUint64 - 1, math.MaxUint64, 0, 1}, []SeedRange{{0, 1}, {math.MaxUint64 - 1, math.MaxUint64}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var s SeedSet
			for _, x := range tc.seeds {
				s.Add(x)
			}
			if diff := cmp.Diff(tc.want, s.Ranges()); diff != "" {
				t.Errorf("ranges (-want +got):\n%s", diff)
			}
		})
	}
	var s SeedSet
	for x := range uint64(100000) {
		s.Add(x)
	}
	if len(s.rs) != 1 {
		t.Errorf("100,000 consecutive seeds kept as %d ranges, want 1", len(s.rs))
	}
}

// TestMergeReportsRanges: partitions of a range too large to list merge
// by their ranges; partitions that share a seed do not merge.
func TestMergeReportsRanges(t *testing.T) {
	const n = 1_000_000_000_000
	var parts []Report
	for i := range 3 {
		first, count := Partition(1, n, i, 3)
		parts = append(parts, NewReport(Summary{Runs: count}, nil, []SeedRange{{first, first + uint64(count) - 1}}, ""))
	}
	parts[1].Interrupted, parts[2].FailuresOmitted = true, 7
	m, err := MergeReports(parts)
	if err != nil {
		t.Fatal(err)
	}
	if want := []SeedRange{{1, n}}; !cmp.Equal(m.Seeds, want) || m.Summary.Runs != n || !m.Interrupted || m.FailuresOmitted != 7 {
		t.Errorf("merged: seeds %v, %d runs, interrupted %v, %d failures omitted; want %v, %d, true, 7", m.Seeds, m.Summary.Runs, m.Interrupted, m.FailuresOmitted, want, n)
	}
	overlap := NewReport(Summary{}, nil, []SeedRange{{n - 5, n + 5}}, "")
	if _, err := MergeReports(append(parts, overlap)); err == nil || !strings.Contains(err.Error(), "seed 999999999995 is in two of the results") {
		t.Errorf("overlapping partitions: %v", err)
	}
}

// TestPartitionLarge: the partitions of any int count of seeds cover it
// exactly; count*i used to overflow.
func TestPartitionLarge(t *testing.T) {
	for _, count := range []int{1, 7, 1 << 40, math.MaxInt} {
		for _, parts := range []int{1, 3, 100000} {
			next, total := uint64(10), uint64(0)
			for _, i := range []int{0, 1, parts / 2, parts - 1} {
				if i >= parts {
					continue
				}
				first, n := Partition(10, count, i, parts)
				lo := uint64(count) / uint64(parts) // sizes differ by at most one
				if n < 0 || uint64(n) < lo || uint64(n) > lo+1 {
					t.Errorf("Partition(10, %d, %d, %d) = %d seeds, want %d or %d", count, i, parts, n, lo, lo+1)
				}
				if i == 0 && first != next {
					t.Errorf("Partition(10, %d, 0, %d) starts at %d, want 10", count, parts, first)
				}
				if i == parts-1 {
					total = first - 10 + uint64(n)
				}
			}
			if total != uint64(count) {
				t.Errorf("count %d in %d partitions: the last ends after %d seeds", count, parts, total)
			}
		}
	}
}
