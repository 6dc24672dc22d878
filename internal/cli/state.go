package cli

import (
	"context"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/tasksim/tasksim/clock"
)

// State is all the process state a command may touch. Commands never use
// os.Stdout, os.Args, os.Getenv or signals directly, so the whole CLI runs
// in-process under test.
type State struct {
	Stdin  io.Reader
	Stdout io.Writer
	Stderr io.Writer
	Args   []string // without the program name
	Getenv func(string) string
	// StdoutTTY says stdout is a terminal (live output, progress).
	StdoutTTY bool
	// Context ends on SIGINT/SIGTERM for a real process; tests give their
	// own.
	Context context.Context
	// Clock is the time the reference client of call keeps (its timeline,
	// --cancel-after, polling); nil is the wall clock. Tests give a
	// clock.Sim to order a call's timers against its answers.
	Clock clock.Clock
}

// OSState returns the real process's state. The returned stop function
// releases the signal handlers.
func OSState() (*State, func()) {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	return &State{
		Stdin:     os.Stdin,
		Stdout:    os.Stdout,
		Stderr:    os.Stderr,
		Args:      os.Args[1:],
		Getenv:    os.Getenv,
		StdoutTTY: isTerminal(os.Stdout),
		Context:   ctx,
	}, stop
}

// isTerminal reports whether f is a character device (a terminal).
func isTerminal(f *os.File) bool {
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}
