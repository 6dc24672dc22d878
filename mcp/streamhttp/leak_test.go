package streamhttp

import (
	"testing"

	"github.com/tasksim/tasksim/internal/leaktest"
)

// TestMain fails the package's tests if any goroutine outlives them. With
// TASKSIM_TEST_H1=1 the clients that use http.DefaultClient (most of the
// client tests) send through internal/h1's transport, the load
// generator's, instead of net/http's:
//
//	TASKSIM_TEST_H1=1 go test ./mcp/streamhttp
func TestMain(m *testing.M) {
	leaktest.H1FromEnv()
	leaktest.Main(m)
}
