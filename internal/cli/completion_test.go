package cli

import (
	"slices"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/tasksim/tasksim/faults"
)

// TestCompletion: the shell completion completes flag values, not only
// flag names (cobra's hidden __complete command is what the scripts call).
func TestCompletion(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		want []string
		not  []string
	}{
		{"load modes", []string{"load", "--mode", ""}, []string{"sse", "partial", "poll:1s"}, nil},
		{"load mode list", []string{"load", "--mode", "sse,"}, []string{"sse,partial", "sse,poll:1s"}, []string{"sse,sse"}},
		{"call modes", []string{"call", "--mode", ""}, []string{"streaming", "task", "poll", "partial"}, nil},
		{"export formats", []string{"trace", "export", "--format", ""}, []string{"jsonl", "har"}, nil},
		{"rules", []string{"trace", "check", "--rule", ""}, nil, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, stdout, stderr := run(t, "", append([]string{"__complete"}, tc.args...)...)
			if code != ExitOK {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			lines := strings.Split(strings.TrimSpace(stdout), "\n")
			got := lines[:len(lines)-1] // the last line is the directive
			if len(got) == 0 {
				t.Fatalf("no values completed:\n%s", stdout)
			}
			for _, w := range tc.want {
				if !slices.Contains(got, w) {
					t.Errorf("completions %q lack %q", got, w)
				}
			}
			for _, n := range tc.not {
				if slices.Contains(got, n) {
					t.Errorf("completions %q offer %q", got, n)
				}
			}
		})
	}
}

// TestCompletionFaults: a --fault flag, on whichever command adds one
// (sim, proxy), completes the built-in faults' names.
func TestCompletionFaults(t *testing.T) {
	root := NewCmdRoot(&State{Getenv: func(string) string { return "" }})
	c := &cobra.Command{Use: "sim", RunE: func(*cobra.Command, []string) error { return nil }}
	c.Flags().StringArray("fault", nil, "")
	root.AddCommand(c)
	addCompletions(root)
	fn, ok := c.GetFlagCompletionFunc("fault")
	if !ok {
		t.Fatal("--fault has no completion")
	}
	got, _ := fn(c, nil, "")
	if !slices.Equal(got, faults.Builtin().Names()) || len(got) < 5 {
		t.Errorf("--fault completes %q, want the built-in faults", got)
	}
}

// TestCompletionScenarios: check --scenario and --skip complete the
// suite's scenario names, server and client.
func TestCompletionScenarios(t *testing.T) {
	root := NewCmdRoot(&State{Getenv: func(string) string { return "" }})
	c, _, err := root.Find([]string{"check"})
	if err != nil {
		t.Fatal(err)
	}
	for _, flag := range []string{"scenario", "skip"} {
		fn, ok := c.GetFlagCompletionFunc(flag)
		if !ok {
			t.Fatalf("--%s has no completion", flag)
		}
		got, _ := fn(c, nil, "")
		if !slices.Contains(got, "task-lifecycle") || !slices.Contains(got, "client-duplicates") {
			t.Errorf("--%s completes %q, want the scenario names", flag, got)
		}
	}
}
