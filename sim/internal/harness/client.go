package harness

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"time"

	"github.com/tasksim/tasksim/internal/child"
)

// MaxClientOutput caps what a client under test may print on stdout, in
// bytes: far more than any result of the scripted server (the output is
// compared with one), and the most kept in memory. A client that prints
// more fails its scenario and is stopped (its stdout closed).
const MaxClientOutput = 16 << 20

// clientGrace is how long a client under test, and what it started, have
// to end after SIGTERM before they are killed.
const clientGrace = time.Second

// RunClient runs the client under test against server: the scripted
// server's URL, or with target.Stdio the relay spec. The client runs in a
// process group of its own, ended as a whole when RunClient returns.
func RunClient(ctx context.Context, target ClientTarget, server, scenario string) (string, error) {
	if target.Run != nil {
		return target.Run(ctx, server, scenario)
	}
	if len(target.Command) == 0 {
		return "", errors.New("no client command")
	}
	env := "TASKSIM_SERVER_URL="
	if target.Stdio {
		if target.RelayCommand == nil {
			return "", errors.New("no relay command to give a stdio client")
		}
		server, env = target.RelayCommand(server), "TASKSIM_SERVER_CMD="
	}
	args := append(slices.Clone(target.Command[1:]), server)
	cmd := child.Command(ctx, clientGrace, target.Command[0], args...)
	cmd.Env = append(os.Environ(), env+server, "TASKSIM_SCENARIO="+scenario)
	out := child.NewCapped(MaxClientOutput)
	cmd.Stdout = out
	tail := &child.Tail{W: target.Stderr}
	cmd.Stderr = tail
	err := cmd.Run()
	child.End(cmd, clientGrace)
	if out.Over() {
		return out.String(), fmt.Errorf("printed more than %d MiB on stdout: stopped", MaxClientOutput>>20)
	}
	if err != nil {
		if last := tail.Last(); last != "" {
			err = fmt.Errorf("%w: %s", err, last)
		}
		if ctx.Err() != nil {
			err = fmt.Errorf("did not finish in time: %w", err)
		}
	}
	return out.String(), err
}
