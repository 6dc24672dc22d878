package leaktest

import (
	"fmt"
	"testing"
)

// recordingT is a testing.TB whose failures and cleanups the test sees.
type recordingT struct {
	testing.TB
	errors   []string
	cleanups []func()
}

func (r *recordingT) Helper()                   {}
func (r *recordingT) Cleanup(f func())          { r.cleanups = append(r.cleanups, f) }
func (r *recordingT) Error(args ...any)         { r.errors = append(r.errors, fmt.Sprint(args...)) }
func (r *recordingT) Errorf(f string, a ...any) { r.errors = append(r.errors, fmt.Sprintf(f, a...)) }

func (r *recordingT) end() {
	for i := len(r.cleanups) - 1; i >= 0; i-- {
		r.cleanups[i]()
	}
}

// TestCheck: a goroutine started during the test and still running at its
// end fails it; one that was running before, or that ended, does not.
func TestCheck(t *testing.T) {
	before := make(chan struct{})
	defer close(before)
	go func() { <-before }()

	clean := &recordingT{TB: t}
	Check(clean)
	done := make(chan struct{})
	go func() { close(done) }()
	<-done
	clean.end()
	if len(clean.errors) != 0 {
		t.Errorf("no goroutine of its own left, yet: %q", clean.errors)
	}

	leaky := &recordingT{TB: t}
	Check(leaky)
	stop := make(chan struct{})
	defer close(stop)
	go func() { <-stop }()
	leaky.end()
	if len(leaky.errors) == 0 {
		t.Error("a goroutine of its own still running, yet no failure")
	}
}
