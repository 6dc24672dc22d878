package cli

import (
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"
)

// Main runs the tasksim command line and returns the exit code.
func Main(st *State) int {
	root := NewCmdRoot(st)
	root.SetArgs(st.Args)
	err := root.ExecuteContext(st.Context)
	if err != nil {
		// cobra's own parse errors (unknown flag, bad value) are usage
		// errors; they come back untyped.
		var u *UsageError
		var f *FindingsError
		if !errors.As(err, &u) && !errors.As(err, &f) && isCobraUsage(err) {
			err = &UsageError{Err: err}
		}
		if !errors.Is(err, errSilent) {
			fmt.Fprintf(st.Stderr, "tasksim: %s\n", oneLine(err.Error()))
		}
	}
	return ExitCode(err)
}

// errSilent marks an error already reported to the user.
var errSilent = errors.New("already reported")

func isCobraUsage(err error) bool {
	msg := err.Error()
	for _, p := range []string{"unknown command", "unknown flag", "unknown shorthand flag", "invalid argument",
		"flag needs an argument", "accepts ", "requires at least", "required flag", "if any flags in the group"} {
		if strings.Contains(msg, p) {
			return true
		}
	}
	return false
}

func oneLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	return s
}

// NewCmdRoot builds the command tree.
func NewCmdRoot(st *State) *cobra.Command {
	root := &cobra.Command{
		Use:   "tasksim",
		Short: "Record/replay simulator and load tester for MCP tasks and their streaming extensions",
		Long: `tasksim is a reference server and client, recorder, simulator and load
generator for long-running MCP tool calls ("tasks", MCP 2025-11-25) and the
streaming proposals SEP-1905 (response modes, partial-content with seqNr)
and SEP-2679 (notifications/tasks/partial).

Exit codes: 0 success, 1 findings (a rule violated, a threshold missed),
2 usage error or bad input, 3 runtime failure (cannot connect, I/O error).`,
		Version:       Version,
		SilenceUsage:  true,
		SilenceErrors: true,
		// Every numeric flag of every command is checked once, here.
		PersistentPreRunE: func(cmd *cobra.Command, _ []string) error { return validateNumbers(cmd) },
	}
	root.SetVersionTemplate(versionTemplate())
	root.SetIn(st.Stdin)
	root.SetOut(st.Stdout)
	root.SetErr(st.Stderr)
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return &UsageError{Err: err} })
	root.AddCommand(NewCmdServe(st, nil), NewCmdCall(st, nil), NewCmdRecord(st), NewCmdProxy(st), NewCmdTrace(st), NewCmdLoad(st), NewCmdDemo(st), NewCmdReport(st), NewCmdCheck(st), NewCmdSim(st))
	root.AddCommand(NewCmdReplay(st))
	addCompletions(root)
	return root
}
