package load

import (
	"os"
	"testing"

	"github.com/tasksim/tasksim/internal/leaktest"
)

// TestMain fails the package's tests if any goroutine outlives them. Run
// with childServerEnv set, the test binary is instead a reference server
// for the benchmarks that measure the generator apart from the server
// (childServer).
func TestMain(m *testing.M) {
	if os.Getenv(childServerEnv) != "" {
		os.Exit(serveChild())
	}
	leaktest.Main(m)
}
