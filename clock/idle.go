package clock

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"regexp"
	"runtime"
	"runtime/metrics"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// scopeKey is the pprof label that marks the goroutines of a [Confine]d
// call.
const scopeKey = "tasksim.clock.scope"

var (
	scopes     atomic.Uint64
	showLabels sync.Once
)

// Confine returns a context that names a new scope, and labels the calling
// goroutine with it until release is called. The calling goroutine and
// every goroutine started from one of the scope's goroutines, transitively,
// belong to the scope: they inherit its pprof label; nothing else in the
// process carries it. [Idle] with that context, or one derived from it,
// waits for the scope's goroutines only, so what other goroutines of the
// process do cannot change when a simulation's clock moves.
//
// Goroutines that set pprof labels of their own keep the scope's label
// when they derive them from a context of the scope (pprof.Do and
// pprof.WithLabels add to the labels they find). release restores the
// labels of ctx, as pprof.Do does.
//
// Idle tells the scope's goroutines by their label in the runtime's
// tracebacks, which show labels with the GODEBUG setting
// tracebacklabels=1: the first Confine adds it to the process's GODEBUG.
// That is its one effect outside the scope: a traceback of a labelled
// goroutine (a crash, runtime.Stack) names its labels.
func Confine(ctx context.Context) (scoped context.Context, release func()) {
	showLabels.Do(func() {
		v := os.Getenv("GODEBUG")
		if v != "" {
			v += ","
		}
		_ = os.Setenv("GODEBUG", v+"tracebacklabels=1")
	})
	id := strconv.FormatUint(scopes.Add(1), 10)
	scoped = pprof.WithLabels(ctx, pprof.Labels(scopeKey, id))
	if os.Getenv(VerifyEnv) != "" {
		scoped = context.WithValue(scoped, verifyKey{}, &verdicts{})
	}
	pprof.SetGoroutineLabels(scoped)
	return scoped, func() { pprof.SetGoroutineLabels(ctx) }
}

// VerifyEnv names the environment variable that makes the scopes
// [Confine] makes while it is set (to anything) check every verdict of
// [Idle]: after each look that found the scope waiting, Idle waits
// verifyPause of wall time and looks again, and every goroutine of the
// scope must be as it was, in the same place of the same code. A
// goroutine woken or started in between was woken by something outside
// the scope (a wall-clock timer's goroutine, a goroutine started before
// Confine, the network): the clock could have moved before it ran, and a
// simulation is not deterministic. Idle then returns an error wrapping
// [ErrWokenOutside], naming the goroutine, and [Verified] keeps the
// first. It is a diagnostic: each verdict costs verifyPause.
const VerifyEnv = "TASKSIM_CLOCK_VERIFY"

// verifyPause is how long a verifying Idle leaves the outside to wake a
// goroutine of the scope: a wall-clock timer due at once fires within
// about a millisecond here.
const verifyPause = 3 * time.Millisecond

// ErrWokenOutside is wrapped by the error of a verifying Idle (see
// VerifyEnv) whose verdict was wrong.
var ErrWokenOutside = errors.New("clock: a goroutine of the scope was woken from outside it")

type verifyKey struct{}

// verdicts is a verifying scope's record of a wrong verdict.
type verdicts struct {
	mu    sync.Mutex
	wrong error
}

