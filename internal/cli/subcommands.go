package cli

import (
	"strings"

	"github.com/spf13/cobra"
)

// subcommandNames lists cmd's subcommands as cobra holds them (sorted by
// name), leaving out help and hidden ones: the one list that the usage
// error of a bare parent command, its help and docs/cli.md agree on.
func subcommandNames(cmd *cobra.Command) []string {
	var out []string
	for _, c := range cmd.Commands() {
		if c.IsAvailableCommand() && c.Name() != "help" {
			out = append(out, c.Name())
		}
	}
	return out
}

// needSubcommand is the RunE of a parent command run bare: a usage error
// (exit 2) that names every subcommand.
func needSubcommand(cmd *cobra.Command, _ []string) error {
	names := subcommandNames(cmd)
	list := strings.Join(names, ", ")
	if n := len(names); n > 1 {
		list = strings.Join(names[:n-1], ", ") + " or " + names[n-1]
	}
	return usagef("%s: give a subcommand: %s", cmd.Name(), list)
}
