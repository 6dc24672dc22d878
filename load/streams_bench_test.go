package load

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"runtime/pprof"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tasksim/tasksim/internal/refserver"
)

// streamsHeap, when set, is where BenchmarkSSEStreamsHeld writes a heap
// profile taken while every stream is open.
var streamsHeap = flag.String("streams-heap", "", "write a heap profile at the peak of BenchmarkSSEStreamsHeld to this file")

// childServerEnv makes the test binary a reference server (TestMain).
const childServerEnv = "TASKSIM_LOAD_TEST_CHILD_SERVER"

// serveChild is the child side of childServer: a reference server on a
// loopback port whose URL goes to stdout; it stops when stdin closes.
func serveChild() int {
	s, err := refserver.Listen(&refserver.Options{MaxConns: -1})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	fmt.Println(s.URL)
	_, _ = io.Copy(io.Discard, os.Stdin)
	_ = s.Close()
	return 0
}

// childServer runs the test binary as a reference server in its own
// process, so that this process's heap is the generator's alone.
func childServer(b *testing.B) string {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), childServerEnv+"=1")
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		b.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		stdin.Close()
		_ = cmd.Wait()
	})
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		b.Fatalf("child server: %v", err)
	}
	return strings.TrimSpace(line)
}

// BenchmarkSSEStreamsHeld measures the generator's memory per open
// SEP-1905 stream: b.N tasks in --mode sse held open at once against a
// reference server in a child process (each a tools/call SSE stream on its
// own connection, a 32-byte segment every 400 ms), then the live heap
// and goroutine stacks over the idle baseline of the connected sessions,
// divided by b.N. Allocation figures do not depend on the machine's load:
//
//	go test -run '^$' -bench SSEStreamsHeld -benchtime 2000x ./load
//	go test -run '^$' -bench SSEStreamsHeld -benchtime 2000x ./load -args -streams-heap heap.pprof
//
// Sub-benchmarks: h1 is the generator as it runs (internal/h1's
// transport), nethttp the same on net/http's Transport
// (Options.NetHTTP).
func BenchmarkSSEStreamsHeld(b *testing.B) {
	b.Run("h1", func(b *testing.B) { benchStreamsHeld(b, false) })
	b.Run("nethttp", func(b *testing.B) { benchStreamsHeld(b, true) })
}

func benchStreamsHeld(b *testing.B, netHTTP bool) {
	url := childServer(b)
	if *streamsHeap != "" {
		defer func(rate int) { runtime.MemProfileRate = rate }(runtime.MemProfileRate)
		runtime.MemProfileRate = 4096 // finer than the default, cheap enough not to slow the streams
	}
	n := b.N
	cfg := Config{
		Modes:       []ModeSpec{{Name: KindSSE, Kind: KindSSE}},
		Rate:        1,
		Sessions:    8,
		MaxInFlight: n + 1,
		Shape:       Shape{Chunks: FixedInt(1000), ChunkSize: FixedInt(32), Interval: UniformDuration(400*time.Millisecond, 400*time.Millisecond)},
	}.WithDefaults()
	r := newRunner(cfg, Options{Targets: []Target{{URL: url}}, NetHTTP: netHTTP})
	defer r.close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if err := r.connect(ctx); err != nil {
		b.Fatal(err)
	}
	r.start = time.Now()
	m := r.modes[0]
	heap0, stack0, goBefore := liveBytes()

	b.ResetTimer()
	var tasks sync.WaitGroup
	for k := range n {
		tasks.Go(func() { r.runTask(ctx, m, int64(k), time.Now(), false) })
	}
	// Every stream is open and has carried segments once each task has
	// had twelve on average, the middle of the
	// 10 s tasks of 25 chunks of docs/performance.md (a benchmark may poll:
	// it asserts nothing).
	for m.inFlight.Load() < int64(n) || m.segments.Load() < int64(12*n) {
		time.Sleep(20 * time.Millisecond)
	}
	b.StopTimer()
	heap1, stack1, goAfter := liveBytes()
	if *streamsHeap != "" {
		name := *streamsHeap
		if netHTTP {
			name += ".nethttp"
		}
		f, err := os.Create(name)
		if err != nil {
			b.Fatal(err)
		}
		if err := pprof.Lookup("heap").WriteTo(f, 0); err != nil {
			b.Fatal(err)
		}
		f.Close()
		if g, err := os.Create(name + ".goroutines"); err == nil {
			_ = pprof.Lookup("goroutine").WriteTo(g, 1)
			g.Close()
		}
	}
	b.ReportMetric(float64(heap1+stack1-heap0-stack0)/float64(n), "bytes/stream")
	b.ReportMetric(float64(heap1-heap0)/float64(n), "heap-bytes/stream")
	b.ReportMetric(float64(stack1-stack0)/float64(n), "stack-bytes/stream")
	b.ReportMetric(float64(goAfter-goBefore)/float64(n), "goroutines/stream")
	cancel()
	tasks.Wait()
}

// liveBytes returns, after a collection, the bytes of live heap objects
// and of goroutine stacks, and the number of goroutines.
func liveBytes() (heap, stack uint64, goroutines int) {
	for range 4 {
		runtime.GC()
	}
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc, ms.StackInuse, runtime.NumGoroutine()
}
