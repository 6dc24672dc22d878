package cli

import (
	"context"
	"errors"
	"fmt"
)

// Exit codes, the CLI contract (see docs/cli.md).
const (
	ExitOK       = 0 // success
	ExitFindings = 1 // a rule violated, a threshold missed
	ExitUsage    = 2 // usage error or bad input
	ExitRuntime  = 3 // runtime failure: cannot connect, I/O error
	// ExitInterrupted: a measurement (tasksim load) stopped by SIGINT or
	// SIGTERM before its end, its thresholds met so far: incomplete, so
	// not a success. 130 is what shells report for a SIGINT.
	ExitInterrupted = 130
)

// InterruptedError means a run that measures was stopped by a signal
// before its end and found nothing wrong so far. Other commands treat an
// interrupt as their normal end (exit 0).
type InterruptedError struct{ What, Detail string }

func (e *InterruptedError) Error() string {
	if e.Detail == "" {
		return e.What + " interrupted before its end"
	}
	return e.What + " interrupted before its end; " + e.Detail
}

// UsageError is a mistake in how the command was called or in its input.
type UsageError struct{ Err error }

func (e *UsageError) Error() string { return e.Err.Error() }
func (e *UsageError) Unwrap() error { return e.Err }

// usagef returns a *UsageError.
func usagef(format string, args ...any) error {
	return &UsageError{Err: fmt.Errorf(format, args...)}
}

// FindingsError reports that the run worked and found problems.
type FindingsError struct{ Summary string }

func (e *FindingsError) Error() string { return e.Summary }

// ExitStatusError passes on the exit code of a child process that tasksim
// ran in the foreground (tasksim record -- CMD). Main prints nothing for
// it: the child said what it had to say on its own stderr.
type ExitStatusError struct{ Code int }

func (e *ExitStatusError) Error() string { return fmt.Sprintf("exit status %d", e.Code) }

// Is makes an ExitStatusError silent in Main.
func (e *ExitStatusError) Is(target error) bool { return target == errSilent }

// ExitCode maps an error to the process exit code. It is the only place
// that does.
func ExitCode(err error) int {
	var u *UsageError
	var f *FindingsError
	var x *ExitStatusError
	var in *InterruptedError
	switch {
	case err == nil:
		return ExitOK
	case errors.As(err, &in):
		return ExitInterrupted
	case errors.As(err, &x):
		return x.Code
	case errors.As(err, &f):
		return ExitFindings
	case errors.As(err, &u):
		return ExitUsage
	case errors.Is(err, context.Canceled):
		return ExitOK // interrupted by the user: not a failure
	}
	return ExitRuntime
}
