package toolargs_test

import (
	"slices"
	"testing"

	"github.com/tasksim/tasksim/internal/toolargs"
)

// TestPlaceholdersAreTheCallersOwn: a caller that overwrites the list it
// was given changes nothing the next caller sees.
func TestPlaceholdersAreTheCallersOwn(t *testing.T) {
	want := slices.Clone(toolargs.Placeholders())
	clear(toolargs.Placeholders())
	if got := toolargs.Placeholders(); len(want) == 0 || !slices.Equal(got, want) {
		t.Errorf("Placeholders after a caller cleared its copy: %q, want %q", got, want)
	}
}
