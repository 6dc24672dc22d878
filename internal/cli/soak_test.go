package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tasksim/tasksim/internal/refserver"
	"github.com/tasksim/tasksim/load"
	"github.com/tasksim/tasksim/mcp"
	"github.com/tasksim/tasksim/mcp/server"
	"github.com/tasksim/tasksim/mcp/streamhttp"
)

// The soak benchmark (Hardening, items 1-4): tasksim load, every mode,
// against the reference server in this process while abusive clients
// run beside it, then a cool-down until the server holds nothing. It is
// bounded in time (-soak, default 2 min, plus at most soakCooldown) and
// every abusive client is bounded in count. Run it alone:
//
//	go test -run '^$' -bench BenchmarkSoak -benchtime 1x -timeout 30m ./internal/cli -soak 2m
//	go test -run '^$' -bench BenchmarkSoak -benchtime 1x -timeout 30m ./internal/cli -soak 10m
//
// The heap measured is this process's: server, load generator and
// abusers together, an upper bound on the server's.
var soakDuration = flag.Duration("soak", 2*time.Minute, "how long BenchmarkSoak's load runs")

const (
	soakCooldown   = 3 * time.Minute // longest wait for the server to drain after the run
	soakIdle       = 20 * time.Second
	soakTTL        = 20 * time.Second
	soakMaxSession = 500
	// Abusers, each bounded.
	soakNeverReading = 16  // streaming answers held open, never read
	soakSlowBodies   = 300 // connections trickling a body
	soakSessionRate  = 40  // sessions opened per second, one task each, never deleted
)

// soakBudget is what the server may hold with the soak's options, by the
// documented defaults: task results (MaxServerBytes), replay buffers
// (MaxReplayBytes) and ~5 kB per session.
const soakBudget = server.DefaultMaxServerBytes + streamhttp.DefaultMaxReplayBytes + soakMaxSession*5<<10

type soakCounts struct {
	neverReading, sessions, sessionsRefused, slowBodies, slowCut, oversized atomic.Int64
}

