package suite

import (
	"fmt"
	"slices"
	"strings"

	"github.com/tasksim/tasksim/check"
)

// CoverageOptions say which rules of the catalog apply to a target: the
// task rules (TASK-*) when the server declares the tasks capability, as
// for an extension (2025-11-25 Tasks › Capabilities: a server without it
// creates no task, so no task rule has evidence to judge); the transport
// rules when it speaks Streamable HTTP (they judge HTTP exchanges, which a
// stdio target has none of); the rules of SEP-1905 (S1905-*) and SEP-2679
// (S2679-*) only when the server declares that extension. Client rules
// never apply to a server, nor the rules of a revision other than the
// target's.
type CoverageOptions struct {
	Tasks   bool
	HTTP    bool
	SEP1905 bool
	SEP2679 bool
	// Revision is the revision the target was checked in (check.Rule's
	// Revision); "" means check.Revision20251125, the revision of the
	// suite's scenarios.
	Revision string
}

// Coverage says how many of the rules that apply to a target a suite run
// judged: a rule is judged when some scenario reported it PASS, WARN or
// FAIL (anything but SKIP).
type Coverage struct {
	// Applicable are the IDs of the rules that apply, in catalog order:
	// the denominator.
	Applicable []string
	// Judged are those of Applicable that were judged, in catalog order.
	Judged []string
}

// Coverage measures which applicable rules the run judged, over every
// scenario's reported rules.
func (s *SuiteResult) Coverage(o CoverageOptions) Coverage {
	judged := map[string]bool{}
	for _, sc := range s.Scenarios {
		for _, r := range sc.Rules {
			if r.Status != check.Skip && r.Status != "" {
				judged[r.ID] = true
			}
		}
	}
	var c Coverage
	for _, r := range check.Catalog() {
		if !o.applies(r) {
			continue
		}
		c.Applicable = append(c.Applicable, r.ID)
		if judged[r.ID] {
			c.Judged = append(c.Judged, r.ID)
		}
	}
	return c
}

func (o CoverageOptions) applies(r check.Rule) bool {
	rev := o.Revision
	if rev == "" {
		rev = check.Revision20251125
	}
	switch {
	case r.Revision != rev:
		return false
	case r.Side == check.Client:
		return false
	case r.Side == check.Transport:
		return o.HTTP
	case strings.HasPrefix(r.ID, "TASK-"):
		return o.Tasks
	case strings.HasPrefix(r.ID, "S1905-"):
		return o.SEP1905
	case strings.HasPrefix(r.ID, "S2679-"):
		return o.SEP2679
	}
	return true
}

// Fraction is the share of applicable rules judged, 0 when none apply.
func (c Coverage) Fraction() float64 {
	if len(c.Applicable) == 0 {
		return 0
	}
	return float64(len(c.Judged)) / float64(len(c.Applicable))
}

// Missing are the applicable rules no scenario judged, in catalog order.
func (c Coverage) Missing() []string {
	var out []string
	for _, id := range c.Applicable {
		if !slices.Contains(c.Judged, id) {
			out = append(out, id)
		}
	}
	return out
}

// String is "judged/applicable (percent)", then the rules not judged.
func (c Coverage) String() string {
	s := fmt.Sprintf("%d/%d (%.0f%%)", len(c.Judged), len(c.Applicable), 100*c.Fraction())
	if m := c.Missing(); len(m) > 0 {
		s += " not judged: " + strings.Join(m, ", ")
	}
	return s
}
