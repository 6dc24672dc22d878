package check

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
)

// Status is a rule's outcome.
type Status string

// Outcomes. SKIP means the trace never showed what the rule needs: it is
// never counted as a pass. WARN is a SHOULD rule broken (Rule.Breach):
// reported with its evidence, not a failure unless judged strictly.
const (
	Pass Status = "PASS"
	Warn Status = "WARN"
	Fail Status = "FAIL"
	Skip Status = "SKIP"
)

// Broken reports whether s is a rule broken: FAIL or WARN.
func (s Status) Broken() bool { return s == Fail || s == Warn }

// maxFindings caps the findings kept per rule; Failures counts them all.
const maxFindings = 20

// Finding is one violation: the records that show it and one line a user
// can act on.
type Finding struct {
	Records []uint64 `json:"records"`
	Message string   `json:"message"`
}

// RuleResult is one rule's verdict.
type RuleResult struct {
	Rule   Rule   `json:"rule"`
	Status Status `json:"status"`
	// Checked counts the observations the rule judged.
	Checked int `json:"checked"`
	// Excused counts observations not held against the judged side
	// because a fault made them.
	Excused  int       `json:"excused,omitempty"`
	Failures int       `json:"failures"`
	Findings []Finding `json:"findings,omitempty"`
	// Why says why a rule was skipped.
	Why string `json:"why,omitempty"`
}

// Verdict is the judgement of one history.
type Verdict struct {
	Rules []RuleResult `json:"rules"`
	// Records is how many records were read.
	Records uint64 `json:"records"`
	// Faults is how many fault records the trace holds.
	Faults int `json:"faults"`
	// Cut says the trace ended early (its writer was killed): it was
	// judged up to its last whole record.
	Cut string `json:"cut,omitempty"`
	// Sides says the trace holds records of both sides of a fault layer
	// (docs/trace-format.md, "Whose view"): server and transport rules
	// were judged on the server's view (records of the wire and the
	// server side), client rules on the client's (the wire and the
	// client side), fault records in both.
	Sides bool `json:"sides,omitempty"`
}

// Failed reports whether any rule failed.
func (v *Verdict) Failed() bool {
	for _, r := range v.Rules {
		if r.Status == Fail {
			return true
		}
	}
	return false
}

// Warned reports whether any rule is WARN.
func (v *Verdict) Warned() bool {
	for _, r := range v.Rules {
		if r.Status == Warn {
			return true
		}
	}
	return false
}

// Strict makes every WARN a FAIL: a SHOULD broken fails the verdict
// (--strict).
func (v *Verdict) Strict() {
	for i := range v.Rules {
		if v.Rules[i].Status == Warn {
			v.Rules[i].Status = Fail
		}
	}
}

// Result returns the result of rule id.
func (v *Verdict) Result(id string) (RuleResult, bool) {
	for _, r := range v.Rules {
		if r.Rule.ID == id {
			return r, true
		}
	}
	return RuleResult{}, false
}

// Counts returns how many rules passed, warned, failed and were skipped.
func (v *Verdict) Counts() (pass, warn, fail, skip int) {
	for _, r := range v.Rules {
		switch r.Status {
		case Pass:
			pass++
		case Warn:
			warn++
		case Fail:
			fail++
		default:
			skip++
		}
	}
	return
}

// WriteText writes one line per rule, then the findings of failed and
// warned rules.
func (v *Verdict) WriteText(w io.Writer) error {
	var b strings.Builder
	for _, r := range v.Rules {
		switch r.Status {
		case Pass:
			fmt.Fprintf(&b, "PASS  %-24s %d checked", r.Rule.ID, r.Checked)
			if r.Excused > 0 {
				fmt.Fprintf(&b, ", %d excused by faults", r.Excused)
			}
			b.WriteByte('\n')
		case Fail, Warn:
			fmt.Fprintf(&b, "%s  %-24s %d of %d checked\n", r.Status, r.Rule.ID, r.Failures, r.Checked)
		default:
			fmt.Fprintf(&b, "SKIP  %-24s not observed: needs %s\n", r.Rule.ID, r.Why)
		}
	}
	for _, r := range v.Rules {
		if !r.Status.Broken() {
			continue
		}
		fmt.Fprintf(&b, "\n%s (%s, %s): %s\n  spec: %s\n", r.Rule.ID, r.Rule.Side, r.Rule.Keyword, r.Rule.Summary, r.Rule.Spec)
		for _, f := range r.Findings {
			fmt.Fprintf(&b, "  records %s: %s\n", joinRecords(f.Records), f.Message)
		}
		if r.Failures > len(r.Findings) {
			fmt.Fprintf(&b, "  ... and %d more\n", r.Failures-len(r.Findings))
		}
	}
	pass, warn, fail, skip := v.Counts()
	fmt.Fprintf(&b, "\n%d rules: %d passed, %d warned, %d failed, %d skipped (%d records", len(v.Rules), pass, warn, fail, skip, v.Records)
	if v.Faults > 0 {
		fmt.Fprintf(&b, ", %d faults", v.Faults)
	}
	b.WriteString(")\n")
	if v.Cut != "" {
		fmt.Fprintf(&b, "note: the trace is cut (%s); judged up to its last whole record\n", v.Cut)
	}
	if v.Sides {
		b.WriteString("note: the trace holds both sides of a fault layer; server and transport rules judged on the server's view, client rules on the client's\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// Evidence is findings, one line each, as reports print them.
func Evidence(findings []Finding) string {
	var b strings.Builder
	for _, f := range findings {
		fmt.Fprintf(&b, "records %s: %s\n", joinRecords(f.Records), f.Message)
	}
	return b.String()
}

// WarnText is what a JUnit report says of a WARN: the SHOULD broken,
// where the spec says it, and the evidence.
func WarnText(r Rule, evidence string) string {
	return "WARN: SHOULD broken (not a failure; FAIL under --strict): " + r.Summary + " (" + r.Spec + ")\n" + evidence
}

func joinRecords(rs []uint64) string {
	parts := make([]string, len(rs))
	for i, r := range rs {
		parts[i] = fmt.Sprint(r)
	}
	return strings.Join(parts, ",")
}

// WriteJSON writes the verdict as JSON (schema: docs/rules.md).
func (v *Verdict) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(struct {
		Schema string `json:"schema"`
		*Verdict
	}{"tasksim.verdict/v1", v})
}
