package server_test

import (
	"math/rand/v2"
	"slices"
	"testing"
	"testing/synctest"

	"github.com/tasksim/tasksim/mcp"
	"github.com/tasksim/tasksim/mcp/server"
)

// TestSeededTaskIDs: a seeded Options.Rand makes task ids repeat run for
// run, so a simulation can be replayed id for id; another seed gives
// others, and the ids stay UUIDv4.
func TestSeededTaskIDs(t *testing.T) {
	ids := func(seed byte) []string {
		var out []string
		synctest.Test(t, func(t *testing.T) {
			_, hc, url := serveSim(t, &server.Options{Rand: rand.NewChaCha8([32]byte{seed})})
			c := connectVia(t, hc, url, mcp.ClientCapabilities{})
			for range 3 {
				created := result[mcp.CreateTaskResult](c, mcp.MethodToolsCall, callParams(server.ToolInstant, nil, &mcp.TaskParams{}))
				out = append(out, created.Task.TaskID)
			}
		})
		return out
	}
	a, b, other := ids(1), ids(1), ids(2)
	if !slices.Equal(a, b) {
		t.Fatalf("seed 1 gave %v, then %v", a, b)
	}
	if slices.Equal(a, other) {
		t.Fatalf("seeds 1 and 2 gave the same ids %v", a)
	}
	for _, id := range a {
		if len(id) != 36 || id[14] != '4' {
			t.Errorf("id %q is not a UUIDv4", id)
		}
	}
}
