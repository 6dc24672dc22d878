package cli

import (
	"strings"
	"testing"
)

// A --tasks value that names no policy is a usage error naming the flag.
func TestServeTasksFlagBadValue(t *testing.T) {
	code, _, stderr := run(t, "", "serve", "--tasks", "sometimes")
	if code != ExitUsage || !strings.Contains(stderr, "--tasks") {
		t.Errorf("exit %d, stderr %q: want %d naming --tasks", code, stderr, ExitUsage)
	}
}
