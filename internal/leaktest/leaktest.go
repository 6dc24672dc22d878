package leaktest

import (
	"net/http"
	"os"
	"testing"

	"go.uber.org/goleak"

	"github.com/tasksim/tasksim/internal/h1"
)

// H1Env is the environment variable that makes H1FromEnv switch
// transports: TASKSIM_TEST_H1=1 go test ./mcp/client.
const H1Env = "TASKSIM_TEST_H1"

// Main runs the package's tests and exits, failing them if any goroutine
// outlives them. It is all a TestMain needs to call.
func Main(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// Check fails t if a goroutine started during t outlives it: call it
// first in the test. Goroutines running when Check is called (those of
// other tests, with -count above 1 or t.Parallel) are not t's to answer
// for and are ignored. The check runs in t.Cleanup, after the cleanups
// registered later (servers closed, temporary directories removed).
func Check(t testing.TB) {
	t.Helper()
	ignore := goleak.IgnoreCurrent()
	t.Cleanup(func() { goleak.VerifyNone(t, ignore) })
}

// H1FromEnv makes http.DefaultClient send through internal/h1's
// transport, the load generator's, instead of net/http's, when H1Env is
// "1": the tests of a package whose clients use http.DefaultClient then
// run over the other transport. Call it first in TestMain.
func H1FromEnv() {
	if os.Getenv(H1Env) == "1" {
		http.DefaultClient.Transport = &h1.Transport{}
	}
}
