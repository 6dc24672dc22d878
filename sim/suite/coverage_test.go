package suite

import (
	"slices"
	"testing"

	"github.com/tasksim/tasksim/check"
)

// TestCoverage: the denominator holds exactly the rules that apply to the
// target, and a rule counts as judged when some scenario reported it
// PASS, WARN or FAIL, once however many scenarios did.
func TestCoverage(t *testing.T) {
	res := &SuiteResult{Scenarios: []*ScenarioResult{
		{Name: "a", Rules: []RuleOutcome{
			{ID: "TASK-FIELDS", Status: check.Pass},
			{ID: "TASK-ISOLATION", Status: check.Skip},
			{ID: "HTTP-ORIGIN", Status: check.Fail},
			{ID: "S1905-SEQNR", Status: check.Pass},
			{ID: "CLIENT-DEDUP", Status: check.Pass},
		}},
		{Name: "b", Rules: []RuleOutcome{
			{ID: "TASK-FIELDS", Status: check.Fail},
			{ID: "HTTP-SESSION", Status: check.Status("WARN")},
			{ID: "TASK-ID-ENTROPY", Status: check.Skip},
		}},
	}}
	count := func(pred func(check.Rule) bool) int {
		n := 0
		for _, r := range check.Catalog() {
			if r.Revision == check.Revision20251125 && pred(r) {
				n++
			}
		}
		return n
	}
	server := func(r check.Rule) bool { return r.Side == check.Server }
	transport := func(r check.Rule) bool { return r.Side == check.Transport }
	sep := func(p string) func(check.Rule) bool {
		return func(r check.Rule) bool { return len(r.ID) > len(p) && r.ID[:len(p)] == p }
	}
	cases := []struct {
		name         string
		o            CoverageOptions
		applicable   int
		judged       []string
		inApplicable []string
		notApplic    []string
	}{
		{
			name:       "http without extensions",
			o:          CoverageOptions{Tasks: true, HTTP: true},
			applicable: count(server) + count(transport) - count(sep("S1905-")) - count(sep("S2679-")),
			judged:     []string{"TASK-FIELDS", "HTTP-ORIGIN", "HTTP-SESSION"},
			notApplic:  []string{"S1905-SEQNR", "S2679-SEQ", "CLIENT-DEDUP", "CLIENT-RESUME"},
		},
		{
			name:       "stdio without extensions",
			o:          CoverageOptions{Tasks: true},
			applicable: count(server) - count(sep("S1905-")) - count(sep("S2679-")),
			judged:     []string{"TASK-FIELDS"},
			notApplic:  []string{"HTTP-ORIGIN", "HTTP-SESSION", "S1905-SEQNR", "CLIENT-DEDUP"},
		},
		{
			name:         "http with SEP-1905",
			o:            CoverageOptions{Tasks: true, HTTP: true, SEP1905: true},
			applicable:   count(server) + count(transport) - count(sep("S2679-")),
			judged:       []string{"TASK-FIELDS", "S1905-SEQNR", "HTTP-ORIGIN", "HTTP-SESSION"},
			inApplicable: []string{"S1905-MODE-SELECT", "S1905-IMMEDIATE"},
			notApplic:    []string{"S2679-SEQ", "CLIENT-DEDUP"},
		},
		{
			name:       "http without tasks",
			o:          CoverageOptions{HTTP: true},
			applicable: count(transport),
			judged:     []string{"HTTP-ORIGIN", "HTTP-SESSION"},
			notApplic:  []string{"TASK-FIELDS", "TASK-ISOLATION", "S1905-SEQNR", "CLIENT-DEDUP"},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := res.Coverage(c.o)
			if len(got.Applicable) != c.applicable {
				t.Errorf("applicable %d %v, want %d", len(got.Applicable), got.Applicable, c.applicable)
			}
			if !slices.Equal(got.Judged, c.judged) {
				t.Errorf("judged %v, want %v", got.Judged, c.judged)
			}
			for _, id := range c.inApplicable {
				if !slices.Contains(got.Applicable, id) {
					t.Errorf("%s not applicable", id)
				}
			}
			for _, id := range c.notApplic {
				if slices.Contains(got.Applicable, id) {
					t.Errorf("%s applicable", id)
				}
			}
			if want := float64(len(c.judged)) / float64(c.applicable); got.Fraction() != want {
				t.Errorf("fraction %v, want %v", got.Fraction(), want)
			}
			if m := got.Missing(); len(m) != c.applicable-len(c.judged) || slices.ContainsFunc(m, func(id string) bool { return slices.Contains(c.judged, id) }) {
				t.Errorf("missing %v", m)
			}
		})
	}
	if f := (Coverage{}).Fraction(); f != 0 {
		t.Errorf("empty coverage fraction %v, want 0", f)
	}
}
