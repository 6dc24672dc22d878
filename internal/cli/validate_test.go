package cli

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// TestNumericFlagsValidated walks every command and gives every numeric
// flag a value it must refuse: negative (unless flagBounds says a negative
// value means something), zero where it must be positive, NaN and ±Inf for
// floats. Each gets exit 2 and one line naming the flag, before the
// command does anything (Hardening item 15).
func TestNumericFlagsValidated(t *testing.T) {
	st := &State{Stdin: strings.NewReader(""), Stdout: &bytes.Buffer{}, Stderr: &bytes.Buffer{},
		Getenv: func(string) string { return "" }, Context: context.Background()}
	type tc struct {
		args []string
		flag string
	}
	var cases []tc
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		for _, sub := range c.Commands() {
			walk(sub)
		}
		if !c.Runnable() {
			return
		}
		path := strings.Fields(c.CommandPath())[1:]
		// Positional arguments the command needs, so that the flags are
		// what fails.
		for _, pos := range [][]string{nil, {"in.file"}} {
			if c.ValidateArgs(pos) == nil {
				path = append(path, pos...)
				break
			}
		}
		c.Flags().VisitAll(func(f *pflag.Flag) {
			b := flagBounds[c.CommandPath()+" --"+f.Name]
			var bad []string
			switch f.Value.Type() {
			case "duration":
				bad = []string{"-5s"}
				if b == positive {
					bad = append(bad, "0s")
				}
			case "int", "int64", "uint64":
				bad = []string{"-1"}
				if b == positive {
					bad = append(bad, "0")
				}
			case "float64":
				bad = []string{"-1", "NaN", "Inf", "-Inf"}
				if b == positive {
					bad = append(bad, "0")
				}
				if b == fraction {
					bad = append(bad, "1.5")
				}
			case "string":
				if b == atLeastOne {
					bad = []string{"0", "0..5", "-3"}
				}
			}
			if b == anyValue {
				return
			}
			for _, v := range bad {
				cases = append(cases, tc{append(append([]string{}, path...), "--"+f.Name+"="+v), f.Name})
			}
		})
	}
	walk(NewCmdRoot(st))
	// The issue's own examples, so that they stay covered by name.
	for _, args := range [][]string{
		{"call", "--ttl", "-5s"}, {"call", "--cancel-after", "-5s"}, {"call", "--poll-interval", "-1s"},
		{"load", "--concurrency", "-1"}, {"load", "--chunk-size", "0"}, {"load", "--rate", "NaN"}, {"load", "--rate", "Inf"},
	} {
		cases = append(cases, tc{args, strings.TrimPrefix(args[1], "--")})
	}
	if len(cases) < 40 {
		t.Fatalf("only %d cases: the walk missed commands", len(cases))
	}
	for _, c := range cases {
		t.Run(strings.Join(c.args, " "), func(t *testing.T) {
			code, stdout, stderr := run(t, "", c.args...)
			if code != ExitUsage {
				t.Errorf("exit %d, want %d; stdout %q", code, ExitUsage, stdout)
			}
			oneErrorLine(t, stderr, c.flag)
		})
	}
}

// Good values pass the validation, zero and negative ones included where
// they mean something.
func TestNumericFlagsAcceptGoodValues(t *testing.T) {
	st := &State{Stdin: strings.NewReader(""), Stdout: &bytes.Buffer{}, Stderr: &bytes.Buffer{},
		Getenv: func(string) string { return "" }, Context: context.Background()}
	for _, args := range [][]string{
		{"call", "--ttl", "0s", "--cancel-after", "0s", "--poll-interval", "0s"},
		{"serve", "--session-idle-timeout", "-1s", "--retry", "0s"},
		{"load", "--concurrency", "0", "--chunk-size", "1..64", "--chunks", "3", "--rate", "0.5", "--max-failure-rate", "1"},
		{"demo"},
		{"report", "merge", "--interval", "1s"},
	} {
		cmd, rest, err := NewCmdRoot(st).Find(args)
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.ParseFlags(rest); err != nil {
			t.Fatal(err)
		}
		if err := validateNumbers(cmd); err != nil {
			t.Errorf("%v: %v", args, err)
		}
	}
}
