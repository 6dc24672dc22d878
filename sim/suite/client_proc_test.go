package suite

import (
	"context"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tasksim/tasksim/check"
	"github.com/tasksim/tasksim/internal/child/childtest"
	"github.com/tasksim/tasksim/internal/plant"
	"github.com/tasksim/tasksim/sim/replay"
	"github.com/tasksim/tasksim/traces"
)

// TestClientSuiteFloodingClientBounded: a client that prints 400 MB on
// stdout fails its scenario with that reason, and the suite's memory does
// not grow with what it printed: the output is kept up to
// MaxClientOutput, and the client is stopped there.
func TestClientSuiteFloodingClientBounded(t *testing.T) {
	const flood = 400 << 20
	target := ClientTarget{Command: []string{"sh", "-c", "head -c " + strconv.Itoa(flood) + " /dev/zero", "client"}}
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	res, err := RunClientSuite(context.Background(), target, &SuiteOptions{Scenarios: []string{"client-duplicates"}, Timeout: 5 * time.Minute})
	runtime.ReadMemStats(&after)
	if err != nil {
		t.Fatal(err)
	}
	// Everything the run allocated, which bounds its heap: the 16 MiB kept
	// and the run's own, far from the 400 MB (and more) that keeping the
	// whole output takes.
	if grew := after.TotalAlloc - before.TotalAlloc; grew > 160<<20 {
		t.Errorf("the run allocated %d MiB for a client printing %d MiB: the output is not bounded", grew>>20, flood>>20)
	}
	r := res.Scenarios[0]
	if r.Status != check.Fail || !strings.Contains(r.Why, "printed more than 16 MiB on stdout") {
		t.Errorf("%s %q: want FAIL saying the client printed too much", r.Status, r.Why)
	}
}

// TestReplayClientFloodingClientBounded: replay --client-cmd runs its
// client as check does: a client printing 400 MB is stopped at
// MaxClientOutput, and the replay's memory does not grow with it.
func TestReplayClientFloodingClientBounded(t *testing.T) {
	const flood = 400 << 20
	dir := t.TempDir()
	if _, err := RunClientSuite(context.Background(), inProcessClient(plant.ClientFlaws{}, false), &SuiteOptions{Scenarios: []string{"client-duplicates"}, TraceDir: dir}); err != nil {
		t.Fatal(err)
	}
	src, err := traces.Open(filepath.Join(dir, "client-duplicates.trace"))
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, err = replay.ReplayClient(context.Background(), src, []string{"sh", "-c", "head -c " + strconv.Itoa(flood) + " /dev/zero", "client"}, &replay.ReplayOptions{Record: filepath.Join(dir, "replay.trace")})
	runtime.ReadMemStats(&after)
	if grew := after.TotalAlloc - before.TotalAlloc; grew > 160<<20 {
		t.Errorf("the replay allocated %d MiB for a client printing %d MiB: the output is not bounded", grew>>20, flood>>20)
	}
	if err == nil || !strings.Contains(err.Error(), "printed more than 16 MiB on stdout") {
		t.Errorf("replay: %v; want the client stopped for printing too much", err)
	}
}

// TestClientSuiteEndsWhatTheClientStarted: what a client under test
// starts and leaves running ends with its scenario, whether the client
// exits by itself or is stopped (here by the run's interrupt, while it
// waits for its child).
func TestClientSuiteEndsWhatTheClientStarted(t *testing.T) {
	childtest.NeedProc(t)
	for _, tc := range []struct{ name, script string }{
		{"exits", childtest.Fork + "exit 0"},
		{"hangs", childtest.Fork + "wait"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pids := filepath.Join(t.TempDir(), "pids")
			t.Setenv("PIDS", pids)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			done := make(chan struct{})
			go func() {
				defer close(done)
				RunClientSuite(ctx, ClientTarget{Command: []string{"sh", "-c", tc.script, "client"}}, &SuiteOptions{Scenarios: []string{"client-duplicates"}, Timeout: 5 * time.Minute})
			}()
			if tc.name == "hangs" {
				childtest.WaitFile(t, pids)
				cancel()
			}
			<-done
			if len(childtest.Pids(t, pids)) == 0 {
				t.Fatal("the client started nothing")
			}
			childtest.WaitGone(t, pids)
		})
	}
}

// TestClientSuiteInterrupted: a run whose context ends reports the
// scenarios that finished, Interrupted, and names the one cut short and
// those not begun; none of them is judged.
func TestClientSuiteInterrupted(t *testing.T) {
	mark := filepath.Join(t.TempDir(), "mark")
	t.Setenv("MARK", mark)
	// The first scenario's client exits at once (never connects: FAIL);
	// the second's hangs, and the run is interrupted then.
	script := `case "$TASKSIM_SCENARIO" in client-duplicates) exit 0;; esac; touch "$MARK"; exec sleep 1000`
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	type out struct {
		res *SuiteResult
		err error
	}
	got := make(chan out, 1)
	go func() {
		res, err := RunClientSuite(ctx, ClientTarget{Command: []string{"sh", "-c", script, "client"}}, &SuiteOptions{Timeout: 5 * time.Minute})
		got <- out{res, err}
	}()
	childtest.WaitFile(t, mark)
	cancel()
	o := <-got
	if o.err != nil {
		t.Fatal(o.err)
	}
	if !o.res.Interrupted || len(o.res.Scenarios) != 1 || o.res.Scenarios[0].Name != "client-duplicates" {
		t.Fatalf("interrupted %v, scenarios %v: want interrupted after client-duplicates", o.res.Interrupted, o.res.Scenarios)
	}
	all := ClientScenarios()
	if len(o.res.NotRun) != len(all)-1 || o.res.NotRun[0] != all[1].Name {
		t.Errorf("not run %v, want every scenario after %s", o.res.NotRun, all[0].Name)
	}
}
