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
	var passed, failed, skipped int
	output := map[string][]string{} // package/test -> lines
	var failures []string
	pkgFailed := false
	sc := bufio.NewScanner(os.Stdin)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		line := sc.Bytes()
		var e event
		if json.Unmarshal(line, &e) != nil {
			fmt.Println(string(line)) // build errors and the like
			continue
		}
		key := e.Package + " " + e.Test
		switch e.Action {
		case "output":
			if e.Test == "" {
				if strings.HasPrefix(e.Output, "ok ") || strings.HasPrefix(e.Output, "FAIL") || strings.HasPrefix(e.Output, "?") || strings.HasPrefix(e.Output, "---") || strings.Contains(e.Output, "[build failed]") || strings.Contains(e.Output, "panic:") {
					fmt.Print(e.Output)
				} else {
					output[key] = append(output[key], e.Output)
				}
			} else {
				output[key] = append(output[key], e.Output)
			}
		case "pass":
			if e.Test != "" {
				passed++
			}
			delete(output, key)
		case "skip":
			if e.Test != "" {
				skipped++
			}
			delete(output, key)
		case "fail":
			if e.Test != "" {
				failed++
				failures = append(failures, key)
				fmt.Printf("--- FAIL: %s (%.2fs)\n%s", key, e.Elapsed, strings.Join(output[key], ""))
			} else {
				pkgFailed = true
				if lines := output[key]; len(lines) > 0 {
					fmt.Print(strings.Join(lines, ""))
				}
			}
		}
	}
	sort.Strings(failures)
	if len(failures) > 0 {
		fmt.Println("failed tests:")
		for _, f := range failures {
			fmt.Println("  " + f)
		}
	}
	fmt.Printf("go test: %d passed, %d failed, %d skipped\n", passed, failed, skipped)
	if failed > 0 || pkgFailed || passed == 0 {
		os.Exit(1)
	}
}
