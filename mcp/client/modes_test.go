package client_test

import (
	"slices"
	"testing"

	"github.com/tasksim/tasksim/mcp/client"
)

// TestModesAreTheCallersOwn: a caller that overwrites the list of modes
// it was given changes nothing the package, or the next caller, sees.
func TestModesAreTheCallersOwn(t *testing.T) {
	want := slices.Clone(client.Modes())
	clear(client.Modes())
	if got := client.Modes(); len(want) == 0 || !slices.Equal(got, want) {
		t.Errorf("Modes after a caller cleared its copy: %v, want %v", got, want)
	}
	if m, err := client.ParseMode(string(client.ModeTask)); err != nil || m != client.ModeTask {
		t.Errorf("ParseMode(task) = %q, %v after a caller cleared its copy", m, err)
	}
}