func BenchmarkSoak(b *testing.B) {
	if b.N > 1 {
		b.Skip("run with -benchtime 1x")
	}
	baseHeap, baseG := settle()
	s, err := refserver.Listen(&refserver.Options{
		Server: &server.Options{DefaultTTL: soakTTL},
		HTTP: &streamhttp.Options{SessionIdleTimeout: soakIdle, MaxSessions: soakMaxSession,
			Logger: slog.New(slog.DiscardHandler)},
	})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()

	var peak atomic.Uint64
	stopSampling := sampleHeap(&peak)
	ctx, cancel := context.WithTimeout(context.Background(), *soakDuration)
	defer cancel()
	var counts soakCounts
	var wg sync.WaitGroup
	for _, abuse := range []func(context.Context, string, *soakCounts){neverReading, sessionPerTask, slowBodies, oversized} {
		wg.Go(func() { abuse(ctx, s.URL, &counts) })
	}

	dir := b.TempDir()
	jsonFile := filepath.Join(dir, "soak.json")
	var out, errb bytes.Buffer
	b.ResetTimer()
	code := Main(&State{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb, Getenv: func(string) string { return "" },
		Context: context.Background(),
		Args: []string{"load", "--server", s.URL, "--mode", "poll:500ms,sse,partial,immediate", "--rate", "10",
			"--duration", soakDuration.String(), "--chunks", "5..20", "--chunk-size", "64..4096", "--interval", "20ms..200ms",
			"--sessions", "4", "--max-lag", "1h", "--json", jsonFile}})
	b.StopTimer()
	cancel()
	wg.Wait()
	during := s.Transport().Stats()
	stopSampling()
	if code != ExitOK {
		b.Errorf("load exit %d:\n%s\n%s", code, out.String(), errb.String())
	}
	var res load.Result
	if raw, err := os.ReadFile(jsonFile); err == nil {
		_ = json.Unmarshal(raw, &res)
	}
	for _, m := range res.Modes {
		rate := 0.0
		if m.Started > 0 {
			rate = float64(m.Failed) / float64(m.Started)
		}
		b.Logf("%-11s started %5d completed %5d failed %3d (%.2f%%) ttr p50 %7.1f ms p99 %7.1f ms",
			m.Name, m.Started, m.Completed, m.Failed, 100*rate, m.TTR.P50, m.TTR.P99)
		b.ReportMetric(100*rate, m.Name+"-fail-%")
		b.ReportMetric(m.TTR.P99, m.Name+"-p99-ms")
	}
	b.Logf("abusers: %d never-read streams, %d sessions opened (%d refused 503), %d slow bodies (%d cut by the server), %d oversized calls refused",
		counts.neverReading.Load(), counts.sessions.Load(), counts.sessionsRefused.Load(), counts.slowBodies.Load(), counts.slowCut.Load(), counts.oversized.Load())
	b.Logf("at the end of the load: %d sessions, %d replay bytes; server %+v", during.Sessions, during.ReplayBytes, s.Server.Stats())
	b.Logf("peak heap in use %d MiB (budget %d MiB); baseline %d MiB, %d goroutines", peak.Load()>>20, soakBudget>>20, baseHeap>>20, baseG)
	b.ReportMetric(float64(peak.Load())/(1<<20), "peak-heap-MiB")
	if peak.Load() > soakBudget {
		b.Errorf("peak heap %d MiB over the budget %d MiB", peak.Load()>>20, soakBudget>>20)
	}

	// Cool-down: abusive sessions end when idle, tasks at their ttl.
	deadline := time.Now().Add(soakCooldown)
	start := time.Now()
	for {
		st, tr := s.Server.Stats(), s.Transport().Stats()
		if st.Sessions == 0 && st.Tasks == 0 && st.Bytes == 0 && tr.Sessions == 0 && tr.ReplayBytes == 0 {
			break
		}
		if time.Now().After(deadline) {
			b.Errorf("after %v the server still holds %+v, %+v", soakCooldown, st, tr)
			break
		}
		time.Sleep(time.Second) // a benchmark waiting on wall-clock expiry, not a test
	}
	s.Close()
	http.DefaultClient.CloseIdleConnections()
	heap, g := settle()
	b.Logf("drained in %v; after: heap in use %d MiB (baseline %d), %d goroutines (baseline %d)",
		time.Since(start).Round(time.Second), heap>>20, baseHeap>>20, g, baseG)
	b.ReportMetric(float64(heap)/(1<<20), "after-heap-MiB")
	b.ReportMetric(float64(g-baseG), "after-goroutines-delta")
	if heap > baseHeap+16<<20 || g > baseG+2 {
		b.Errorf("after the run: heap %d MiB (baseline %d), %d goroutines (baseline %d)", heap>>20, baseHeap>>20, g, baseG)
	}
}

// settle collects garbage until the goroutine count is stable and returns
// the heap in use and the goroutines.
func settle() (heap uint64, goroutines int) {
	prev := -1
	for range 50 {
		runtime.GC()
		g := runtime.NumGoroutine()
		if g == prev {
			break
		}
		prev = g
		time.Sleep(100 * time.Millisecond)
	}
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapInuse, runtime.NumGoroutine()
}

// sampleHeap records the peak of HeapInuse+StackInuse every 200 ms.
func sampleHeap(peak *atomic.Uint64) (stop func()) {
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		t := time.NewTicker(200 * time.Millisecond)
		defer t.Stop()
		for {
			var ms runtime.MemStats
			runtime.ReadMemStats(&ms)
			if v := ms.HeapInuse + ms.StackInuse; v > peak.Load() {
				peak.Store(v)
			}
			select {
			case <-done:
				return
			case <-t.C:
			}
		}
	}()
	return func() { close(done); <-finished }
}

// soakClient is the smallest client an abuser needs.
type soakClient struct {
	url, sid string
	hc       *http.Client
}

func (c *soakClient) post(ctx context.Context, body string) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.url, strings.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if c.sid != "" {
		req.Header.Set("Mcp-Session-Id", c.sid)
		req.Header.Set("Mcp-Protocol-Version", mcp.LatestProtocolVersion)
	}
	return c.hc.Do(req)
}

