package check

import (
	"encoding/xml"
	"io"
)

// The JUnit XML report: the one writer of the project's JUnit reports
// (tasksim check, trace check, sim). GitHub and GitLab render it.
type (
	// JUnitSuites holds several testsuites.
	JUnitSuites struct {
		XMLName  xml.Name     `xml:"testsuites"`
		Name     string       `xml:"name,attr"`
		Tests    int          `xml:"tests,attr"`
		Failures int          `xml:"failures,attr"`
		Suites   []JUnitSuite `xml:"testsuite"`
	}
	// JUnitSuite is one testsuite; Time in seconds, "" for none.
	JUnitSuite struct {
		XMLName  xml.Name    `xml:"testsuite"`
		Name     string      `xml:"name,attr"`
		Tests    int         `xml:"tests,attr"`
		Failures int         `xml:"failures,attr"`
		Skipped  int         `xml:"skipped,attr"`
		Time     string      `xml:"time,attr,omitempty"`
		Cases    []JUnitCase `xml:"testcase"`
	}
	// JUnitCase is one testcase: failed, skipped or passed (a WARN
	// passes, and says so in SystemOut).
	JUnitCase struct {
		Name      string        `xml:"name,attr"`
		Classname string        `xml:"classname,attr"`
		Time      string        `xml:"time,attr,omitempty"`
		Failure   *JUnitFailure `xml:"failure,omitempty"`
		Skipped   *JUnitSkipped `xml:"skipped,omitempty"`
		SystemOut string        `xml:"system-out,omitempty"`
	}
	// JUnitFailure is a failed testcase's message and evidence.
	JUnitFailure struct {
		Message string `xml:"message,attr"`
		Text    string `xml:",chardata"`
	}
	// JUnitSkipped is why a testcase was skipped.
	JUnitSkipped struct {
		Message string `xml:"message,attr"`
	}
)

// WriteJUnitXML writes a JUnit XML file: the XML header, then doc (a
// JUnitSuites or a JUnitSuite).
func WriteJUnitXML(w io.Writer, doc any) error {
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return err
	}
	return encodeJUnit(w, doc)
}

// encodeJUnit writes one element, indented by two spaces, and a newline.
func encodeJUnit(w io.Writer, doc any) error {
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(doc); err != nil {
		return err
	}
	_, err := io.WriteString(w, "\n")
	return err
}

// WriteJUnit writes a JUnit XML report: one testsuite named name, with a
// testcase per rule; failures carry their evidence, skipped rules their
// reason. A WARN is a passing testcase whose system-out says WARN and
// holds the evidence, so that CI shows it without failing.
func (v *Verdict) WriteJUnit(w io.Writer, name string) error {
	return WriteJUnitXML(w, v.JUnitSuite(name))
}

// WriteJUnitSuite writes the testsuite element alone, to put several in
// one testsuites element.
func (v *Verdict) WriteJUnitSuite(w io.Writer, name string) error {
	return encodeJUnit(w, v.JUnitSuite(name))
}

// JUnitSuite returns the verdict as a testsuite named name (see
// WriteJUnit).
func (v *Verdict) JUnitSuite(name string) JUnitSuite {
	s := JUnitSuite{Name: name, Tests: len(v.Rules)}
	for _, r := range v.Rules {
		tc := JUnitCase{Name: r.Rule.ID, Classname: name}
		switch r.Status {
		case Fail:
			s.Failures++
			tc.Failure = &JUnitFailure{Message: r.Rule.Summary + " (" + r.Rule.Spec + ")", Text: Evidence(r.Findings)}
		case Warn:
			tc.SystemOut = WarnText(r.Rule, Evidence(r.Findings))
		case Skip:
			s.Skipped++
			tc.Skipped = &JUnitSkipped{Message: "not observed: needs " + r.Why}
		}
		s.Cases = append(s.Cases, tc)
	}
	return s
}
