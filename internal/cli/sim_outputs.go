package cli

import (
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/tasksim/tasksim/check"
)

// simOutput is one file tasksim sim writes (--trace, its HTTP record,
// --html, --json, --junit). Every one is checked and opened, as a
// temporary file beside its path (outFile), before the first run: a bad
// path stops the command before it writes anything. Each replaces its
// path only when the command commits them all, at its end; one the
// command did not write (an HTTP record over stdio, the --html of no run)
// leaves its path as it was.
type simOutput struct {
	flag, path string
	w          io.Writer
	f          *outFile // nil for stdout ("-")
	written    bool
}

// write writes the output; errors name its flag and path.
func (o *simOutput) write(write func(io.Writer) error) error {
	if o == nil {
		return nil
	}
	o.written = true
	if err := write(o.w); err != nil {
		return fmt.Errorf("%s %s: %w", o.flag, o.path, err)
	}
	return nil
}

type simOutputs struct {
	trace, httpTrace, html, json, junit *simOutput
}

// openSimOutputs checks every output path of o, and --out when a failure
// may be shrunk into it, then opens the outputs. A path that is a
// directory, in no directory, or named by two flags is a usage error.
func openSimOutputs(st *State, o *SimOptions) (*simOutputs, error) {
	outs := &simOutputs{}
	type spec struct {
		dst        **simOutput
		flag, path string
	}
	specs := []spec{{&outs.trace, "--trace", o.Trace}}
	if o.Trace != "" && o.Trace != "-" {
		specs = append(specs, spec{&outs.httpTrace, "--trace", httpTracePath(o.Trace)})
	}
	specs = append(specs, spec{&outs.html, "--html", o.HTML}, spec{&outs.json, "--json", o.JSON}, spec{&outs.junit, "--junit", o.JUnit})
	var files []spec
	for _, sp := range specs {
		if sp.path == "" || sp.path == "-" {
			continue
		}
		if err := checkOutPath(sp.flag, sp.path); err != nil {
			return nil, err
		}
		for _, other := range files {
			if same(other.path, sp.path) {
				return nil, usagef("%s %s: %s writes there too", sp.flag, sp.path, other.flag)
			}
		}
		files = append(files, sp)
	}
	if o.Shrink != "none" {
		if err := checkOutDir("--out", o.Out); err != nil {
			return nil, err
		}
	}
	for _, sp := range specs {
		switch sp.path {
		case "":
		case "-":
			*sp.dst = &simOutput{flag: sp.flag, path: sp.path, w: st.Stdout}
		default:
			f, err := createOut(sp.path)
			if err != nil {
				outs.abort()
				var u *UsageError
				if errors.As(err, &u) {
					err = u.Err
				}
				return nil, usagef("%s %s: %v", sp.flag, sp.path, err)
			}
			*sp.dst = &simOutput{flag: sp.flag, path: sp.path, w: f, f: f}
		}
	}
	return outs, nil
}

func (s *simOutputs) all() []*simOutput {
	return []*simOutput{s.trace, s.httpTrace, s.html, s.json, s.junit}
}

// commit replaces the path of every output written; the others are
// left as they were.
func (s *simOutputs) commit() error {
	for _, o := range s.all() {
		if o == nil || o.f == nil {
			continue
		}
		if !o.written {
			o.f.abort()
			continue
		}
		if err := o.f.commit(); err != nil {
			return fmt.Errorf("%s %s: %w", o.flag, o.path, err)
		}
	}
	return nil
}

// abort removes the temporary files of the outputs not committed.
func (s *simOutputs) abort() {
	for _, o := range s.all() {
		if o != nil {
			o.f.abort()
		}
	}
}

// checkOutDir checks that path is a directory or can be made one: the
// nearest of its ancestors that exists is a directory.
func checkOutDir(flag, path string) error {
	for d := path; ; d = filepath.Dir(d) {
		fi, err := os.Stat(d)
		switch {
		case err == nil && fi.IsDir():
			return nil
		case err == nil && d == path:
			return usagef("%s %s: not a directory", flag, path)
		case err == nil:
			return usagef("%s %s: %s is not a directory", flag, path, d)
		case !errors.Is(err, fs.ErrNotExist):
			return usagef("%s %s: %v", flag, path, pathErr(err))
		case d == filepath.Dir(d):
			return nil
		}
	}
}

type junitSuite struct {
	XMLName  xml.Name    `xml:"testsuite"`
	Name     string      `xml:"name,attr"`
	Tests    int         `xml:"tests,attr"`
	Failures int         `xml:"failures,attr"`
	Skipped  int         `xml:"skipped,attr,omitempty"`
	Time     string      `xml:"time,attr"`
	Cases    []junitCase `xml:"testcase"`
}

type junitCase struct {
	Name    string        `xml:"name,attr"`
	Class   string        `xml:"classname,attr"`
	Time    string        `xml:"time,attr"`
	Failure *junitFailure `xml:"failure,omitempty"`
	Skipped *junitSkipped `xml:"skipped,omitempty"`
}

type junitSkipped struct {
	Message string `xml:"message,attr"`
}

type junitFailure struct {
	Message string `xml:"message,attr"`
	Text    string `xml:",chardata"`
}

func writeSimJUnit(w io.Writer, t *simTally, interrupted bool, planned int) error {
	s := junitSuite{Name: "tasksim sim", Time: fmt.Sprintf("%.3f", t.sum.Wall.Seconds())}
	for _, c := range t.cases {
		jc := junitCase{Name: c.name, Class: "tasksim.sim", Time: fmt.Sprintf("%.3f", c.wall.Seconds())}
		if len(c.rules) > 0 {
			jc.Failure = &junitFailure{Message: strings.Join(c.rules, ","), Text: c.text}
		}
		s.Cases = append(s.Cases, jc)
	}
	if t.passOmitted > 0 {
		s.Cases = append(s.Cases, junitCase{Name: fmt.Sprintf("%d more runs passed", t.passOmitted), Class: "tasksim.sim", Time: "0.000"})
	}
	if t.failOmitted > 0 {
		s.Cases = append(s.Cases, junitCase{Name: fmt.Sprintf("%d more runs failed", t.failOmitted), Class: "tasksim.sim", Time: "0.000",
			Failure: &junitFailure{Message: "not listed", Text: "the summary counts them by rule"}})
	}
	if interrupted {
		s.Cases = append(s.Cases, junitCase{Name: "interrupted", Class: "tasksim.sim", Time: "0.000",
			Skipped: &junitSkipped{Message: fmt.Sprintf("interrupted after %d of %d runs", t.sum.Runs, planned)}})
	}
	for _, c := range s.Cases {
		s.Tests++
		if c.Failure != nil {
			s.Failures++
		}
		if c.Skipped != nil {
			s.Skipped++
		}
	}
	return check.WriteJUnitXML(w, s)
}
