package main

import (
	"bufio"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestLongRunningCommandsStopOnSignal runs the real binary: every command
// that runs until stopped (serve, record) or for long (load, demo) ends
// on SIGTERM and on SIGINT, with its documented exit code (load and demo:
// 130, interrupted with no threshold missed; serve and record: 0). A
// command still running 60 s after the signal is a hang, not a slow exit.
func TestLongRunningCommandsStopOnSignal(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := filepath.Join(t.TempDir(), "tasksim")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT} {
		for _, tc := range []struct {
			name  string
			args  []string
			ready string // a line on stderr (or stdout) once it runs
			code  int
		}{
			{"serve", []string{"serve", "--addr", "127.0.0.1:0", "--ready-fd", "1"}, "http://", 0},
			{"record", []string{"record", "--upstream", "http://127.0.0.1:9/mcp", "--listen", "127.0.0.1:0", "-o", filepath.Join(t.TempDir(), "r.trace")}, "msg=recording", 0},
			{"load", []string{"load", "--in-process", "--mode", "sse", "--rate", "5", "--duration", "1h", "--max-lag", "1h"}, "load:", 130},
			{"demo", []string{"demo", "--in-process", "--rate", "2", "--duration", "1h", "--html", ""}, "tasksim demo:", 130},
		} {
			t.Run(sig.String()+"/"+tc.name, func(t *testing.T) {
				cmd := exec.Command(bin, tc.args...)
				pr, pw := io.Pipe()
				cmd.Stdout, cmd.Stderr = pw, pw
				if err := cmd.Start(); err != nil {
					t.Fatal(err)
				}
				done := make(chan error, 1)
				go func() { err := cmd.Wait(); pw.Close(); done <- err }()
				ready := make(chan struct{})
				go func() {
					sc := bufio.NewScanner(pr)
					once := false
					for sc.Scan() {
						if !once && strings.Contains(sc.Text(), tc.ready) {
							once = true
							close(ready)
						}
					}
					_, _ = io.Copy(io.Discard, pr)
				}()
				select {
				case <-ready:
				case err := <-done:
					t.Fatalf("exited before it ran: %v", err)
				case <-time.After(60 * time.Second):
					_ = cmd.Process.Kill()
					t.Fatalf("no %q within 60s", tc.ready)
				}
				if err := cmd.Process.Signal(sig); err != nil {
					t.Fatal(err)
				}
				select {
				case err := <-done:
					code := 0
					var ee *exec.ExitError
					if errors.As(err, &ee) {
						code = ee.ExitCode()
					} else if err != nil {
						t.Fatal(err)
					}
					if code != tc.code {
						t.Errorf("exit %d after %v, want %d", code, sig, tc.code)
					}
				case <-time.After(60 * time.Second):
					_ = cmd.Process.Signal(os.Kill)
					t.Fatalf("still running 60s after %v", sig)
				}
			})
		}
	}
}