// Verified returns the first wrong verdict of [Idle] in ctx's scope (see
// [VerifyEnv]), or nil: none was, or the scope does not verify. Idle
// returns the error too; Verified is for the callers that ignore it.
func Verified(ctx context.Context) error {
	v, ok := ctx.Value(verifyKey{}).(*verdicts)
	if !ok {
		return nil
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.wrong
}

// ErrNoLabels is returned by [Idle] when the calling goroutine's traceback
// does not show its scope: Idle was called from a goroutine outside the
// scope, or the runtime's traceback format changed.
var ErrNoLabels = errors.New("clock: the caller's traceback does not show its clock.Confine scope")

// ErrNoScope is returned by [Idle] when ctx was not made by [Confine].
var ErrNoScope = errors.New("clock: Idle outside a clock.Confine scope")

// Idle returns once every goroutine of ctx's scope (see [Confine]) but the
// caller waits: on a channel, a lock, a timer of a [Sim] clock or the
// outside world; none is running, ready to run or in a system call. It
// returns ctx's error if ctx ends first.
//
// What decides is a look: one consistent snapshot of every goroutine of
// the process (runtime.Stack, which stops the world), in which each
// goroutine of the scope must be parked. A goroutine just woken or just
// started shows as ready to run there, and one waiting for the runtime
// (the garbage collector, a stop of the world) as not parked, whatever
// the number of Ps, the race detector or the process's other goroutines.
// The scheduler's counts of the whole process (runtime/metrics) only say
// when to look: Idle reads them, yielding while a goroutine is ready to
// run, until no goroutine but the caller runs or is ready to run and none
// was started, several readings in a row; when goroutines outside the
// scope keep the counts up, it looks anyway, after more and more
// readings. The counts alone are not enough: they are read one P at a
// time, and a goroutine changing hands between two Ps can be missed by
// them (measured: about 1 quiet reading in 10,000 on four Ps or under the
// race detector on a loaded machine; docs/sim.md, "When the clock moves").
//
// A goroutine that waits on the wall clock or on a socket counts as
// waiting, so a simulation is only as deterministic as its parts are on
// the Sim clock and on in-memory transports.
func Idle(ctx context.Context) error {
	id, ok := pprof.Label(ctx, scopeKey)
	if !ok {
		return ErrNoScope
	}
	mark := []byte(strconv.Quote(scopeKey) + ": " + strconv.Quote(id))
	bp := dumps.Get().(*[]byte)
	defer dumps.Put(bp)
	var q quiet
	for readings := readingsPerLook; ; readings = min(2*readings, maxReadingsPerLook) {
		for range readings {
			if err := ctx.Err(); err != nil {
				return err
			}
			if q.read() {
				break
			}
		}
		*bp = snapshot(*bp)
		idle, err := scopeIdle(*bp, mark)
		if err == nil && idle {
			if v, ok := ctx.Value(verifyKey{}).(*verdicts); ok {
				err = v.check(*bp, mark)
			}
		}
		if err != nil || idle {
			return err
		}
		// A goroutine of the scope is busy: let it run before reading
		// again.
		q.inRow = 0
		runtime.Gosched()
	}
}

// dumps holds the buffers of Idle's looks.
var dumps = sync.Pool{New: func() any { b := make([]byte, 64<<10); return &b }}

// quietReadings is how many readings in a row must find the process quiet
// before Idle looks: a look that finds the scope busy stopped the world
// for nothing.
const quietReadings = 4

// readingsPerLook is how many times Idle reads the counts before it looks
// although the process is not quiet (goroutines outside the scope are
// busy). After each such look it reads twice as many times, up to
// maxReadingsPerLook: a look stops the world, the scope's work too.
const (
	readingsPerLook    = 1024
	maxReadingsPerLook = 32768
)

// quiet reads the scheduler's counts of the whole process.
type quiet struct {
	samples []metrics.Sample
	created uint64
	inRow   int
}

// read reads the counts once and reports whether the process has been
// quiet quietReadings readings in a row: no goroutine but the caller
// running or ready to run, and none started since the reading before. It
// yields to the scheduler when a goroutine is ready to run, and only
// then: a yield wakes an idle P, whose search for work counts as running.
func (q *quiet) read() bool {
	if q.samples == nil {
		q.samples = []metrics.Sample{
			{Name: "/sched/goroutines/runnable:goroutines"},
			{Name: "/sched/goroutines/running:goroutines"},
			{Name: "/sched/goroutines-created:goroutines"},
		}
		metrics.Read(q.samples)
		q.created = q.samples[2].Value.Uint64()
	}
	metrics.Read(q.samples)
	runnable, running := q.samples[0].Value.Uint64(), q.samples[1].Value.Uint64()
	created := q.samples[2].Value.Uint64()
	if runnable == 0 && running <= 1 && created == q.created {
		q.inRow++
	} else {
		q.inRow = 0
	}
	q.created = created
	if runnable > 0 {
		runtime.Gosched()
	}
	return q.inRow >= quietReadings
}

// snapshot returns every goroutine's traceback, the caller's first, in
// buf when it fits.
func snapshot(buf []byte) []byte {
	for {
		n := runtime.Stack(buf[:cap(buf)], true)
		if n < cap(buf) {
			return buf[:n]
		}
		buf = make([]byte, 2*cap(buf))
	}
}

// scopeIdle reads a traceback of every goroutine (the caller's first) and
// reports whether each goroutine whose header carries mark, the caller
// aside, is parked on something that only another goroutine or a timer
// can end.
func scopeIdle(dump, mark []byte) (bool, error) {
	first := true
	for len(dump) > 0 {
		line, rest, _ := bytes.Cut(dump, []byte("\n"))
		dump = rest
		if !bytes.HasPrefix(line, []byte("goroutine ")) {
			continue
		}
		// goroutine 18 [chan receive, 2 minutes labels:{"k": "v"}]:
		_, status, ok := bytes.Cut(line, []byte(" ["))
		if !ok {
			continue
		}
		if first {
			first = false
			if !bytes.Contains(status, mark) {
				return false, ErrNoLabels
			}
			continue
		}
		if bytes.Contains(status, mark) && !parked(status) {
			return false, nil
		}
	}
	return true, nil
}

// waits are the runtime's wait reasons (runtime/runtime2.go) of a
// goroutine that stays parked until another goroutine, a timer or the
// outside world wakes it. Any other status (running, runnable, syscall,
// preempted, a wait inside the runtime: the garbage collector, a stop of
// the world, "semacquire") is one that ends by itself.
var waits = [][]byte{
	[]byte("chan receive"), []byte("chan send"), []byte("select"),
	[]byte("sync."), []byte("sleep"),
	[]byte("IO wait"),
}

// parked reports whether a traceback header's status is a wait in waits.
func parked(status []byte) bool {
	for _, w := range waits {
		if bytes.HasPrefix(status, w) {
			return true
		}
	}
	return false
}

// afterLook, when set (by a test), runs between a verifying Idle's two
// looks.
var afterLook func()

// check verifies a verdict of idle taken on dump (see VerifyEnv).
func (v *verdicts) check(dump, mark []byte) error {
	before := scopeStacks(dump, mark)
	if afterLook != nil {
		afterLook()
	}
	time.Sleep(verifyPause)
	after := scopeStacks(snapshot(make([]byte, len(dump)+4096)), mark)
	err := compareStacks(before, after)
	if err == nil {
		return nil
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.wrong == nil {
		v.wrong = err
	}
	return err
}

// compareStacks reports the first goroutine of before that changed or
// ended in after, or of after that is new.
func compareStacks(before, after map[string]string) error {
	for _, id := range slices.Sorted(maps.Keys(before)) {
		b := before[id]
		a, ok := after[id]
		switch {
		case !ok:
			return fmt.Errorf("%w: goroutine %s ended (%s)", ErrWokenOutside, id, firstFrame(b))
		case a != b:
			return fmt.Errorf("%w: goroutine %s went from %s to %s", ErrWokenOutside, id, frameOf(b, a), frameOf(a, b))
		}
	}
	for _, id := range slices.Sorted(maps.Keys(after)) {
		if _, ok := before[id]; !ok {
			return fmt.Errorf("%w: goroutine %s started (%s)", ErrWokenOutside, id, firstFrame(after[id]))
		}
	}
	return nil
}

// scopeStacks returns the tracebacks of the goroutines of dump whose
// header carries mark, the caller's (the first) aside, by goroutine id,
// without what changes while a goroutine waits: argument values and
// addresses (a stack the garbage collector moved) and how long it waited.
func scopeStacks(dump, mark []byte) map[string]string {
	stacks := make(map[string]string)
	first := true
	for g := range bytes.SplitSeq(dump, []byte("\n\n")) {
		if first {
			first = false
			continue
		}
		head, _, _ := bytes.Cut(g, []byte("\n"))
		if !bytes.Contains(head, mark) {
			continue
		}
		f := bytes.Fields(head) // goroutine 18 [chan receive, 2 minutes labels:...]:
		if len(f) < 2 {
			continue
		}
		// The last goroutine of a dump ends with a newline, the others
		// not: where a goroutine is in the dump is not where it waits.
		stacks[string(f[1])] = waited.ReplaceAllString(hexes.ReplaceAllString(string(bytes.TrimSpace(g)), "_"), "")
	}
	return stacks
}

var (
	hexes  = regexp.MustCompile(`0x[0-9a-f]+`)
	waited = regexp.MustCompile(`, [0-9]+ minutes`)
)

// frameOf is firstFrame of g, or when g and other differ only below
// their first frame, the status and the first frame that differs.
func frameOf(g, other string) string {
	lines, others := strings.Split(g, "\n"), strings.Split(other, "\n")
	i := 1
	for i < len(lines) && i < len(others) && lines[i] == others[i] {
		i++
	}
	if i < len(lines) && i > 2 {
		if !strings.HasPrefix(lines[i], "\t") {
			i++ // the first line that differs is a call: take its location
		}
		if i >= len(lines) {
			return firstFrame(g)
		}
		return firstFrame(strings.Join([]string{lines[0], lines[i-1], lines[i]}, "\n"))
	}
	return firstFrame(g)
}

// firstFrame is a traceback's status and where its goroutine is: the
// function and the file's line.
func firstFrame(g string) string {
	lines := strings.SplitN(g, "\n", 4)
	head := lines[0]
	if i := strings.Index(head, " labels:"); i >= 0 {
		head = head[:i] + "]"
	}
	if _, st, ok := strings.Cut(head, " ["); ok {
		head = "[" + st
	}
	head = strings.TrimSuffix(head, ":")
	if len(lines) < 3 {
		return head
	}
	fn := lines[1]
	if i := strings.LastIndex(fn, "("); i > 0 {
		fn = fn[:i]
	}
	at, _, _ := strings.Cut(strings.TrimSpace(lines[2]), " ")
	if i := strings.LastIndex(at, "/"); i >= 0 {
		at = at[i+1:]
	}
	return head + " in " + fn + " (" + at + ")"
}
