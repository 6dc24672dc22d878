package suite

import (
	"context"
	"testing"

	"github.com/tasksim/tasksim/internal/plant"
	"github.com/tasksim/tasksim/internal/refserver"
)

// BenchmarkSuiteReference runs the whole server suite against the
// in-process reference server, over Streamable HTTP (through the
// recording proxy, on loopback) and over stdio (an in-process pipe per
// session), and the client suite against the in-process reference
// client: the time `tasksim check` takes on a correct peer. Most of it is
// the scenarios' own waits (ttl expiry, chunk intervals, pollInterval).
func BenchmarkSuiteReference(b *testing.B) {
	b.Run("server-http", func(b *testing.B) {
		url, _ := refserver.Start(b, nil)
		benchSuite(b, func() (*SuiteResult, error) {
			return RunSuite(context.Background(), Target{URL: url}, &SuiteOptions{TraceDir: b.TempDir()})
		})
	})
	b.Run("server-stdio", func(b *testing.B) {
		benchSuite(b, func() (*SuiteResult, error) {
			return RunSuite(context.Background(), stdioTarget(nil), &SuiteOptions{TraceDir: b.TempDir()})
		})
	})
	for _, tr := range []string{"http", "stdio"} {
		b.Run("client-"+tr, func(b *testing.B) {
			benchSuite(b, func() (*SuiteResult, error) {
				return RunClientSuite(context.Background(), inProcessClient(plant.ClientFlaws{}, tr == "stdio"), &SuiteOptions{TraceDir: b.TempDir()})
			})
		})
	}
}

func benchSuite(b *testing.B, run func() (*SuiteResult, error)) {
	var n int
	for b.Loop() {
		res, err := run()
		if err != nil {
			b.Fatal(err)
		}
		if res.Failed() {
			b.Fatalf("the reference failed:\n%s", describe(res))
		}
		n = len(res.Scenarios)
	}
	b.ReportMetric(float64(n), "scenarios")
}
