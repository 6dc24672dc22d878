// Package childtest helps tests see what the processes tasksim starts
// leave behind: a test's child runs Fork, which starts a process in the
// background and writes its pid to the file named by $PIDS, and WaitGone
// waits for those processes to end.
//
//	pids := filepath.Join(t.TempDir(), "pids")
//	t.Setenv("PIDS", pids)
//	... run `sh -c '`+childtest.Fork+`exec server'` through the code under test ...
//	childtest.WaitGone(t, pids)
package childtest

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Fork is a shell fragment that starts `sleep 1000` in the background,
// detached from the shell's input and output, and appends its pid to the
// file named by $PIDS.
const Fork = `sleep 1000 </dev/null >/dev/null 2>&1 & echo $! >> "$PIDS"; `

// Pids reads the pids written to file; none if it does not exist.
func Pids(t testing.TB, file string) []int {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	var out []int
	for f := range strings.FieldsSeq(string(b)) {
		pid, err := strconv.Atoi(f)
		if err != nil {
			t.Fatalf("%s: %q is not a pid", file, f)
		}
		out = append(out, pid)
	}
	return out
}

// Alive reports whether pid is a process that still runs: a zombie (dead,
// not yet reaped by a parent that may never reap it) is not.
func Alive(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	// pid (comm) STATE ...; comm may hold spaces and parentheses.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 || i+2 >= len(b) {
		return false
	}
	return b[i+2] != 'Z' && b[i+2] != 'X'
}

// NeedProc skips a test where /proc cannot tell whether a process runs.
func NeedProc(t testing.TB) {
	t.Helper()
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("no /proc: cannot see which processes run")
	}
}

// WaitGone waits for the processes whose pids file holds to end, and
// fails the test naming those still running after 10 s (the killing of a
// process group is asynchronous: signals are delivered, not awaited). At
// the end of the test it kills any left, so a failure leaves nothing.
func WaitGone(t testing.TB, file string) {
	t.Helper()
	pids := Pids(t, file)
	t.Cleanup(func() {
		for _, pid := range pids {
			if Alive(pid) {
				if p, err := os.FindProcess(pid); err == nil {
					_ = p.Kill()
				}
			}
		}
	})
	deadline := time.Now().Add(10 * time.Second)
	for {
		var alive []int
		for _, pid := range pids {
			if Alive(pid) {
				alive = append(alive, pid)
			}
		}
		if len(alive) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("processes started by the child outlived it: %v", alive)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// WaitFile waits for file to exist, at most 60 s: the event that a child
// got as far as writing it.
func WaitFile(t testing.TB, file string) {
	t.Helper()
	for range 6000 {
		if _, err := os.Stat(file); err == nil {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("%s never appeared", file)
}
