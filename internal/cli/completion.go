package cli

import (
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/tasksim/tasksim/check"
	"github.com/tasksim/tasksim/faults"
	"github.com/tasksim/tasksim/mcp/client"
	"github.com/tasksim/tasksim/sim/suite"
)

// Shell completion of flag values (tasksim completion bash|zsh|fish|
// powershell writes the scripts; cobra adds the command). Values are
// completed by flag name on every command that has the flag, so commands
// added later get them as soon as they name their flags the same:
//
//	--mode    load/demo: poll:1s, poll:100ms, sse, partial, immediate (a
//	          comma-separated list: the last item is completed); call: the
//	          reference client's modes
//	--format  trace export: jsonl, har
//	--fault   the built-in faults' names (faults.Builtin)
//	--rule    the rule catalog's IDs (check)
//	--bug     list and the known bugs' names (internal/plant): serve the
//	          server's, sim all
//
// A command with values of its own (a --scenario of sim) registers them
// with CompleteValues.

// loadModeValues are the modes tasksim load offers to complete.
var loadModeValues = []string{"poll:1s", "poll:100ms", "poll", "sse", "partial", "immediate"}

// addCompletions registers the completions of every command under root.
func addCompletions(root *cobra.Command) {
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		c.Flags().VisitAll(func(f *pflag.Flag) {
			if vals := flagValues(c, f.Name); vals != nil {
				_ = c.RegisterFlagCompletionFunc(f.Name, vals)
			}
		})
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
}

// flagValues returns the completion of flag name on c, nil for none.
func flagValues(c *cobra.Command, name string) cobra.CompletionFunc {
	switch {
	case name == "mode" && (c.Name() == "load" || c.Name() == "demo"):
		return completeList(loadModeValues)
	case name == "mode":
		var modes []string
		for _, m := range client.Modes() {
			modes = append(modes, string(m))
		}
		return CompleteValues(modes...)
	case name == "format":
		return CompleteValues("jsonl", "har")
	case name == "fault":
		return CompleteValues(faults.Builtin().Names()...)
	case (name == "scenario" || name == "skip") && c.Name() == "check":
		var names []string
		for _, sc := range suite.ServerScenarios() {
			names = append(names, sc.Name)
		}
		for _, sc := range suite.ClientScenarios() {
			names = append(names, sc.Name)
		}
		return completeList(names)
	case name == "bug":
		return CompleteValues(bugNames(c.Name() == "serve")...)
	case name == "rule":
		var ids []string
		for _, r := range check.Catalog() {
			ids = append(ids, r.ID)
		}
		return completeList(ids)
	}
	return nil
}

// CompleteValues completes a flag from a fixed list of values.
func CompleteValues(values ...string) cobra.CompletionFunc {
	return func(_ *cobra.Command, _ []string, _ string) ([]string, cobra.ShellCompDirective) {
		return values, cobra.ShellCompDirectiveNoFileComp
	}
}

// completeList completes the last item of a comma-separated list, leaving
// out the items already given.
func completeList(values []string) cobra.CompletionFunc {
	return func(_ *cobra.Command, _ []string, toComplete string) ([]string, cobra.ShellCompDirective) {
		prefix, given := "", map[string]bool{}
		if i := strings.LastIndexByte(toComplete, ','); i >= 0 {
			prefix = toComplete[:i+1]
			for _, v := range strings.Split(toComplete[:i], ",") {
				given[v] = true
			}
		}
		var out []string
		for _, v := range values {
			if !given[v] {
				out = append(out, prefix+v)
			}
		}
		return out, cobra.ShellCompDirectiveNoFileComp | cobra.ShellCompDirectiveNoSpace
	}
}