func (c *soakClient) initialize(ctx context.Context) (int, error) {
	resp, err := c.post(ctx, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"abuser","version":"1"}}}`)
	if err != nil {
		return 0, err
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	c.sid = resp.Header.Get("Mcp-Session-Id")
	return resp.StatusCode, nil
}

func callBody(id int, args string, task string) string {
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"slow_text","arguments":%s%s}}`, id, args, task)
}

// neverReading keeps soakNeverReading streaming answers of 12 MB each
// open and never reads them, replacing one every 2 s.
func neverReading(ctx context.Context, url string, n *soakCounts) {
	c := &soakClient{url: url, hc: &http.Client{Transport: &http.Transport{MaxConnsPerHost: 0}}}
	defer c.hc.CloseIdleConnections()
	if _, err := c.initialize(ctx); err != nil {
		return
	}
	var open []*http.Response
	defer func() {
		for _, r := range open {
			r.Body.Close()
		}
	}()
	tick := time.NewTicker(2 * time.Second)
	defer tick.Stop()
	for id := 2; ctx.Err() == nil; id++ {
		resp, err := c.post(ctx, callBody(id, `{"chunks":190,"chunkSize":65536,"intervalMs":5}`, `,"task":{"responseModes":["streaming"]}`))
		if err == nil {
			n.neverReading.Add(1)
			open = append(open, resp)
			if len(open) > soakNeverReading {
				open[0].Body.Close()
				open = open[1:]
			}
		}
		select {
		case <-ctx.Done():
		case <-tick.C:
		}
	}
}

// sessionPerTask opens soakSessionRate sessions a second, starts one task
// in each and never deletes them.
func sessionPerTask(ctx context.Context, url string, n *soakCounts) {
	hc := &http.Client{}
	defer hc.CloseIdleConnections()
	tick := time.NewTicker(time.Second / soakSessionRate)
	defer tick.Stop()
	for ctx.Err() == nil {
		c := &soakClient{url: url, hc: hc}
		if st, err := c.initialize(ctx); err == nil {
			if st == http.StatusServiceUnavailable {
				n.sessionsRefused.Add(1)
			} else if st == http.StatusOK {
				n.sessions.Add(1)
				if resp, err := c.post(ctx, callBody(2, `{"chunks":4,"chunkSize":1024,"intervalMs":10}`, `,"task":{}`)); err == nil {
					io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
				}
			}
		}
		select {
		case <-ctx.Done():
		case <-tick.C:
		}
	}
}

// slowBodies keeps soakSlowBodies connections sending a POST whose body
// never completes; the server cuts them at its body timeout, and they
// are opened again.
func slowBodies(ctx context.Context, url string, n *soakCounts) {
	addr := strings.TrimSuffix(strings.TrimPrefix(url, "http://"), "/mcp")
	head := "POST /mcp HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n" +
		"Accept: application/json, text/event-stream\r\nContent-Length: 100000\r\n\r\n{\"jsonrpc\":"
	var wg sync.WaitGroup
	for range soakSlowBodies {
		wg.Go(func() {
			for ctx.Err() == nil {
				var d net.Dialer
				c, err := d.DialContext(ctx, "tcp", addr)
				if err != nil {
					return
				}
				n.slowBodies.Add(1)
				stop := context.AfterFunc(ctx, func() { c.Close() })
				if _, err := io.WriteString(c, head); err == nil {
					// Wait for the server to give up on us.
					if _, err := io.Copy(io.Discard, c); err == nil && ctx.Err() == nil {
						n.slowCut.Add(1)
					}
				}
				stop()
				c.Close()
			}
		})
	}
	wg.Wait()
}

// oversized sends the out-of-memory call once a second.
func oversized(ctx context.Context, url string, n *soakCounts) {
	c := &soakClient{url: url, hc: &http.Client{}}
	defer c.hc.CloseIdleConnections()
	if _, err := c.initialize(ctx); err != nil {
		return
	}
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for id := 2; ctx.Err() == nil; id++ {
		if resp, err := c.post(ctx, callBody(id, `{"chunks":1000000,"chunkSize":1048576,"intervalMs":0}`, `,"task":{}`)); err == nil {
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if bytes.Contains(b, []byte(`-32602`)) {
				n.oversized.Add(1)
			}
		}
		select {
		case <-ctx.Done():
		case <-tick.C:
		}
	}
}
