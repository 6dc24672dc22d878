package cli

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strconv"
	"sync"
	"time"

	"github.com/tasksim/tasksim/internal/refserver"
	"github.com/tasksim/tasksim/load"
	"github.com/tasksim/tasksim/mcp/server"
	"github.com/tasksim/tasksim/mcp/streamhttp"
)

// startTargets starts the servers the run loads: none for --server, one
// in-process for --in-process, else reference servers in child processes,
// one shared by every mode (or one per mode with --server-per-mode).
func startTargets(ctx context.Context, st *State, o *LoadOptions, cfg load.Config) ([]load.Target, func(), error) {
	switch {
	case o.Server != "":
		return []load.Target{{URL: o.Server, Label: o.Server + " (external)"}}, func() {}, nil
	case o.InProcess:
		url, stop, err := startInProcess(cfg)
		if err != nil {
			return nil, nil, err
		}
		return []load.Target{{URL: url, Label: "reference server in-process"}}, stop, nil
	}
	exe, err := os.Executable()
	if err != nil {
		return nil, nil, fmt.Errorf("start the reference server: %w", err)
	}
	n := 1
	if o.ServerPerMode {
		n = len(cfg.Modes)
	}
	copts := &refserver.ChildOptions{Args: []string{"--log-level", "warn", "--max-tasks-per-session", strconv.Itoa(cfg.MaxInFlight)}}
	// A child that neither listens nor exits (it hangs) is given up on.
	sctx, cancel := context.WithTimeout(ctx, childStartTimeout)
	defer cancel()
	children := make([]*refserver.Child, n)
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i := range n {
		wg.Go(func() { children[i], errs[i] = refserver.StartChild(sctx, exe, copts) })
	}
	wg.Wait()
	var once sync.Once
	stop := func() {
		once.Do(func() {
			for _, c := range children {
				if c != nil {
					c.Stop()
				}
			}
		})
	}
	if err := errors.Join(errs...); err != nil {
		stop()
		return nil, nil, err
	}
	targets := make([]load.Target, n)
	for i, c := range children {
		targets[i] = load.Target{URL: c.URL, Label: fmt.Sprintf("reference server, child process %d", c.Pid),
			CPU: func() (time.Duration, error) { return load.ProcessCPU(c.Pid) }}
	}
	if n > 1 {
		for i := range targets {
			targets[i].Label = fmt.Sprintf("pid %d", children[i].Pid)
		}
	}
	return targets, stop, nil
}

// childStartTimeout bounds the start of a child server that hangs before
// it listens; one that fails exits, and is seen at once.
const childStartTimeout = 20 * time.Second

// startInProcess serves the reference server on a loopback port inside
// this process.
func startInProcess(cfg load.Config) (string, func(), error) {
	s, err := refserver.Listen(&refserver.Options{
		Server: &server.Options{Version: Version, MaxTasksPerSession: cfg.MaxInFlight},
		HTTP:   &streamhttp.Options{Logger: slog.New(slog.DiscardHandler)},
	})
	if err != nil {
		return "", nil, err
	}
	return s.URL, func() { _ = s.Close() }, nil
}
