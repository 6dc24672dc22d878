//go:build unix

package child

import (
	"errors"
	"os"
	"os/exec"
	"syscall"
	"time"
)

func setGroup(cmd *exec.Cmd) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Setpgid = true
}

// signalGroup signals the group whose id is cmd's pid (Setpgid with Pgid 0
// makes the child the leader of a new group).
func signalGroup(cmd *exec.Cmd, kill bool) error {
	if cmd.Process == nil {
		return errors.New("child: not started")
	}
	sig := syscall.SIGTERM
	if kill {
		sig = syscall.SIGKILL
	}
	err := syscall.Kill(-cmd.Process.Pid, sig)
	if errors.Is(err, syscall.ESRCH) {
		return os.ErrProcessDone
	}
	return err
}

// endGroup: a group is empty once signal 0 finds no process in it. While a
// member lives, its group id cannot be reused by another process, so the
// signals reach only what cmd left behind.
func endGroup(cmd *exec.Cmd, grace time.Duration) {
	pgid := -cmd.Process.Pid
	if syscall.Kill(pgid, syscall.SIGTERM) != nil {
		return // empty (ESRCH), or not ours to signal
	}
	const step = 10 * time.Millisecond
	for waited := time.Duration(0); waited < grace; waited += step {
		time.Sleep(step)
		if syscall.Kill(pgid, 0) != nil {
			return
		}
	}
	_ = syscall.Kill(pgid, syscall.SIGKILL)
}
