package suite

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/tasksim/tasksim/check"
	"github.com/tasksim/tasksim/mcp"
	"github.com/tasksim/tasksim/mcp/client"
	"github.com/tasksim/tasksim/mcp/server"
	"github.com/tasksim/tasksim/mcp/stdio"
)

// TestScenarioBound: a scenario ends at most 2×closeGrace past its
// timeout (in the bubble's simulated time) and FAILs saying why, even
// when what it waits on ignores every context: its own code (Run), or
// the close of a session whose connection never ends. The parts left
// behind end when the test releases them.
func TestScenarioBound(t *testing.T) {
	const timeout = 3 * time.Second
	cases := []struct {
		name string
		// hangClose makes every connection's Close wait for release.
		hangClose bool
		run       func(e *Env, release <-chan struct{}) error
		why       string
	}{
		{"run ignores its context", false, func(e *Env, release <-chan struct{}) error {
			<-release
			return nil
		}, "did not return"},
		{"a session's close never ends", true, func(e *Env, release <-chan struct{}) error {
			_, err := e.Connect(&client.Options{NoModes: true})
			return err
		}, "closing the scenario's sessions did not end"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			synctest.Test(t, func(t *testing.T) {
				release := make(chan struct{})
				defer close(release)
				target := Target{Dial: func() mcp.Transport {
					inner := stdio.Pipe(server.New(nil), nil)
					if !tc.hangClose {
						return inner
					}
					return mcp.DecorateTransport(inner, func(c mcp.Conn) mcp.Conn {
						return mcp.Decorate(c, mcp.ConnFuncs{Close: func(inner mcp.Conn) error {
							<-release
							return inner.Close()
						}})
					})
				}}
				sc := &Scenario{Name: "bound", Rules: []string{"TASK-RESULT"}, Run: func(e *Env) error { return tc.run(e, release) }}
				o := &SuiteOptions{Timeout: timeout, Seed: 1}
				r := runScenario(context.Background(), sc, target, o, &probeInfo{}, toolset{}, filepath.Join(dir, "bound.trace"))
				if r.Status != check.Fail || !strings.Contains(r.Why, tc.why) {
					t.Errorf("%s %q; want FAIL, %q", r.Status, r.Why, tc.why)
				}
				if max := timeout + 2*closeGrace; r.Duration > max {
					t.Errorf("the scenario took %s (simulated), want at most %s", r.Duration, max)
				}
			})
		})
	}
}
