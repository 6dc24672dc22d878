//go:build !unix

package child

import (
	"errors"
	"os/exec"
	"time"
)

func setGroup(*exec.Cmd) {}

func signalGroup(cmd *exec.Cmd, _ bool) error {
	if cmd.Process == nil {
		return errors.New("child: not started")
	}
	return cmd.Process.Kill()
}

func endGroup(*exec.Cmd, time.Duration) {}
