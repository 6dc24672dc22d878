package client_test

import (
	"net/http"
	"os"
	"testing"

	"go.uber.org/goleak"

	"github.com/tasksim/tasksim/internal/h1"
)

// TestMain fails the package's tests if any goroutine outlives them. With
// TASKSIM_TEST_H1=1 the clients over HTTP send through internal/h1's
// transport, the load generator's, instead of net/http's:
//
//	TASKSIM_TEST_H1=1 go test ./mcp/client
func TestMain(m *testing.M) {
	if os.Getenv("TASKSIM_TEST_H1") == "1" {
		http.DefaultClient.Transport = &h1.Transport{}
	}
	goleak.VerifyTestMain(m)
}
