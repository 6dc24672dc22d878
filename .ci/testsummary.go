//go:build ignore

// testsummary reads `go test -json` output on stdin, prints the usual
// package lines and the output of failed tests, and ends with one line
// "go test: N passed, N failed, N skipped". It exits 1 if any test or
// package failed, or if no test ran at all.
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"sort"
	"strings"
)

type event struct {
	Action  string
	Package string
	Test    string
	Output  string
	Elapsed float64
}

func main() {
	s := summary{output: map[string][]string{}}
	sc := bufio.NewScanner(os.Stdin)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		line := sc.Bytes()
		var e event
		if json.Unmarshal(line, &e) != nil {
			fmt.Println(string(line)) // build errors and the like
			continue
		}
		s.add(e)
	}
	sort.Strings(s.failures)
	if len(s.failures) > 0 {
		fmt.Println("failed tests:")
		for _, f := range s.failures {
			fmt.Println("  " + f)
		}
	}
	fmt.Printf("go test: %d passed, %d failed, %d skipped\n", s.passed, s.failed, s.skipped)
	if s.failed > 0 || s.pkgFailed || s.passed == 0 {
		os.Exit(1)
	}
}

// summary is what the events so far come to.
type summary struct {
	passed, failed, skipped int
	output                  map[string][]string // package/test -> lines
	failures                []string
	pkgFailed               bool
}

// add takes one event, printing what is to be printed as it comes.
func (s *summary) add(e event) {
	key := e.Package + " " + e.Test
	switch e.Action {
	case "output":
		if e.Test == "" && packageLine(e.Output) {
			fmt.Print(e.Output)
		} else {
			s.output[key] = append(s.output[key], e.Output)
		}
	case "pass":
		if e.Test != "" {
			s.passed++
		}
		delete(s.output, key)
	case "skip":
		if e.Test != "" {
			s.skipped++
		}
		delete(s.output, key)
	case "fail":
		s.fail(e, key)
	}
}

// fail takes a test's or a package's failure and prints its output.
func (s *summary) fail(e event, key string) {
	if e.Test != "" {
		s.failed++
		s.failures = append(s.failures, key)
		fmt.Printf("--- FAIL: %s (%.2fs)\n%s", key, e.Elapsed, strings.Join(s.output[key], ""))
		return
	}
	s.pkgFailed = true
	if lines := s.output[key]; len(lines) > 0 {
		fmt.Print(strings.Join(lines, ""))
	}
}

// packageLine reports whether a package's output line is one go test
// prints anyway: its result, a build failure or a panic.
func packageLine(out string) bool {
	for _, p := range []string{"ok ", "FAIL", "?", "---"} {
		if strings.HasPrefix(out, p) {
			return true
		}
	}
	return strings.Contains(out, "[build failed]") || strings.Contains(out, "panic:")
}
