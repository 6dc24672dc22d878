package suite

import (
	"slices"
	"testing"

	"github.com/tasksim/tasksim/check"
)

// TestSettle: a scenario whose only broken rules are SHOULDs is WARN, not
// failed; strict makes it FAIL; a MUST broken or an error of its own
// fails it whatever the rest.
func TestSettle(t *testing.T) {
	finding := []check.Finding{{Message: "x"}}
	for _, tc := range []struct {
		name   string
		in     ScenarioResult
		strict bool
		want   check.Status
	}{
		{"SHOULD broken", ScenarioResult{Status: check.Fail, Rules: []RuleOutcome{{ID: "HTTP-SESSION-MISSING", Status: check.Fail, Findings: finding}}}, false, check.Warn},
		{"SHOULD broken, strict", ScenarioResult{Status: check.Fail, Rules: []RuleOutcome{{ID: "HTTP-SESSION-MISSING", Status: check.Fail, Findings: finding}}}, true, check.Fail},
		{"MUST and SHOULD broken", ScenarioResult{Status: check.Fail, Rules: []RuleOutcome{{ID: "HTTP-SESSION-MISSING", Status: check.Fail, Findings: finding}, {ID: "HTTP-SESSION", Status: check.Fail, Findings: finding}}}, false, check.Fail},
		{"error of its own", ScenarioResult{Status: check.Fail, Why: "timed out", Rules: []RuleOutcome{{ID: "HTTP-SESSION-MISSING", Status: check.Fail, Findings: finding}}}, false, check.Fail},
		{"passed", ScenarioResult{Status: check.Pass, Rules: []RuleOutcome{{ID: "HTTP-SESSION", Status: check.Pass}}}, false, check.Pass},
		{"skipped", ScenarioResult{Status: check.Skip, Rules: []RuleOutcome{{ID: "HTTP-SESSION", Status: check.Skip}}}, true, check.Skip},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := tc.in
			settle(&r, tc.strict)
			if r.Status != tc.want {
				t.Errorf("status %s, want %s (rules %+v)", r.Status, tc.want, r.Rules)
			}
			s := SuiteResult{Scenarios: []*ScenarioResult{&r}}
			if s.Failed() != (tc.want == check.Fail) || s.Warned() != (tc.want == check.Warn) {
				t.Errorf("suite failed %v, warned %v", s.Failed(), s.Warned())
			}
		})
	}
}

// wantBrokenOnly: res broke rule id and nothing else, as its keyword says:
// FAIL for a MUST, WARN for a SHOULD.
func wantBrokenOnly(t *testing.T, res *SuiteResult, id string) {
	t.Helper()
	rule, _ := check.RuleByID(id)
	broken, other := res.FailedRules(), res.WarnedRules()
	if rule.Keyword == check.Should {
		broken, other = other, broken
	}
	if !slices.Equal(broken, []string{id}) || len(other) > 0 {
		t.Errorf("failed rules %v, warned %v; want exactly [%s] %s\n%s", res.FailedRules(), res.WarnedRules(), id, rule.Breach(false), describe(res))
	}
}
