package check

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"strings"
	"testing"
)

// TestBreach: a MUST broken is FAIL; a SHOULD broken is WARN, FAIL when
// strict.
func TestBreach(t *testing.T) {
	must, _ := RuleByID("HTTP-SESSION")
	should, _ := RuleByID("HTTP-SESSION-MISSING")
	for _, tc := range []struct {
		r      Rule
		strict bool
		want   Status
	}{
		{must, false, Fail}, {must, true, Fail},
		{should, false, Warn}, {should, true, Fail},
	} {
		if got := tc.r.Breach(tc.strict); got != tc.want {
			t.Errorf("%s (%s), strict %v: %s, want %s", tc.r.ID, tc.r.Keyword, tc.strict, got, tc.want)
		}
	}
}

// warnVerdict judges the fixture whose one broken rule is a SHOULD.
func warnVerdict(t *testing.T) *Verdict {
	t.Helper()
	v := checkFixture(t, "testdata/fail/HTTP-SESSION-MISSING.jsonl")
	if r, _ := v.Result("HTTP-SESSION-MISSING"); r.Status != Warn {
		t.Fatalf("HTTP-SESSION-MISSING is %s, want WARN", r.Status)
	}
	return v
}

// TestVerdictWarn: a verdict with only a WARN has not failed, counts the
// warning, and prints it with its evidence; Strict makes it FAIL.
func TestVerdictWarn(t *testing.T) {
	v := warnVerdict(t)
	if v.Failed() || !v.Warned() {
		t.Fatalf("Failed %v, Warned %v; want false, true", v.Failed(), v.Warned())
	}
	pass, warn, fail, skip := v.Counts()
	if warn != 1 || fail != 0 || pass+warn+fail+skip != len(v.Rules) {
		t.Errorf("counts %d passed, %d warned, %d failed, %d skipped", pass, warn, fail, skip)
	}
	text := verdictText(v)
	for _, want := range []string{"WARN  HTTP-SESSION-MISSING", "HTTP-SESSION-MISSING (transport, SHOULD)", "want 400", ", 1 warned, 0 failed,"} {
		if !strings.Contains(text, want) {
			t.Errorf("text lacks %q:\n%s", want, text)
		}
	}
	var js bytes.Buffer
	if err := v.WriteJSON(&js); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Rules []struct {
			Rule struct {
				ID      string `json:"id"`
				Keyword string `json:"keyword"`
			} `json:"rule"`
			Status string `json:"status"`
		} `json:"rules"`
	}
	if err := json.Unmarshal(js.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	for _, r := range doc.Rules {
		if r.Rule.ID == "HTTP-SESSION-MISSING" && (r.Status != "WARN" || r.Rule.Keyword != "SHOULD") {
			t.Errorf("JSON: %+v", r)
		}
	}
	v.Strict()
	if r, _ := v.Result("HTTP-SESSION-MISSING"); r.Status != Fail || !v.Failed() || v.Warned() {
		t.Errorf("strict: %s, Failed %v, Warned %v", r.Status, v.Failed(), v.Warned())
	}
}

// TestJUnitWarn: a WARN is a testcase without failure, its evidence in
// system-out; the suite counts no failure.
func TestJUnitWarn(t *testing.T) {
	v := warnVerdict(t)
	var b bytes.Buffer
	if err := v.WriteJUnit(&b, "t"); err != nil {
		t.Fatal(err)
	}
	var s struct {
		Failures int `xml:"failures,attr"`
		Cases    []struct {
			Name      string    `xml:"name,attr"`
			Failure   *struct{} `xml:"failure"`
			SystemOut string    `xml:"system-out"`
		} `xml:"testcase"`
	}
	if err := xml.Unmarshal(b.Bytes(), &s); err != nil {
		t.Fatal(err)
	}
	if s.Failures != 0 {
		t.Errorf("failures = %d, want 0", s.Failures)
	}
	found := false
	for _, c := range s.Cases {
		if c.Name != "HTTP-SESSION-MISSING" {
			continue
		}
		found = true
		if c.Failure != nil || !strings.HasPrefix(c.SystemOut, "WARN: SHOULD broken") || !strings.Contains(c.SystemOut, "want 400") {
			t.Errorf("testcase %+v", c)
		}
	}
	if !found {
		t.Error("no testcase HTTP-SESSION-MISSING")
	}
}
