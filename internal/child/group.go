package child

import (
	"context"
	"os/exec"
	"time"
)

// DefaultGrace is the grace of Command and End when theirs is 0 or less:
// how long processes asked to end (SIGTERM) have before they are killed.
const DefaultGrace = time.Second

// Command returns exec.CommandContext(ctx, name, args...) set to run in a
// process group of its own, whose context ending ends the whole group:
// SIGTERM to every process in it, then, grace later, exec kills the
// command and closes its pipes (exec.Cmd.WaitDelay, which also bounds how
// long Wait waits for a pipe that a process the command started holds
// open). Call End once it was waited for.
func Command(ctx context.Context, grace time.Duration, name string, args ...string) *exec.Cmd {
	if grace <= 0 {
		grace = DefaultGrace
	}
	cmd := exec.CommandContext(ctx, name, args...)
	Isolate(cmd)
	cmd.Cancel = func() error { return Terminate(cmd) }
	cmd.WaitDelay = grace
	return cmd
}

// Isolate prepares cmd, not yet started, to run in a process group of its
// own: the processes it starts join that group unless they leave it.
func Isolate(cmd *exec.Cmd) { setGroup(cmd) }

// Terminate asks every process in cmd's group (cmd started, isolated) to
// end: SIGTERM. Elsewhere than on Unix, cmd is killed. A group already
// empty is os.ErrProcessDone.
func Terminate(cmd *exec.Cmd) error { return signalGroup(cmd, false) }

// Kill kills every process in cmd's group (cmd started, isolated).
func Kill(cmd *exec.Cmd) error { return signalGroup(cmd, true) }

// End ends what is left of cmd's group once cmd itself was waited for:
// the processes it started and did not end. They get SIGTERM and those
// still there after grace (0 or less: DefaultGrace) SIGKILL. End returns
// once the group is empty or was killed; it does nothing for a command
// that did not start.
func End(cmd *exec.Cmd, grace time.Duration) {
	if cmd.Process == nil {
		return
	}
	if grace <= 0 {
		grace = DefaultGrace
	}
	endGroup(cmd, grace)
}
