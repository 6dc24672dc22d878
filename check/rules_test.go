package check

import (
	"os"
	"strings"
	"testing"
)

const rulesDoc = "../docs/rules.md"
const generatedMark = "<!-- generated from check/rules.go: do not edit below -->\n"

func renderCatalog() string {
	var b strings.Builder
	b.WriteString("\n| ID | revision | keyword | side | rule | spec | needs |\n|---|---|---|---|---|---|---|\n")
	for _, r := range Catalog() {
		b.WriteString("| `" + r.ID + "` | " + r.Revision + " | " + string(r.Keyword) + " | " + string(r.Side) + " | " + r.Summary + " | " + r.Spec + " | " + r.Needs + " |\n")
	}
	return b.String()
}

// TestRulesDoc keeps docs/rules.md's table in step with the catalog; -update
// (shared with the fixture generator) rewrites it.
func TestRulesDoc(t *testing.T) {
	data, err := os.ReadFile(rulesDoc)
	if err != nil {
		t.Fatal(err)
	}
	head, _, ok := strings.Cut(string(data), generatedMark)
	if !ok {
		t.Fatalf("%s lacks the generated-table marker", rulesDoc)
	}
	want := head + generatedMark + renderCatalog()
	if *update {
		if err := os.WriteFile(rulesDoc, []byte(want), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if string(data) != want {
		t.Fatalf("%s is out of step with the catalog: run go test ./check -run TestRulesDoc -update", rulesDoc)
	}
}

// TestCatalogIDsStable: the IDs of DESIGN.md's catalog are all here, once.
func TestCatalogIDsStable(t *testing.T) {
	want := []string{"TASK-STATUS-TRANSITION", "TASK-NOT-FOUND", "TASK-CANCEL-TERMINAL", "TASK-FIELDS", "TASK-RESULT",
		"TASK-SURVIVES-REQUEST", "TASK-ISOLATION", "TASK-ID-ENTROPY", "S1905-MODE-SELECT", "S1905-SEQNR", "S1905-COMPLETE",
		"S1905-RESUME", "S1905-LASTSEQNR-INVALID", "S1905-MERGE", "S1905-IMMEDIATE", "S2679-SEQ", "S2679-AFTER-TERMINAL",
		"S2679-CONTENT", "S2679-NEGOTIATION", "HTTP-EVENT-ID-UNIQUE", "HTTP-RESUME-SAME-STREAM", "HTTP-RESUME-COMPLETE",
		"HTTP-NO-BROADCAST", "HTTP-ORIGIN", "HTTP-SESSION", "CLIENT-DEDUP", "CLIENT-RESUME", "CLIENT-POLL-INTERVAL"}
	seen := map[string]bool{}
	for _, r := range Catalog() {
		if seen[r.ID] {
			t.Errorf("rule %s twice", r.ID)
		}
		seen[r.ID] = true
		if r.Summary == "" || r.Spec == "" || r.Side == "" || r.Needs == "" {
			t.Errorf("rule %s lacks a field: %+v", r.ID, r)
		}
		if r.Revision != Revision20251125 && r.Revision != Revision20260728 {
			t.Errorf("rule %s has revision %q, want %s or %s", r.ID, r.Revision, Revision20251125, Revision20260728)
		}
		if r.Keyword != Must && r.Keyword != Should {
			t.Errorf("rule %s has keyword %q, want MUST or SHOULD", r.ID, r.Keyword)
		}
	}
	for _, id := range want {
		if !seen[id] {
			t.Errorf("rule %s of the design's catalog is missing", id)
		}
	}
}

// TestRuleIDs: each RuleID names its catalog entry, in catalog order, and
// Catalog returns a copy.
func TestRuleIDs(t *testing.T) {
	cat := Catalog()
	if len(cat) != len(catalog) {
		t.Fatalf("Catalog() has %d rules, the catalog %d", len(cat), len(catalog))
	}
	for i, r := range cat {
		if got := RuleID(i).String(); got != r.ID {
			t.Errorf("RuleID(%d) is %q, want %q", i, got, r.ID)
		}
	}
	if RuleTaskFields.String() != "TASK-FIELDS" || RuleClientComplete.String() != "CLIENT-COMPLETE" {
		t.Errorf("RuleTaskFields, RuleClientComplete = %s, %s", RuleTaskFields, RuleClientComplete)
	}
	cat[0].ID = "CHANGED"
	if Catalog()[0].ID == "CHANGED" || ruleByIDMust(t, RuleTaskStatusTransition.String()).ID == "CHANGED" {
		t.Error("changing Catalog()'s result changed the catalog")
	}
}

func ruleByIDMust(t *testing.T, id string) Rule {
	t.Helper()
	r, ok := RuleByID(id)
	if !ok {
		t.Fatalf("no rule %s", id)
	}
	return r
}
